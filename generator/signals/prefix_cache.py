"""The prefix cache's hit ratio (0–1): prompt tokens found in the cache over tokens looked up
(two counters, the preset's only: no ``spec.metrics`` key), or a hit-rate gauge.

Recorded as ``<groupBy>:model_prefix_cache_hits:ratio_rate5m`` (counters) or ``…:avg`` (gauge,
averaged over pods); a healthy cache finds half its tokens, or more above a high ``min``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator import naming
from generator.parts.common import record_rule
from generator.parts.guard_inputs import SERVICE_KEYS, SignalInput, Source, targets_up
from generator.parts.series_parts import labels_of
from generator.plan_types import PrefixCachePlan
from generator.promql import go_float, sum_rate_any
from generator.signals.base import RATE_WINDOW, Needs, Scope, Signal, gauge, gauge_expr

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.promtool_series import Series
    from generator.plan import ServicePlan

KEY = "prefix_cache"


def resolve(scope: Scope) -> PrefixCachePlan | None:
    """The preset's hit and query counters (each a tuple of one metric's names across
    releases) or its gauge, on the service's matchers."""
    cache = scope.preset.prefix_cache
    if cache is None:
        return None
    g = gauge(cache.gauge, None, scope.base) if cache.gauge is not None else None
    return PrefixCachePlan(scope.base, cache.hits, cache.queries, g)


def reads(cache: PrefixCachePlan) -> tuple[str, ...]:
    return cache.names


def record_name(plan: ServicePlan) -> str:
    """Name of the hit-ratio record: ``…:ratio_rate5m`` from counters, ``…:avg`` (over pods)
    from a gauge."""
    cache = plan.prefix_cache
    operations = "avg" if cache is not None and cache.gauge is not None else "ratio_rate5m"
    return naming.record(plan.group_by, naming.PREFIX_CACHE_HITS, operations)


def ratio(plan: ServicePlan, cache: PrefixCachePlan) -> str:
    """Share (0–1) of looked-up prompt tokens found in the prefix cache: hits / queries, both
    summed 5m rates (absent while nothing is looked up: never a division by zero), or the
    hit-rate gauge averaged over pods."""
    group = plan.agg_labels
    if cache.gauge is not None:
        return gauge_expr(cache.gauge, "avg", group)
    hits = sum_rate_any(cache.hits, cache.matchers, RATE_WINDOW, group)
    queries = sum_rate_any(cache.queries, cache.matchers, RATE_WINDOW, group)
    return f"{hits} / ({queries} > 0)"


def records(plan: ServicePlan) -> list[Rule]:
    """The hit ratio, none without a prefix cache."""
    if plan.prefix_cache is None:
        return []
    return [record_rule(plan, record_name(plan), ratio(plan, plan.prefix_cache))]


def series(plan: ServicePlan, s: Series, hit: float, length: int, tokens: float = 1000.0) -> None:
    """The prefix cache finding ``hit`` of looked-up tokens: ``tokens`` looked up a step
    (counters; 0 for an idle service) or the hit-rate gauge at ``hit`` for ``length`` steps."""
    cache = plan.prefix_cache
    if cache is None:
        return
    if cache.gauge is not None:
        labels = labels_of(plan, cache.gauge.matchers)
        s.gauge(cache.gauge.name, labels, f"{go_float(hit)}+0x{length}")
        return
    labels = labels_of(plan, cache.matchers)
    s.counters[(cache.hits[0], tuple(sorted(labels.items())))] = tokens * hit
    s.counters[(cache.queries[0], tuple(sorted(labels.items())))] = tokens


def healthy(plan: ServicePlan, s: Series, length: int) -> None:
    """Half the looked-up tokens found, or halfway between the alert's ``min`` and all."""
    alert = plan.alerts.get("prefix_cache")
    least = float(alert.params["min"]) if alert is not None else 0.0
    series(plan, s, max(0.5, (1 + least) / 2), length)


def guard(plan: ServicePlan, readers: tuple[str, ...]) -> list[SignalInput]:
    """The hit and query counters, or the hit-rate gauge."""
    cache = plan.prefix_cache
    if cache is None:
        return []
    names = [cache.gauge.names] if cache.gauge else [cache.hits, cache.queries]
    matchers = cache.gauge.matchers if cache.gauge else cache.matchers
    return [
        SignalInput(
            "prefixCache",
            names[0][0],
            SERVICE_KEYS,
            tuple(tuple(Source(n, matchers) for n in group) for group in names),
            (targets_up(plan),),
            readers,
            remedy="A server upgrade may have renamed it: compare spec.serverVersion with what "
            "the server exposes (obsgen verify lists it).",
        )
    ]


SIGNAL = Signal(
    KEY,
    None,
    resolve,
    reads,
    records,
    healthy,
    needs=Needs("prefixCache", KEY, "prefix-cache hit ratio", declarable=False),
    guard=guard,
)
