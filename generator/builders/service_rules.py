"""Recording rules and alerts for traffic, errors, latency and saturation of one service.

Every expression follows docs/contracts.md, rule 3: ``rate`` first, then ``sum by (…)``; quantiles from
``sum by (le, …)`` of bucket rates; ratios divide a summed numerator by a summed denominator,
guarded so that zero traffic records nothing or 0 — never NaN — and fires nothing.
"""

from __future__ import annotations

from generator import naming
from generator.families import FAMILIES
from generator.parts.common import (
    Rule,
    record_rule,
)
from generator.plan import (
    ServicePlan,
)
from generator.promql import selector, sum_rate
from generator.signals import SIGNALS, histograms, requests
from generator.signals.base import RATE_WINDOW as RATE_WINDOW
from generator.signals.base import RATE_WINDOW_SECONDS as RATE_WINDOW_SECONDS
from generator.units import decimal_str


def latency_records(plan: ServicePlan) -> list[Rule]:
    """Mean latency, p50/p90/p99 (seconds) per latency indicator, then the families' records
    (:attr:`generator.families.base.Family.records`: the slow-request ratio when alerted on)."""
    rules: list[Rule] = mean_latency_records(plan) + histograms.records(plan)
    # The families' own records (the slow-request ratio), after the histograms'.
    for family in FAMILIES:
        rules += family.records(plan)
    return rules


def mean_latency_records(plan: ServicePlan) -> list[Rule]:
    """Mean latency (seconds) over 5m from a time counter and a request counter (Triton's
    ``nv_inference_request_duration_us``); nothing recorded at zero traffic."""
    group = plan.agg_labels
    rules: list[Rule] = []
    for m in plan.mean_latencies:
        time_rate = sum_rate(selector(m.sum_name, m.matchers), RATE_WINDOW, group)
        count = sum_rate(selector(m.count_name, m.matchers), RATE_WINDOW, group)
        expr = f"{time_rate} / ({count} > 0)"
        if m.seconds_per_unit != 1:
            expr = f"({expr}) * {decimal_str(m.seconds_per_unit)}"
        rules.append(
            record_rule(
                plan,
                naming.record(plan.group_by, naming.LATENCY, "mean_rate5m"),
                expr,
                {naming.INDICATOR: m.indicator},
            )
        )
    return rules


def traffic_records(plan: ServicePlan) -> list[Rule]:
    """Request rate, error rate and error ratio (5m), plus queue, running and KV-cache gauges."""
    rules = requests.records(plan)
    # The signals' records (generator.signals): saturation gauges, preemptions, prefix cache.
    for signal in SIGNALS:
        rules += signal.records(plan)
    return rules


def traffic_alerts(plan: ServicePlan) -> list[Rule]:
    """The ``traffic`` alerts of :data:`generator.families.FAMILIES` the plan enables, in
    registry order."""
    rules: list[Rule] = []
    for family in FAMILIES:
        if family.group == "traffic":
            rules += family.rules(plan)
    return rules
