"""SLI recording rules and multi-window multi-burn-rate ``ErrorBudgetBurn`` alerts.

Per SLO, two recording rules hold the 5-minute *rates* of good and total events (rate first,
then sum). Every longer window divides sums of those rates::

    error_ratio(w) = (Σ_w total_rate5m − Σ_w good_rate5m) / Σ_w total_rate5m

which is traffic-weighted (never an average of ratios) and records 0 — not NaN — for an idle
service. Alerts (SRE Workbook ch. 5, "Multiwindow, multi-burn-rate alerts"): a tier fires when
both its long and short window error ratios exceed ``factor × error budget`` and the long
window saw at least ``min_events`` events — by its mean rate × its length *and* by the sum of
its recorded rates × their spacing, so a new service's short history is not extrapolated
(:func:`generator.slo.recorded_events`); no ``for`` (the short window already debounces).
"""

from __future__ import annotations

from fractions import Fraction

from generator import naming
from generator.builders.common import Group, Rule, alert_rule, group, record_rule, recorded
from generator.builders.service_rules import bucket_rate, count_rate, requests_rate
from generator.plan import ServicePlan, SLOPlan
from generator.promql import Matcher
from generator.units import decimal_str, format_duration_ms

FIVE_MINUTES_MS = 300_000


def good_rate(plan: ServicePlan, s: SLOPlan) -> str:
    """Good events per second over 5m: requests not failing, or no slower than the threshold."""
    if s.histogram is not None and s.threshold_bound is not None:
        return bucket_rate(s.histogram, s.threshold_bound, plan.le_version, plan.agg_labels)
    from generator.builders.service_rules import errors_rate

    return f"({requests_rate(plan)}) - ({errors_rate(plan)})"


def total_rate(plan: ServicePlan, s: SLOPlan) -> str:
    """All events per second over 5m for the SLO's SLI."""
    if s.histogram is not None:
        return count_rate(s.histogram, plan.agg_labels)
    return requests_rate(plan)


def windows(s: SLOPlan) -> list[int]:
    """Every window (ms) an SLO needs an error ratio for: tier windows and the SLO window, sorted."""
    found = {s.window_ms, FIVE_MINUTES_MS}
    for tier in s.tiers:
        found.update((tier.long_window_ms, tier.short_window_ms))
    return sorted(found)


def _slo(s: SLOPlan) -> Matcher:
    return Matcher(naming.SLO, "=", s.name)


def error_ratio_record(plan: ServicePlan, window_ms: int) -> str:
    """Record name of the SLI error ratio over ``window_ms``."""
    return naming.record(plan.group_by, naming.SLI_ERROR, f"ratio_rate{naming.window(window_ms)}")


def sli_records(plan: ServicePlan, s: SLOPlan) -> list[Rule]:
    """Recording rules of one SLO: 5m good/total rates, error ratio per window, SLI, budget, burn rate."""
    g = plan.group_by
    labels = {naming.SLO: s.name}
    good = naming.record(g, naming.SLI_GOOD, "rate5m")
    total = naming.record(g, naming.SLI_TOTAL, "rate5m")
    rules = [
        record_rule(plan, good, good_rate(plan, s), labels),
        record_rule(plan, total, total_rate(plan, s), labels),
    ]
    good_sel = recorded(plan, good, _slo(s))
    total_sel = recorded(plan, total, _slo(s))
    for window_ms in windows(s):
        if window_ms == FIVE_MINUTES_MS:
            good_w, total_w = good_sel, total_sel
        else:
            w = naming.window(window_ms)
            good_w, total_w = f"sum_over_time({good_sel}[{w}])", f"sum_over_time({total_sel}[{w}])"
        # 0 at zero traffic, but nothing (not a healthy 0) when the good series is missing.
        expr = f"({total_w} - {good_w}) / ({total_w} > 0) or {total_w} == 0"
        rules.append(record_rule(plan, error_ratio_record(plan, window_ms), expr, labels))
    slo_error = recorded(plan, error_ratio_record(plan, s.window_ms), _slo(s))
    budget = decimal_str(s.error_budget)
    w = naming.window(s.window_ms)
    rules += [
        record_rule(
            plan, naming.record(g, "slo_sli", f"ratio_rate{w}"), f"1 - {slo_error}", labels
        ),
        record_rule(
            plan,
            naming.record(g, naming.SLO_BUDGET_REMAINING, "ratio"),
            f"1 - {slo_error} / {budget}",
            labels,
        ),
        record_rule(
            plan,
            naming.record(g, "slo_objective", "ratio"),
            f"vector({decimal_str(Fraction(str(s.objective)) / 100)})",
            labels,
        ),
    ]
    if s.tiers:
        fastest = min(t.long_window_ms for t in s.tiers)
        current = recorded(plan, error_ratio_record(plan, fastest), _slo(s))
        rules.append(
            record_rule(
                plan,
                naming.record(g, naming.SLO_BURN_RATE, f"ratio_rate{naming.window(fastest)}"),
                f"{current} / {budget}",
                labels,
            )
        )
    return rules


def burn_rate_alerts(plan: ServicePlan, s: SLOPlan) -> list[Rule]:
    """One ``ErrorBudgetBurn`` rule per tier of ``s``."""
    rules: list[Rule] = []
    on = ", ".join(sorted({*plan.agg_labels, naming.SERVICE, naming.SLO}))
    total = recorded(plan, naming.record(plan.group_by, naming.SLI_TOTAL, "rate5m"), _slo(s))
    for tier in s.tiers:
        long_w, short_w = naming.window(tier.long_window_ms), naming.window(tier.short_window_ms)
        threshold = decimal_str(tier.threshold)
        long_ratio = recorded(plan, error_ratio_record(plan, tier.long_window_ms), _slo(s))
        short_ratio = recorded(plan, error_ratio_record(plan, tier.short_window_ms), _slo(s))
        # Events in the long window, estimated twice; both must reach min_events.
        # 1. Mean of the 5m rate × the window: extrapolates a window that holds less history
        #    (a new service, rules loaded minutes ago) to all of it.
        mean = f"avg_over_time({total}[{long_w}]) * {tier.long_window_ms // 1000}"
        # 2. Σ of the recorded rates × the evaluation interval, which the rule cannot know; it
        #    is read off the samples: 5m / count_over_time([5m]). Never extrapolates; under
        #    Prometheus 2's closed ranges it counts 5m/(5m + interval) of the events (83 % at 1m).
        recorded_events = f"sum_over_time({total}[{long_w}]) * 300 / count_over_time({total}[5m])"
        expr = (
            f"{long_ratio} > {threshold}\n"
            f"and on ({on}) {short_ratio} > {threshold}\n"
            f"and on ({on}) {mean} >= {s.min_events}\n"
            f"and on ({on}) {recorded_events} >= {s.min_events}"
        )
        exhaustion = Fraction(s.window_ms, 1000) / tier.factor
        rules.append(
            alert_rule(
                plan,
                naming.ALERT_ERROR_BUDGET_BURN,
                expr,
                0,
                tier.severity,
                {
                    naming.SLO: s.name,
                    naming.LONG_WINDOW: long_w,
                    naming.SHORT_WINDOW: short_w,
                    naming.BURN_RATE: decimal_str(tier.factor),
                },
                slo=s.name,
                objective=decimal_str(s.objective),
                window=naming.window(s.window_ms),
                long_window=long_w,
                short_window=short_w,
                burn_rate=decimal_str(tier.factor),
                threshold=threshold,
                budget_percent=decimal_str(tier.budget * 100),
                exhaustion=format_duration_ms(int(exhaustion * 1000)),
            )
        )
    return rules


def slo_groups(plan: ServicePlan) -> list[Group]:
    """One group per SLO with its recording rules followed by its burn-rate alerts.

    Rules in a group are evaluated in order at the same timestamp, so the alerts read the
    ratios recorded in the same evaluation.
    """
    return [
        group(plan, f"slo.{s.name}", [*sli_records(plan, s), *burn_rate_alerts(plan, s)])
        for s in plan.slos
    ]
