"""``spec.alerts.prefixCache``: ``ModelPrefixCacheHitRatioLow``, the share of looked-up prompt
tokens found in the prefix cache below ``min`` while requests flow.

Reads the hit-ratio record :func:`generator.builders.service_rules.traffic_records` writes
(:func:`generator.signals.prefix_cache.record_name`) from the preset's counters or gauge (no ``spec.metrics`` key);
page text in ``templates/runbooks/ModelPrefixCacheHitRatioLow.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families.base import Family, Role
from generator.parts.common import alert_rule, recorded
from generator.parts.grafana_json import PanelDef, Query
from generator.parts.panel_parts import alert_steps, legend, panel_runbook, rec
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    after_for,
    agg_of,
    expected_alert,
    family_case,
    fire_and_quiet,
)
from generator.signals import prefix_cache as signal
from generator.signals.healthy import healthy
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "prefix_cache"
ALERT = naming.ALERT_PREFIX_CACHE


@dataclass(frozen=True)
class Params:
    """``min``: the hit ratio (0–1) under which the service alerts while requests flow."""

    min: float


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``prefix_cache`` alert."""
    return Params(min=float(alert.params["min"]))


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelPrefixCacheHitRatioLow`` while the hit ratio stays under ``min``; from a gauge
    (which keeps its last value when idle) only while requests flow."""
    alert = plan.alerts.get(KEY)
    cache = plan.prefix_cache
    if alert is None or cache is None:
        return []
    ratio = recorded(plan, signal.record_name(plan))
    least = decimal_str(params(alert).min)
    low = f"{ratio} < {least}"
    if cache.gauge is not None:
        # A gauge keeps its last value when idle: only while requests flow. The counters'
        # ratio exists only while prompt tokens are looked up, which is traffic.
        on = ", ".join(plan.agg_labels)
        requests = recorded(plan, naming.record(plan.group_by, naming.REQUESTS, "rate5m"))
        low += f" and on ({on}) {requests} > 0"
    metric = cache.gauge.name if cache.gauge else f"{cache.hits[0]} / {cache.queries[0]}"
    return [alert_rule(plan, ALERT, low, alert.for_ms, alert.severity, min=least, metric=metric)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Half of ``min`` while requests flow fires; a healthy 50 % and an idle service do not."""
    cache = plan.prefix_cache
    if KEY not in plan.alerts or cache is None:
        return []
    poor = params(plan.alerts[KEY]).min / 2
    base = [Klass(BASE_PER_MIN)]
    fire = healthy(plan, base)
    signal.series(plan, fire, poor, 60)
    matchers = cache.gauge.matchers if cache.gauge else cache.matchers
    labels = {**agg_of(plan, matchers), naming.SERVICE: plan.name}
    expected = [expected_alert(rules(plan)[0], labels, poor)]
    groups = fire_and_quiet(plan, KEY, ALERT, fire, healthy(plan, base), expected)
    idle = healthy(plan, [])
    signal.series(plan, idle, 0, 60, tokens=0)
    at = after_for(plan, KEY)
    groups.append(family_case(plan, f"{ALERT}: idle, silent", idle, ALERT, [], at))
    return groups


def panels(plan: ServicePlan) -> list[PanelDef]:
    """The hit ratio, the alert's ``min`` drawn (red under it)."""
    if plan.prefix_cache is None:
        return []
    record = signal.record_name(plan)
    return [
        PanelDef(
            title="Prefix-cache hit ratio",
            key="prefix-cache",
            description=f"Share (0–1) of looked-up prompt tokens found in the prefix cache, "
            f"from {record} ({', '.join(plan.prefix_cache.names)}); "
            f"{ALERT} fires below the line while requests flow.",
            kind="timeseries",
            queries=(Query(rec(plan, record), legend(plan, "hit ratio")),),
            unit="percentunit",
            min_value=0,
            max_value=1,
            steps=alert_steps(plan, KEY, "min", below=True),
            runbook=panel_runbook(plan, ALERT),
            width=12,
        )
    ]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``prefix_cache``: the hit-ratio record (None without a prefix cache)."""
    cached = plan.prefix_cache is not None
    return {"prefix_cache": record(signal.record_name(plan)) if cached else None}


FAMILY = Family(
    key=KEY,
    spec_field="prefixCache",
    alerts=(ALERT,),
    for_ms=1_800_000,
    severity="warning",
    params={"min": 0.1},
    role=Role.SYMPTOM,
    group="traffic",
    rules=rules,
    cases=cases,
    signals=("prefix_cache",),
    row="saturation",
    rank=5,
    panels=panels,
    runbook_queries=runbook_queries,
)
