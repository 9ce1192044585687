"""Generated promtool cases of ``spec.models`` (:mod:`generator.builders.model_slo_rules`).

Three groups, each model's traffic the plan's own (:func:`promtool_series.traffic`) on the
counters its per-model SLIs read, with the model label set: *healthy* (every named model fine,
unnamed models under half the allowed share: both alerts silent), *one named model burns*
(every request of the first named model fails and is slow on every latency SLO's histogram:
every tier of every per-model SLO fires for it alone), *unnamed majority* (the rollup carries
``k / (k + 1)`` of the requests, above ``maxUnwatchedShare``: the ticket fires).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

from generator import naming
from generator.builders import model_slo_rules
from generator.models import requests_by_model
from generator.parts.promtool_series import (
    Klass,
    Series,
    agg_of,
    alert_test,
    expected_alert,
    in_cluster,
    promtool_group,
    steps_until,
    traffic,
)
from generator.plan import HistogramPlan, ServicePlan
from generator.signals.healthy import healthy

CHECK_MS = 30 * 60_000  # the guard's 15m `for` held, every burn window reads 25m of failures
UNNAMED = "unnamed-model"  # a model spec.models does not name


def _slow(h: HistogramPlan, bound: float) -> float:
    """Seconds over ``bound`` (metric unit): the next bucket bound, or twice the bound."""
    above = [b for b in h.buckets if b > bound]
    return (above[0] if above else bound * 2) * h.seconds_per_unit


def _per_min(plan: ServicePlan) -> int:
    """Requests a minute of each model: every SLO's ``min_events`` in 25 minutes."""
    most = max((s.min_events for s in plan.slos), default=0)
    return max(10, -(-most // 25))


def _model_traffic(plan: ServicePlan, model: str, classes: list[Klass]) -> Series:
    """``classes`` on the counters the per-model SLIs read, labelled ``model``."""
    assert plan.models is not None
    req = requests_by_model(plan.requests, plan.models.label)
    reading = plan if req is None else replace(plan, requests=req)
    return in_cluster(traffic(reading, classes), plan.models.label, model)


def _group(
    plan: ServicePlan, name: str, per_model: dict[str, list[Klass]], tests: list[dict[str, Any]]
) -> dict[str, Any]:
    s = healthy(plan, [])
    for model, classes in sorted(per_model.items()):
        s = s.merged(_model_traffic(plan, model, classes))
    return promtool_group(name, s.render(steps_until(CHECK_MS)), tests)


def _rules(plan: ServicePlan, alert: str) -> list[dict[str, Any]]:
    return [
        r for g in model_slo_rules.model_groups(plan) for r in g["rules"] if r.get("alert") == alert
    ]


def model_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """The three groups (module docstring); nothing without ``spec.models``."""
    models = plan.models
    if models is None:
        return []
    p = _per_min(plan)
    burns = _rules(plan, model_slo_rules.ALERT_BURN)
    guards = _rules(plan, model_slo_rules.ALERT_UNWATCHED)
    if not burns and not guards:
        return []
    share = Fraction(str(models.max_unwatched_share))
    fine = {n: [Klass(p)] for n in models.names}
    few = float(p * share / 2)  # unnamed share < share/2 / (1 + share/2) < share
    checks = [
        alert_test(CHECK_MS, model_slo_rules.ALERT_BURN, []),
        alert_test(CHECK_MS, model_slo_rules.ALERT_UNWATCHED, []),
    ]
    groups = [
        _group(
            plan,
            "spec.models: named models healthy, unnamed ones a minority: silent",
            {**fine, **({UNNAMED: [Klass(few)]} if few else {})},
            checks,
        )
    ]
    first = models.names[0]
    if burns:
        durations = tuple(
            (s.histogram.key, _slow(s.histogram, s.threshold_bound))
            for s in plan.slos
            if s.histogram is not None and s.threshold_bound is not None
        )
        failing = {**fine, first: [Klass(p, error=True, durations=durations)]}
        labels = {**agg_of(plan, plan.requests.matchers), models.label: first}
        expected = [expected_alert(r, labels, None) for r in burns]
        groups.append(
            _group(
                plan,
                f"spec.models: {first} fails every request, the others are fine: "
                f"{model_slo_rules.ALERT_BURN} for {first} alone",
                failing,
                [alert_test(CHECK_MS, model_slo_rules.ALERT_BURN, expected)],
            )
        )
    if guards:
        k = next(k for k in (3, 99, 9_999_999) if Fraction(k, k + 1) > share)
        crowd = {first: [Klass(p)], UNNAMED: [Klass(p * k)]}
        labels = {**agg_of(plan, plan.requests.matchers), naming.SERVICE: plan.name}
        groups.append(
            _group(
                plan,
                f"spec.models: unnamed models carry {k}/{k + 1} of the requests: "
                f"{model_slo_rules.ALERT_UNWATCHED}",
                crowd,
                [
                    alert_test(
                        CHECK_MS,
                        model_slo_rules.ALERT_UNWATCHED,
                        [expected_alert(r, labels, None) for r in guards],
                    )
                ],
            )
        )
    return groups
