"""``spec.alerts.slowRequests``: ``ModelSlowRequestsHigh``, the share of requests slower than
``threshold`` above ``maxRatio`` (with at least ``minEvents`` requests in 5m).

Records its slow-ratio record itself (:func:`records`, one
bucket bound); ``plan.py`` inherits the threshold of a latency SLO and checks it is a bucket
bound. Page text in ``templates/runbooks/ModelSlowRequestsHigh.md.j2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families import latency
from generator.families.base import Family, HistogramRead, Resolving, Role
from generator.parts.common import alert_rule, record_rule, recorded
from generator.parts.grafana_json import PanelDef, Query
from generator.parts.panel_parts import alert_steps, legend, panel_runbook, rec
from generator.parts.promtool_series import (
    agg_of,
    busy_per_min,
    expected_alert,
    fire_and_quiet,
    mixed,
    slow_class,
)
from generator.plan_metrics import _SLOW_EFFECT, _check_bound
from generator.promql import Matcher
from generator.signals.healthy import healthy
from generator.signals.histograms import bucket_rate, count_rate
from generator.spec_alerts import AlertBase
from generator.spec_types import AlertRatio, DurationMs, MinEvents
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan
    from generator.plan_types import HistogramPlan

KEY = "slow_requests"
ALERT = naming.ALERT_SLOW_REQUESTS


class SlowRequestsAlert(AlertBase):
    """``alerts.slowRequests``: share of requests slower than ``threshold`` above ``maxRatio``."""

    threshold: DurationMs | None = None
    max_ratio: AlertRatio | None = None
    indicator: str | None = None
    min_events: MinEvents | None = None


@dataclass(frozen=True)
class Params:
    """``indicator``: the histogram key; ``threshold_seconds`` and ``bound`` (the same bucket
    bound, in the histogram's unit); ``max_ratio`` (0–1) and ``min_events`` (in 5m)."""

    indicator: str
    threshold_seconds: float
    bound: float
    max_ratio: float
    min_events: int


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``slow_requests`` alert."""
    p = alert.params
    return Params(
        str(p["indicator"]),
        float(p["threshold_seconds"]),
        float(p["bound"]),
        float(p["max_ratio"]),
        int(p["min_events"]),
    )


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelSlowRequestsHigh`` while the slow ratio stays above ``max_ratio`` and the service
    served at least ``min_events`` requests in 5m."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    g = plan.group_by
    on = ", ".join(plan.agg_labels)
    requests = recorded(plan, naming.record(g, naming.REQUESTS, "rate5m"))
    h = plan.histograms[params(alert).indicator]
    ratio = recorded(
        plan,
        naming.record(g, naming.SLOW_REQUESTS, "ratio_rate5m"),
        Matcher(naming.INDICATOR, "=", h.indicator),
    )
    min_events = params(alert).min_events
    most = decimal_str(params(alert).max_ratio)
    return [
        alert_rule(
            plan,
            ALERT,
            f"{ratio} > {most} and on ({on}) {requests} * 300 >= {min_events}",
            alert.for_ms,
            alert.severity,
            {naming.INDICATOR: h.indicator},
            indicator=h.indicator,
            threshold=f"{decimal_str(params(alert).threshold_seconds)}s",
            threshold_bound=decimal_str(params(alert).bound),
            max_ratio=most,
            metric=h.metric,
        )
    ]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Halfway between ``max_ratio`` and all requests slow fires; half of ``max_ratio`` stays
    quiet (none for a native histogram: promtool 2.42 cannot write one)."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    h = plan.histograms[params(alert).indicator]
    if h.native:
        return []
    slow = slow_class(h, params(alert).threshold_seconds, above=True)
    max_ratio = Fraction(str(params(alert).max_ratio))
    high, low = (max_ratio + 1) / 2, max_ratio / 2
    rule = rules(plan)[0]
    labels = {
        **agg_of(plan, h.matchers),
        naming.SERVICE: plan.name,
        naming.INDICATOR: h.indicator,
        "threshold": rule["labels"].get("threshold")
        or decimal_str(params(alert).threshold_seconds),
    }
    expected = [expected_alert(rule, labels, float(high))]
    busy = busy_per_min(alert.params)
    fire = healthy(plan, mixed(busy, high, slow))
    quiet = healthy(plan, mixed(busy, low, slow))
    return fire_and_quiet(plan, KEY, ALERT, fire, quiet, expected)


def panels(plan: ServicePlan) -> list[PanelDef]:
    """The slow-request ratio, the alert's ``max_ratio`` drawn (only while enabled)."""
    slow = plan.alerts.get(KEY)
    if slow is None:
        return []
    h = plan.histograms[params(slow).indicator]
    record = naming.record(plan.group_by, naming.SLOW_REQUESTS, "ratio_rate5m")
    threshold = decimal_str(params(slow).threshold_seconds)
    return [
        PanelDef(
            title=f"Requests slower than {threshold}s ({h.indicator})",
            key=f"latency/{h.indicator}/slow-ratio",
            description=f"Share of requests slower than {threshold}s over 5m, "
            f"from {record} (1 − bucket rate / count rate of {h.metric}); "
            f"{ALERT} fires above the line.",
            kind="timeseries",
            queries=(
                Query(
                    rec(plan, record, Matcher(naming.INDICATOR, "=", h.indicator)),
                    legend(plan, "slow ratio"),
                ),
            ),
            unit="percentunit",
            min_value=0,
            steps=alert_steps(plan, KEY, "max_ratio"),
            runbook=panel_runbook(plan, ALERT),
            width=24,
        )
    ]


def inherit(r: Resolving) -> None:
    """No threshold of its own: the first latency SLO's, on that SLO's histogram unless the
    spec's entry names an indicator or a threshold."""
    latency_slos = [s for s in r.body.slos if s.indicator is not None]
    if "threshold_seconds" not in r.params and latency_slos:
        r.params["threshold_seconds"] = (latency_slos[0].threshold or 0) / 1000
        if r.given is None or (r.given.indicator is None and r.given.threshold is None):
            # The SLO's threshold belongs to the SLO's histogram, not the default one.
            r.params["indicator"] = latency_slos[0].indicator


def check(r: Resolving) -> bool:
    """The indicator's histogram and the bucket bound the threshold names (``bound``); off
    without a threshold, and left out where one inherited from an SLO names no bound (that
    SLO's own check reports it)."""
    histogram = latency.histogram(r)
    if histogram is None:
        return False
    merged = r.params
    if "threshold_seconds" not in merged:
        return False  # no threshold to test against: disabled unless configured
    if (
        r.given is None
        and histogram.bounded
        and histogram.bound_for(merged["threshold_seconds"]) is None
    ):
        return False  # inherited from a latency SLO, whose own check reports it
    # Inherited from a latency SLO: that SLO's own check speaks of its releases.
    merged["bound"] = _check_bound(
        histogram,
        merged["threshold_seconds"],
        f"{r.path}.threshold",
        r.problems,
        r.releases if r.given is not None else None,
        _SLOW_EFFECT,
    )
    return True


def ratio_expr(plan: ServicePlan, h: HistogramPlan, bound: float) -> str:
    """Share (0–1) of requests slower than ``bound``; nothing recorded at zero traffic."""
    group = plan.agg_labels
    total = count_rate(h, group)
    return f"1 - ({bucket_rate(h, bound, plan.le_version, group)}) / ({total} > 0)"


def records(plan: ServicePlan) -> list[Rule]:
    """``<groupBy>:model_slow_requests:ratio_rate5m{indicator, threshold}``: the share of
    requests slower than the threshold (its bucket bound), while enabled."""
    slow = plan.alerts.get(KEY)
    if slow is None:
        return []
    typed = params(slow)
    h = plan.histograms[typed.indicator]
    return [
        record_rule(
            plan,
            naming.record(plan.group_by, naming.SLOW_REQUESTS, "ratio_rate5m"),
            ratio_expr(plan, h, typed.bound),
            {
                naming.INDICATOR: h.indicator,
                "threshold": decimal_str(typed.threshold_seconds),
            },
        )
    ]


def histogram_reads(plan: ServicePlan) -> list[HistogramRead]:
    """The indicator's histogram at the threshold's bucket bound, while enabled."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    typed = params(alert)
    return [HistogramRead(typed.indicator, ALERT, typed.bound)]


FAMILY = Family(
    key=KEY,
    spec_field="slowRequests",
    spec_model=SlowRequestsAlert,
    alerts=(ALERT,),
    for_ms=600_000,
    severity="warning",
    params={"max_ratio": 0.1, "indicator": "requestDuration", "min_events": 10},
    role=Role.SYMPTOM,
    group="traffic",
    rules=rules,
    cases=cases,
    row="latency",
    rank=1,
    panels=panels,
    unavailable=latency.unavailable(ALERT),
    inherit=inherit,
    check=check,
    histogram_reads=histogram_reads,
    records=records,
)
