"""Shared pieces of the "a recorded value stays above ``max``" families (queue depth, KV
cache, preemptions): the alert rule, the gauge's firing and quiet cases."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from generator import naming
from generator.parts.common import Rule, alert_rule, recorded
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    agg_of,
    expected_alert,
    fire_and_quiet,
    labels_of,
)
from generator.promql import go_float
from generator.signals.healthy import healthy
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.plan import AlertPlan, GaugePlan, ServicePlan


class Ceiling(Protocol):
    """The typed parameters of a ceiling family: ``max``, in the record's unit."""

    @property
    def max(self) -> float: ...


def above_max(
    plan: ServicePlan,
    key: str,
    name: str,
    record_metric: str,
    operation: str,
    params: Callable[[AlertPlan], Ceiling],
    levels: tuple[str, ...] = (),
    **extra: Any,
) -> list[Rule]:
    """Alert ``name`` when the service's record ``<level>:<record_metric>:<operation>`` (by
    the spec's ``groupBy`` plus ``levels``) stays above ``spec.alerts.<key>.max``; none when
    the alert is off; ``params`` are the family's typed parameters."""
    alert = plan.alerts.get(key)
    if alert is None:
        return []
    value = recorded(plan, naming.record((*plan.group_by, *levels), record_metric, operation))
    limit = decimal_str(params(alert).max)
    return [
        alert_rule(
            plan, name, f"{value} > {limit}", alert.for_ms, alert.severity, max=limit, **extra
        )
    ]


def gauge_cases(
    plan: ServicePlan,
    key: str,
    gauge: GaugePlan,
    rule: Rule,
    value: float,
    extra: dict[str, str],
) -> list[dict[str, Any]]:
    """``rule`` fires when ``gauge`` (series with ``extra`` labels) reads ``value`` (the
    alert's unit: the gauge's ``scale`` undone; a ratio gauge's denominator held at 1000) on a
    healthy service, and stays quiet on a healthy one."""
    base = [Klass(BASE_PER_MIN)]
    fire = healthy(plan, base)
    raw = value / gauge.scale
    if gauge.denominator is not None:
        # A ratio of two gauges (Triton's used / max KV-cache blocks): max = 1000.
        raw *= 1000
        fire.gauge(gauge.name, labels_of(plan, gauge.denominator, **extra), "1000+0x60")
    fire.gauge(gauge.name, labels_of(plan, gauge.matchers, **extra), f"{go_float(raw)}+0x60")
    labels = {**agg_of(plan, gauge.matchers), naming.SERVICE: plan.name, **extra}
    expected = [expected_alert(rule, labels, value)]
    return fire_and_quiet(plan, key, rule["alert"], fire, healthy(plan, base), expected)
