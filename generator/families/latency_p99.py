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
from generator.families import latency
from generator.families.base import Family, HistogramRead, Resolving, Role
from generator.parts.common import alert_rule, recorded
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    agg_of,
    expected_alert,
    fire_and_quiet,
)
from generator.plan_metrics import _P99_EFFECT, _below_top, _release_checks
from generator.promql import Matcher
from generator.release_bounds import Test
from generator.signals.healthy import healthy
from generator.spec_alerts import AlertBase
from generator.spec_types import DurationMs
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "latency_p99"
ALERT = naming.ALERT_LATENCY_P99


class LatencyP99Alert(AlertBase):
    """``alerts.latencyP99``: p99 over 5m above ``threshold``."""

    threshold: DurationMs | None = None
    indicator: str | None = None


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
    h = plan.histograms[params(alert).indicator]
    p99 = recorded(
        plan,
        naming.record(plan.group_by, naming.LATENCY, "quantile_rate5m"),
        Matcher(naming.INDICATOR, "=", h.indicator),
        Matcher(naming.QUANTILE, "=", "0.99"),
    )
    threshold = params(alert).threshold_seconds
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


def check(r: Resolving) -> bool:
    """The indicator's histogram, and a threshold under its largest bound (``histogram_quantile``
    never reports more): refused where the spec sets it, left out with a warning where it is
    the default; a line of releases with other bounds is checked too."""
    histogram = latency.histogram(r)
    if histogram is None:
        return False
    if not histogram.bounded:
        return True
    merged, path, p, releases = r.params, r.path, r.problems, r.releases
    top = histogram.buckets[-1] * histogram.seconds_per_unit
    seconds = float(merged["threshold_seconds"])
    test = Test(_below_top(seconds), "below the largest bucket bound", _P99_EFFECT)
    per_release = releases is not None and histogram.key in releases.preset_keys
    shown = f"{decimal_str(seconds)}s"
    if seconds < top and per_release and releases is not None:
        if r.given is not None:
            _release_checks(histogram, seconds, f"{path}.threshold", p, releases, test)
        else:
            # A default threshold: the line's other releases only warn.
            for problem in filter(
                None,
                (
                    releases.line_problem(histogram.key, test, shown),
                    releases.upgrade_warning(histogram.key, test, shown),
                    releases.unset_warning(histogram.key, test, shown),
                ),
            ):
                p.warn(path, f"default {naming.ALERT_LATENCY_P99}: {problem}")
    if merged["threshold_seconds"] >= top and r.given is None:
        # An unconfigured default that could never fire: leave it out, and say so.
        p.warn(
            path,
            f"default {naming.ALERT_LATENCY_P99} alert left out: its "
            f"{decimal_str(merged['threshold_seconds'])}s threshold is not below "
            f"the largest bucket bound {decimal_str(top)}s of {histogram.metric}, "
            f"so it could never fire; enable it with {path}.threshold below "
            f"{decimal_str(top)}s",
        )
        return False
    if merged["threshold_seconds"] >= top:
        fix = (
            f" — {releases.refusal(histogram.key, test)}"
            if per_release and releases is not None
            else ""
        )
        p.add(
            f"{path}.threshold",
            f"{decimal_str(merged['threshold_seconds'])}s is not below the largest bucket "
            f"bound {decimal_str(top)}s; histogram_quantile never reports more than that "
            f"bound, so the alert could never fire{fix}",
        )
    return True


def histogram_reads(plan: ServicePlan) -> list[HistogramRead]:
    """The indicator's histogram, every bucket (a quantile), while enabled."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    return [HistogramRead(params(alert).indicator, ALERT)]


FAMILY = Family(
    key=KEY,
    spec_field="latencyP99",
    spec_model=LatencyP99Alert,
    alerts=(ALERT,),
    for_ms=600_000,
    severity="warning",
    params={"threshold_seconds": 30.0, "indicator": "requestDuration"},
    role=Role.SYMPTOM,
    group="traffic",
    rules=rules,
    cases=cases,
    unavailable=latency.unavailable(ALERT),
    check=check,
    histogram_reads=histogram_reads,
)
