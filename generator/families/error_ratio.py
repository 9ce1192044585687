"""``spec.alerts.errorRatio``: ``ModelErrorRatioHigh``, failed / all requests above
``maxRatio`` (with at least ``minEvents`` requests in 5m).

Reads the error-ratio record :func:`generator.builders.service_rules.traffic_records` writes
from the request counters; page text in ``templates/runbooks/ModelErrorRatioHigh.md.j2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families.base import Family, Role
from generator.parts.common import alert_rule, recorded
from generator.parts.grafana_json import PanelDef, Query
from generator.parts.panel_parts import alert_steps, legend, panel_runbook, rec
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    OTHER_CLUSTER,
    Klass,
    after_for,
    agg_of,
    busy_per_min,
    expected_alert,
    family_case,
    fire_and_quiet,
    in_cluster,
    mixed,
)
from generator.parts.series_parts import ERROR_EXAMPLES, example_value, labels_of
from generator.promql import Matcher
from generator.signals.healthy import healthy
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "error_ratio"
ALERT = naming.ALERT_ERROR_RATIO


@dataclass(frozen=True)
class Params:
    """``max_ratio``: failed share (0–1) above which it alerts; ``min_events``: requests in
    5m below which it stays silent."""

    max_ratio: float
    min_events: int


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``error_ratio`` alert."""
    return Params(float(alert.params["max_ratio"]), int(alert.params["min_events"]))


def _record(plan: ServicePlan) -> str:
    return naming.record(plan.group_by, naming.REQUEST_ERRORS, "ratio_rate5m")


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelErrorRatioHigh`` while the error ratio stays above ``max_ratio`` and the service
    served at least ``min_events`` requests in 5m."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    on = ", ".join(plan.agg_labels)
    requests = recorded(plan, naming.record(plan.group_by, naming.REQUESTS, "rate5m"))
    ratio = recorded(plan, _record(plan))
    min_events = params(alert).min_events
    most = decimal_str(params(alert).max_ratio)
    return [
        alert_rule(
            plan,
            ALERT,
            f"{ratio} > {most} and on ({on}) {requests} * 300 >= {min_events}",
            alert.for_ms,
            alert.severity,
            max_ratio=most,
            min_events=min_events,
        )
    ]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Halfway between ``max_ratio`` and all requests failing fires, half of it stays quiet;
    with a cluster label, only the failing one of two clusters pages."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    max_ratio = Fraction(str(params(alert).max_ratio))
    high, low = (max_ratio + 1) / 2, max_ratio / 2
    labels = {**agg_of(plan, plan.requests.matchers), naming.SERVICE: plan.name}
    expected = [expected_alert(rules(plan)[0], labels, float(high))]
    busy = busy_per_min(alert.params)
    fire = healthy(plan, mixed(busy, high, Klass(0, True)))
    quiet = healthy(plan, mixed(busy, low, Klass(0, True)))
    groups = fire_and_quiet(plan, KEY, ALERT, fire, quiet, expected)
    groups += _source_cases(plan, busy, high, expected)
    if plan.cluster_label is not None:
        # Two clusters run the same service in the same namespace; one fails.
        second = in_cluster(healthy(plan, [Klass(BASE_PER_MIN)]), plan.cluster_label, OTHER_CLUSTER)
        failing = healthy(plan, mixed(BASE_PER_MIN, high, Klass(0, True)))
        name = f"{ALERT} pages for the failing cluster only"
        at = after_for(plan, KEY)
        groups.append(family_case(plan, name, failing.merged(second), ALERT, expected, at))
    return groups


def _source_cases(
    plan: ServicePlan, busy: int, high: Fraction, expected: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Per further failure source (docs/spec.md, "What a failure is"): requests all succeed
    by their HTTP status, but the source fails ``high`` of them after the 200 — it fires;
    the same share finished by an excluded reason (client aborts) stays quiet."""
    at = after_for(plan, KEY)
    groups = []
    req = plan.requests
    # The request counter's own exclusions (Triton CANCELED, TensorRT-LLM cancelled): as many
    # excluded failures as would fire stay quiet.
    counter = req.failure_name or req.name
    for m in req.exclude_matchers:
        excluded = {e.label: example_value(e, ERROR_EXAMPLES) for e in req.error_matchers}
        excluded[m.label] = example_value(Matcher(m.label, "=~", m.value), ())
        quiet = healthy(plan, [Klass(busy)])
        quiet.add(counter, labels_of(plan, req.matchers, **excluded), float(high * busy))
        name = f"{ALERT} stays quiet on {counter}'s excluded {m.label}"
        groups.append(family_case(plan, name, quiet, ALERT, [], at))
    for src in plan.requests.sources:
        base = {m.label: example_value(m, ERROR_EXAMPLES) for m in src.error_matchers}
        failed = labels_of(plan, src.matchers, **base)
        fire = healthy(plan, [Klass(busy)])
        fire.add(src.name, failed, float(high * busy))
        name = f"{ALERT} fires on failures {src.name} counts after an HTTP success"
        groups.append(family_case(plan, name, fire, ALERT, expected, at))
        for m in src.exclude_matchers:
            excluded = {**base, m.label: example_value(Matcher(m.label, "=~", m.value), ())}
            quiet = healthy(plan, [Klass(busy)])
            quiet.add(src.name, labels_of(plan, src.matchers, **excluded), float(high * busy))
            name = f"{ALERT} stays quiet on {src.name}'s excluded {m.label}"
            groups.append(family_case(plan, name, quiet, ALERT, [], at))
    return groups


def panels(plan: ServicePlan) -> list[PanelDef]:
    """The error ratio, the alert's ``max_ratio`` drawn (a green base when disabled)."""
    record = _record(plan)
    return [
        PanelDef(
            title="Error ratio",
            key="error-ratio",
            description="Failed / all requests over 5m, from "
            f"{record} — the series {ALERT} compares with its threshold (line).",
            kind="timeseries",
            queries=(Query(rec(plan, record), legend(plan, "error ratio")),),
            unit="percentunit",
            min_value=0,
            steps=alert_steps(plan, KEY, "max_ratio"),
            runbook=panel_runbook(plan, ALERT),
            width=10,
        )
    ]


FAMILY = Family(
    key=KEY,
    spec_field="errorRatio",
    alerts=(ALERT,),
    for_ms=300_000,
    severity="critical",
    params={"max_ratio": 0.05, "min_events": 10},
    role=Role.SYMPTOM,
    group="traffic",
    rules=rules,
    cases=cases,
    row="traffic",
    rank=1,
    panels=panels,
)
