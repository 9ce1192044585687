"""What one signal is: :class:`Signal`, everything obsgen knows about one series a server
exports (a gauge, a counter, a ratio of counters), from its preset attribute to its healthy
test series. Families read signals; a signal knows no alert.

Where a signal ends and a family begins: docs/architecture.md, "Signals and families".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.parts.common import record_rule
from generator.parts.guard_inputs import (
    SERVICE_KEYS,
    SignalInput,
    Source,
    server_remedy,
    targets_up,
)
from generator.parts.series_parts import labels_of
from generator.plan_types import CounterPlan, GaugePlan, _merge
from generator.promql import Matcher, any_of, by, selector
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.promtool_series import Series
    from generator.plan import ServicePlan
    from generator.presets import GaugeDef, Preset
    from generator.spec import MetricOverride, Metrics

RATE_WINDOW = "5m"
RATE_WINDOW_SECONDS = 300


@dataclass(frozen=True)
class Scope:
    """What a signal resolves from.

    Attributes:
        preset: the server's preset, ``spec.metrics.prefix`` already applied.
        metrics: ``spec.metrics`` (overrides by key).
        base: the service's own matchers (``spec.selector``).
        decode: ``base`` scoped to the decode role (``spec.roles``; ``base`` without roles).
    """

    preset: Preset
    metrics: Metrics
    base: tuple[Matcher, ...]
    decode: tuple[Matcher, ...]


@dataclass(frozen=True)
class Needs:
    """The series an alert family exists for: without it (neither the server's preset nor
    ``spec.metrics.<metric>.name`` has it) the alert is left out, with a warning when enabled.

    Attributes:
        metric: the ``spec.metrics`` key (``kvCacheUsage``).
        attribute: the field of the preset and of ``spec.metrics`` (``kv_cache_usage``).
        kind: what the series is, for the warning (``gauge``, ``counter``).
        declarable: whether ``spec.metrics`` can name it; if not, only a preset supplies it.
    """

    metric: str
    attribute: str
    kind: str
    declarable: bool = True

    def left_out(self, alert: str, server: str) -> str:
        """The warning when ``alert`` is enabled but server ``server`` has no such series."""
        if not self.declarable:
            return (
                f"{alert} alert left out: the {server} preset reads no {self.kind} "
                "(docs/spec.md, Server presets)"
            )
        return (
            f"{alert} alert left out: server {server} exports no {self.metric} {self.kind}; "
            f"declare spec.metrics.{self.metric}.name to enable it"
        )


@dataclass(frozen=True)
class Presence:
    """A series ``obsgen verify`` expects on the running server: ``what`` (its row's
    subject), the ``metric`` and ``matchers`` it looks for, and ``why`` it matters (the
    warning where it is absent)."""

    what: str
    metric: str
    matchers: tuple[Matcher, ...]
    why: str


def _no_rules(plan: ServicePlan) -> list[Rule]:
    return []


def _no_series(plan: ServicePlan, s: Series, length: int) -> None:
    return None


def _no_names(value: Any) -> tuple[str, ...]:
    return ()


def _no_guard(plan: ServicePlan, readers: tuple[str, ...]) -> list[SignalInput]:
    return []


@dataclass(frozen=True)
class Signal:
    """One signal, listed once in :data:`generator.signals.SIGNALS` (in output order).

    Attributes:
        key: the ``ServicePlan`` attribute holding its plan (``kv_cache_usage``), which is also
            the preset's attribute for it (:class:`generator.presets.Preset`).
        spec_field: its ``spec.metrics`` key (``kvCacheUsage``), None where only a preset
            supplies it.
        resolve: ``Scope -> plan or None``: the plan (``GaugePlan``, ``CounterPlan`` …), None
            where neither preset nor spec has the series.
        reads: ``plan -> names``: the metric names it reads, for ``ServicePlan.utf8_names``.
        records: ``plan -> [recording rule]``, in the ``traffic`` group after the requests'.
        healthy: ``(plan, series, steps)``: adds its series as a healthy service shows them
            (:func:`generator.signals.healthy.healthy`).
        needs: what a family reading it is left out without (None: every server has it).
        guard: ``(plan, readers) -> [SignalInput]``: what ``ModelSignalMissing`` guards for
            the alerts ``readers`` reading it; none where it may be absent on purpose.
        verify: ``(plan, readers) -> [Presence]``: the series ``obsgen verify`` warns about
            when absent, for a signal a server may run without (``readers`` then stay silent).
        verified: the words ``obsgen verify`` names it by where it looks for the series the
            plan reads, or their names in other releases (None: it does not).
    """

    key: str
    spec_field: str | None
    resolve: Callable[[Scope], Any]
    reads: Callable[[Any], tuple[str, ...]] = _no_names
    records: Callable[[ServicePlan], list[Rule]] = _no_rules
    healthy: Callable[[ServicePlan, Series, int], None] = _no_series
    needs: Needs | None = None
    guard: Callable[[ServicePlan, tuple[str, ...]], list[SignalInput]] = _no_guard
    verify: Callable[[ServicePlan, tuple[str, ...]], list[Presence]] | None = None
    verified: str | None = None

    def of(self, plan: ServicePlan) -> Any:
        """The signal's plan in ``plan`` (None where the service has no such series)."""
        return getattr(plan, self.key)


def gauge(
    default: GaugeDef | None, override: MetricOverride | None, base: tuple[Matcher, ...]
) -> GaugePlan | None:
    """A gauge's plan: the override's name (with the preset's scale), else the preset's gauge
    with its own matchers and denominator; the override's selector over both."""
    if override and override.name:
        return GaugePlan(
            override.name,
            _merge(base, override.selector),
            1.0 if default is None else default.scale,
        )
    if default is None:
        return None
    own = _merge(base, dict(default.matchers))
    matchers = _merge(own, override.selector if override else None)
    denominator = None
    if default.denominator is not None:
        denominator = _merge(
            _merge(base, dict(default.denominator)), override.selector if override else None
        )
    return GaugePlan(default.name, matchers, default.scale, denominator, default.also)


def counter(
    default: str | None, override: MetricOverride | None, base: tuple[Matcher, ...]
) -> CounterPlan | None:
    """A counter's plan: the override's name, else the preset's; the override's selector."""
    name = override.name if override and override.name else default
    if name is None:
        return None
    return CounterPlan(name, _merge(base, override.selector if override else None))


def gauge_expr(g: GaugePlan, agg: str, group: tuple[str, ...]) -> str:
    """``agg by (group)`` of the gauge (any of its names), over its denominator's where it has
    one, times its scale."""
    expr = f"{agg}{by(group)} ({any_of(g.names, g.matchers)})"
    if g.denominator is not None:
        # Both sides aggregated to the same labels first, so the type label drops out.
        expr = f"{expr} / ({agg}{by(group)} ({selector(g.name, g.denominator)}) > 0)"
    return expr if g.scale == 1 else f"({expr}) * {decimal_str(g.scale)}"


def gauge_record(
    plan: ServicePlan, g: GaugePlan | None, metric: str, agg: str, per_pod: bool
) -> list[Rule]:
    """The record of gauge ``g``: ``agg`` over the service's pods (``per_pod``: kept per pod),
    named ``<groupBy>[:pod]:<metric>:<agg>``; none without the gauge."""
    if g is None:
        return []
    pod = ("pod",) if per_pod else ()
    name = naming.record((*plan.group_by, *pod), metric, agg)
    keep = tuple(sorted({*plan.agg_labels, *pod}))
    return [record_rule(plan, name, gauge_expr(g, agg, keep))]


def gauge_guard(
    plan: ServicePlan, field: str, g: GaugePlan | None, readers: tuple[str, ...]
) -> list[SignalInput]:
    """The guarded input of gauge ``g`` (``spec.metrics.<field>``; a ratio gauge needs its
    denominator series too) read by ``readers``; none without the gauge."""
    if g is None:
        return []
    needs = [tuple(Source(name, g.matchers) for name in g.names)]
    if g.denominator is not None:
        needs.append((Source(g.name, g.denominator),))
    return [
        SignalInput(
            field,
            g.name,
            SERVICE_KEYS,
            tuple(needs),
            (targets_up(plan),),
            readers,
            remedy=server_remedy(field),
        )
    ]


def gauge_signal(
    key: str,
    spec_field: str,
    metric: str,
    agg: str,
    *,
    per_pod: bool,
    verified: str,
    healthy: Callable[[ServicePlan, Series, int], None] | None = None,
) -> Signal:
    """A gauge signal whose preset attribute, ``spec.metrics`` field (snake case) and plan
    attribute are all ``key``: recorded as ``agg`` over the pods (``per_pod``: kept per pod,
    :func:`gauge_record`), guarded as one gauge (:func:`gauge_guard`), read by the families
    that need a gauge; a healthy service shows it at 0 on the service's labels unless
    ``healthy`` says otherwise."""

    def resolve(scope: Scope) -> GaugePlan | None:
        return gauge(getattr(scope.preset, key), getattr(scope.metrics, key), scope.base)

    def records(plan: ServicePlan) -> list[Rule]:
        return gauge_record(plan, getattr(plan, key), metric, agg, per_pod)

    def at_zero(plan: ServicePlan, s: Series, length: int) -> None:
        g = getattr(plan, key)
        if g is not None:
            s.gauge(g.name, labels_of(plan, g.matchers), f"0+0x{length}")

    def guard(plan: ServicePlan, readers: tuple[str, ...]) -> list[SignalInput]:
        return gauge_guard(plan, spec_field, getattr(plan, key), readers)

    return Signal(
        key,
        spec_field,
        resolve,
        _gauge_names,
        records,
        healthy or at_zero,
        needs=Needs(spec_field, key, "gauge"),
        guard=guard,
        verified=verified,
    )


def _gauge_names(g: GaugePlan) -> tuple[str, ...]:
    return g.names
