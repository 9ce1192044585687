"""Recording rules and alerts for traffic, errors, latency and saturation of one service.

Every expression follows docs/contracts.md, rule 3: ``rate`` first, then ``sum by (…)``; quantiles from
``sum by (le, …)`` of bucket rates; ratios divide a summed numerator by a summed denominator,
guarded so that zero traffic records nothing or 0 — never NaN — and fires nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from generator import failures, naming
from generator.families import FAMILIES, slow_requests
from generator.parts.common import (
    Rule,
    counter_target,
    record_rule,
    recorded,
)
from generator.plan import (
    HistogramPlan,
    ServicePlan,
)
from generator.promql import selector, sum_rate
from generator.signals import SIGNALS, histograms
from generator.signals.base import RATE_WINDOW as RATE_WINDOW
from generator.signals.base import RATE_WINDOW_SECONDS as RATE_WINDOW_SECONDS
from generator.signals.histograms import bucket_rate, count_rate
from generator.units import decimal_str


def _counter_rate(plan: ServicePlan) -> Callable[[str], str]:
    """Selector of a request counter → its summed rate over :data:`RATE_WINDOW`, series born
    during their target's life included (:func:`generator.promql.born_rate`)."""
    target = counter_target(plan, plan.requests.matchers)
    seconds = RATE_WINDOW_SECONDS
    return lambda series: sum_rate(series, RATE_WINDOW, plan.agg_labels, target, seconds)


def requests_rate(plan: ServicePlan) -> str:
    """All finished requests per second, summed by the service's aggregation labels."""
    return requests_sum(plan, _counter_rate(plan))


def errors_rate(plan: ServicePlan) -> str:
    """Failed requests per second; 0 (not absent) while requests flow without errors."""
    return errors_sum(plan, _counter_rate(plan))


def requests_sum(plan: ServicePlan, summed: Callable[[str], str]) -> str:
    """All finished requests, as ``summed`` turns one counter selector into an aggregate
    (a summed rate, or summed increments)."""
    req = plan.requests
    if req.failure_name is None:
        return summed(selector(req.name, req.matchers))
    ok = summed(selector(req.name, req.matchers))
    failed = summed(selector(req.failure_name, req.matchers))
    # Either counter may not exist yet (created on first increment): count it as 0.
    return f"({ok} or 0 * {failed}) + ({failed} or 0 * {ok})"


def errors_sum(plan: ServicePlan, summed: Callable[[str], str]) -> str:
    """Failed requests as :func:`requests_sum` counts them; 0 (not absent) while requests
    flow without errors."""
    # Parenthesised: a two-counter total is a sum, and `+` binds tighter than `or`.
    return f"{failures_sum(plan, summed)} or 0 * ({requests_sum(plan, summed)})"


def failures_sum(plan: ServicePlan, summed: Callable[[str], str]) -> str:
    """Failed requests as :func:`requests_sum` counts them; absent while no failure has been
    counted (the failure series is created on the first one).

    The counter's failures less its exclusions (``!~``, which keep series without the label),
    and with further failure sources (the engine's finish reasons) their combination per
    ``plan.requests.combine``, capped at the total (:func:`generator.failures.combine`)."""
    req = plan.requests
    if req.failure_name is not None:
        own = summed(selector(req.failure_name, (*req.matchers, *req.exclude_matchers)))
    else:
        own = summed(
            selector(req.name, (*req.matchers, *req.error_matchers, *req.exclude_matchers))
        )
    if not req.sources:
        return own
    parts = [own, *(summed(selector(src.name, src.failures)) for src in req.sources)]
    return failures.combine(parts, requests_sum(plan, summed), req.combine, plan.agg_labels)


def latency_records(plan: ServicePlan) -> list[Rule]:
    """p50/p90/p99 (seconds) per latency indicator, and the slow-request ratio when alerted on."""
    rules: list[Rule] = mean_latency_records(plan) + histograms.records(plan)
    slow = plan.alerts.get("slow_requests")
    if slow is not None:
        typed = slow_requests.params(slow)
        h = plan.histograms[typed.indicator]
        rules.append(
            record_rule(
                plan,
                naming.record(plan.group_by, naming.SLOW_REQUESTS, "ratio_rate5m"),
                slow_ratio_expr(plan, h, typed.bound),
                {
                    naming.INDICATOR: h.indicator,
                    "threshold": decimal_str(typed.threshold_seconds),
                },
            )
        )
    return rules


def slow_ratio_expr(plan: ServicePlan, h: HistogramPlan, bound: float) -> str:
    """Share (0–1) of requests slower than ``bound``; nothing recorded at zero traffic."""
    group = plan.agg_labels
    total = count_rate(h, group)
    return f"1 - ({bucket_rate(h, bound, plan.le_version, group)}) / ({total} > 0)"


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
    g = plan.group_by
    requests = naming.record(g, naming.REQUESTS, "rate5m")
    errors = naming.record(g, naming.REQUEST_ERRORS, "rate5m")
    rules = [
        record_rule(plan, requests, requests_rate(plan)),
        record_rule(plan, errors, errors_rate(plan)),
        record_rule(
            plan,
            naming.record(g, naming.REQUEST_ERRORS, "ratio_rate5m"),
            f"{recorded(plan, errors)} / ({recorded(plan, requests)} > 0)",
        ),
    ]
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
