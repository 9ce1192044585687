"""``spec.alerts.latencyP99``: ``ModelLatencyP99High``, the p99 of one latency histogram
above ``threshold``.

Reads the ``model_request_latency`` quantile record
(:func:`generator.builders.service_rules.latency_records`); its threshold is drawn on the
histogram's latency panel. ``plan.py`` resolves the indicator and refuses a threshold no
bucket can reach; page text in ``templates/runbooks/ModelLatencyP99High.md.j2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families.base import Family, Role
from generator.parts.common import alert_rule, recorded
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    agg_of,
    expected_alert,
    fire_and_quiet,
    healthy,
)
from generator.promql import Matcher
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "latency_p99"
ALERT = naming.ALERT_LATENCY_P99


@dataclass(frozen=True)
class Params:
    """``indicator``: the histogram key (``requestDuration``); ``threshold_seconds``: the p99
    (seconds) above which it alerts."""

    indicator: str
    threshold_seconds: float


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``latency_p99`` alert."""
    return Params(str(alert.params["indicator"]), float(alert.params["threshold_seconds"]))


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelLatencyP99High`` while the indicator's recorded p99 stays above the threshold."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    h = plan.histograms[alert.params["indicator"]]
    p99 = recorded(
        plan,
        naming.record(plan.group_by, naming.LATENCY, "quantile_rate5m"),
        Matcher(naming.INDICATOR, "=", h.indicator),
        Matcher(naming.QUANTILE, "=", "0.99"),
    )
    threshold = alert.params["threshold_seconds"]
    return [
        alert_rule(
            plan,
            ALERT,
            f"{p99} > {decimal_str(threshold)}",
            alert.for_ms,
            alert.severity,
            {naming.INDICATOR: h.indicator},
            indicator=h.indicator,
            threshold=f"{decimal_str(threshold)}s",
            metric=h.metric,
        )
    ]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Every request past the top bucket fires (p99 reports the top bound); fast requests
    stay quiet. None for a native histogram (promtool 2.42 cannot write one) or a threshold
    under 99 % of the first bucket (fast requests would already exceed it)."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    h = plan.histograms[params(alert).indicator]
    first = 0.99 * h.buckets[0] * h.seconds_per_unit
    if h.native or first > params(alert).threshold_seconds:
        return []
    top = h.buckets[-1] * h.seconds_per_unit  # in +Inf: p99 reports the top bound
    fire = healthy(plan, [Klass(BASE_PER_MIN, False, ((h.key, top * 2),))])
    labels = {
        **agg_of(plan, h.matchers),
        naming.SERVICE: plan.name,
        naming.INDICATOR: h.indicator,
        naming.QUANTILE: "0.99",
    }
    expected = [expected_alert(rules(plan)[0], labels, top)]
    quiet = healthy(plan, [Klass(BASE_PER_MIN)])
    return fire_and_quiet(plan, KEY, ALERT, fire, quiet, expected)


FAMILY = Family(
    key=KEY,
    spec_field="latencyP99",
    alerts=(ALERT,),
    for_ms=600_000,
    severity="warning",
    params={"threshold_seconds": 30.0, "indicator": "requestDuration"},
    role=Role.SYMPTOM,
    group="traffic",
    rules=rules,
    cases=cases,
)
