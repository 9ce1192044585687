"""Goodput SLOs (``spec.slos[].targets``): records of the union bound and its burn-rate alerts.

A request is good when it meets every target; servers export one histogram per signal, so
obsgen records the lower bound (union bound) ``goodput ≥ 1 − Σ_i violations_i / requests_i``
(each share from histogram ``i`` at its threshold's bucket bound) and pages on it with the
SLO's burn-rate tiers (``GoodputBudgetBurn``). Records, soundness and why a missing target
records nothing: docs/slo.md, "Goodput SLOs (union bound)"; windows of a day or more
sum hourly tiles: docs/slo.md, "Hourly tiles (the long windows' cost)"; users' view:
docs/spec.md, "Goodput SLOs".
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from generator import naming, slo
from generator.builders import slo_rules
from generator.parts.common import Group, Rule, alert_rule, group, record_rule
from generator.parts.common import recorded as recorded_selector
from generator.plan import GoodputTargetPlan, ServicePlan, SLOPlan
from generator.promql import Matcher
from generator.units import decimal_str

ALERT = naming.ALERT_GOODPUT_BURN
OUTCOMES = "slo_goodput_outcomes"
VIOLATIONS = "slo_goodput_violations"
BOUND = "slo_goodput_violation_bound"
LOWER_BOUND = "slo_goodput_lower_bound"
BUDGET = "slo_goodput_budget_remaining"
BUDGET_LOW = naming.ALERT_GOODPUT_BUDGET_LOW
BOUND_NAME = "lower bound (union bound)"


def _as_latency(s: SLOPlan, target: GoodputTargetPlan) -> SLOPlan:
    """``s`` as a latency SLO of one target, to reuse the latency SLO's event expressions."""
    return replace(
        s,
        kind="latency",
        histogram=target.histogram,
        threshold_seconds=target.threshold_seconds,
        threshold_bound=target.bound,
        targets=(),
    )


def outcomes_record(plan: ServicePlan) -> str:
    """Record name of the per-target bad and total increments."""
    return naming.record(plan.group_by, OUTCOMES, naming.increase(plan.evaluation_interval_ms))


def tiles_record(plan: ServicePlan) -> str:
    """Record name of the per-target hourly tiles: each target's bad and total increments of
    the hour that ends at the evaluation in each hour's first interval (as
    :func:`slo_rules.tiles_record` of the other SLOs), one sample an hour."""
    return naming.record(plan.group_by, OUTCOMES, naming.increase(slo.TILE_MS) + "_hourly")


def tiles_expr(plan: ServicePlan, s: SLOPlan) -> str:
    """Every target's bad and total increments of the hour (labels ``indicator`` and
    ``events`` kept), only at the evaluation in the hour's first interval
    (:func:`slo_rules.tiles_expr`)."""
    every = recorded_selector(plan, outcomes_record(plan), _slo(s))
    first = decimal_str(Fraction(plan.evaluation_interval_ms, 1000))
    return (
        f"sum_over_time({every}[{_range(plan, slo.TILE_MS)}])\n"
        f"and on () (vector(time() % {slo.TILE_MS // 1000}) < {first})"
    )


def window_sum(
    plan: ServicePlan, s: SLOPlan, t: GoodputTargetPlan, events: str, window_ms: int
) -> str:
    """Target ``t``'s bad or total events (``events``) over ``window_ms``: the sum of its
    per-evaluation increments, or of its hourly tiles for a window of a day or more
    (:func:`slo_rules.tiled`; ending at the newest tile, up to an hour before now)."""
    name = tiles_record(plan) if slo_rules.tiled(plan, window_ms) else outcomes_record(plan)
    sel = recorded_selector(plan, name, _slo(s), _target(t), Matcher(naming.EVENTS, "=", events))
    return f"sum_over_time({sel}[{_range(plan, window_ms)}])"


def violations_record(plan: ServicePlan, window_ms: int) -> str:
    """Record name of one target's violation share (0–1) over ``window_ms``."""
    return naming.record(plan.group_by, VIOLATIONS, naming.ratio_rate(window_ms))


def bound_record(plan: ServicePlan, window_ms: int) -> str:
    """Record name of the union bound of the bad share (0–1) over ``window_ms``."""
    return naming.record(plan.group_by, BOUND, naming.ratio_rate(window_ms))


def lower_bound_record(plan: ServicePlan, window_ms: int) -> str:
    """Record name of the goodput lower bound (0–1) over the SLO window ``window_ms``."""
    return naming.record(plan.group_by, LOWER_BOUND, naming.ratio_rate(window_ms))


def budget_record(plan: ServicePlan) -> str:
    """Record name of the share (≤ 1; negative once overspent) of the error budget left over
    the SLO window, read from the union bound: ``1 − bound / budget`` — never more than the
    truth's budget left."""
    return naming.record(plan.group_by, BUDGET, "ratio")


def _slo(s: SLOPlan) -> Matcher:
    return Matcher(naming.SLO, "=", s.name)


def _target(t: GoodputTargetPlan) -> Matcher:
    return Matcher(naming.INDICATOR, "=", t.histogram.indicator)


def _range(plan: ServicePlan, window_ms: int) -> str:
    """Range of a window: half an evaluation short (as every SLO's, see :mod:`slo_rules`)."""
    return naming.window(window_ms - plan.evaluation_interval_ms // 2)


def records(plan: ServicePlan, s: SLOPlan) -> list[Rule]:
    """The recording rules of goodput SLO ``s`` (module docstring), in evaluation order."""
    rules = []
    for t in s.targets:
        labels = {naming.SLO: s.name, naming.INDICATOR: t.histogram.indicator}
        expr = slo_rules.events_expr(plan, _as_latency(s, t))
        rules.append(record_rule(plan, outcomes_record(plan), expr, labels))
    if any(slo_rules.tiled(plan, w) for w in slo_rules.windows(s)):
        rules.append(
            record_rule(plan, tiles_record(plan), tiles_expr(plan, s), {naming.SLO: s.name})
        )
    for window_ms in slo_rules.windows(s):
        for t in s.targets:
            bad, total = (
                f"sum without ({naming.EVENTS}) ({window_sum(plan, s, t, e, window_ms)})"
                for e in (naming.EVENTS_BAD, naming.EVENTS_TOTAL)
            )
            # As the SLO ratios: + 1e-300 makes 0 of 0 a 0, clamp_max a bad increment read
            # before its total no more than all bad.
            labels = {naming.SLO: s.name, naming.INDICATOR: t.histogram.indicator}
            expr = f"clamp_max({bad} / ({total} + 1e-300), 1)"
            rules.append(record_rule(plan, violations_record(plan, window_ms), expr, labels))
        shares = [
            recorded_selector(plan, violations_record(plan, window_ms), _slo(s), _target(t))
            for t in s.targets
        ]
        # One-to-one sums ignoring the target: absent while any target's share is.
        total_share = f" + ignoring ({naming.INDICATOR}) ".join(shares)
        rules.append(
            record_rule(
                plan,
                bound_record(plan, window_ms),
                f"clamp_max({total_share}, 1)",
                {naming.SLO: s.name},
            )
        )
    bound = recorded_selector(plan, bound_record(plan, s.window_ms), _slo(s))
    rules += [
        record_rule(
            plan, lower_bound_record(plan, s.window_ms), f"1 - {bound}", {naming.SLO: s.name}
        ),
        record_rule(
            plan,
            naming.record(plan.group_by, naming.SLO_OBJECTIVE, "ratio"),
            f"vector({decimal_str(Fraction(str(s.objective)) / 100)})",
            {naming.SLO: s.name},
        ),
        record_rule(
            plan,
            budget_record(plan),
            f"1 - {bound} / {decimal_str(s.error_budget)}",
            {naming.SLO: s.name},
        ),
    ]
    return rules


def _describe(s: SLOPlan) -> str:
    """The targets as users read them, in seconds: ``ttft ≤ 2.5s, e2e ≤ 30s``."""
    return ", ".join(
        f"{t.histogram.indicator} ≤ {decimal_str(t.threshold_seconds)}s" for t in s.targets
    )


def _requests(plan: ServicePlan, s: SLOPlan, window_ms: int) -> str:
    """Requests of ``s``'s first target over ``window_ms`` (the ``minEvents`` guard's count):
    its total increments, or its tiles for a window of a day or more."""
    total = window_sum(plan, s, s.targets[0], naming.EVENTS_TOTAL, window_ms)
    return f"sum without ({naming.INDICATOR}) ({total})"


def burn_alerts(plan: ServicePlan, s: SLOPlan) -> list[Rule]:
    """One ``GoodputBudgetBurn`` per tier of ``s``: the union bound over both windows above the
    tier's threshold, with at least ``min_events`` requests of the first target in the long
    window."""
    on = ", ".join(sorted({*plan.agg_labels, naming.SERVICE, naming.SLO}))
    rules = []
    for tier in s.tiers:
        threshold = decimal_str(tier.threshold)
        long_b = recorded_selector(plan, bound_record(plan, tier.long_window_ms), _slo(s))
        short_b = recorded_selector(plan, bound_record(plan, tier.short_window_ms), _slo(s))
        events = _requests(plan, s, tier.long_window_ms)
        expr = (
            f"{long_b} > {threshold}\n"
            f"and on ({on}) {short_b} > {threshold}\n"
            f"and on ({on}) {events} >= {s.min_events}"
        )
        rules.append(
            slo_rules.burn_alert(
                plan, ALERT, s, tier, expr, targets_text=_describe(s), bound_name=BOUND_NAME
            )
        )
    return rules


def budget_low_alerts(plan: ServicePlan, s: SLOPlan) -> list[Rule]:
    """One ``GoodputBudgetLow`` ticket per level of ``s.budget_levels`` (descending), as
    ``ErrorBudgetLow`` of the other SLOs (:func:`slo_rules.budget_low_alerts`): level ``L``
    fires while the budget left by the union bound over the SLO window is below ``L`` and not
    below the next level, once the window counted ``min_events`` requests of the first target.
    The bound may read less budget left than the truth (a request missing two targets counts
    twice), so a ticket may come early, never late; its text says so."""
    on = ", ".join(sorted({*plan.agg_labels, naming.SERVICE, naming.SLO}))
    left = recorded_selector(plan, budget_record(plan), _slo(s))
    events = _requests(plan, s, s.window_ms)
    rules = []
    for i, level in enumerate(s.budget_levels):
        below = s.budget_levels[i + 1] if i + 1 < len(s.budget_levels) else None
        cond = f"{left} < {decimal_str(level)}"
        if below is not None:
            cond = f"({cond}) >= {decimal_str(below)}"
        percent = decimal_str(Fraction(str(level)) * 100)
        rules.append(
            alert_rule(
                plan,
                BUDGET_LOW,
                f"{cond}\nand on ({on}) {events} >= {s.min_events}",
                0,
                "warning",
                {naming.SLO: s.name, naming.BUDGET_LEFT: percent},
                slo=s.name,
                objective=decimal_str(s.objective),
                window=naming.window(s.window_ms),
                level=percent,
                below="0" if below is None else decimal_str(Fraction(str(below)) * 100),
                targets_text=_describe(s),
                bound_name=BOUND_NAME,
            )
        )
    return rules


def goodput_groups(plan: ServicePlan) -> list[Group]:
    """One ``slo.<name>`` group per goodput SLO, at the SLO groups' interval (the increments'
    ``offset`` must equal it): its records, then its alerts (same evaluation)."""
    return [
        group(
            plan,
            f"slo.{s.name}",
            [*records(plan, s), *burn_alerts(plan, s), *budget_low_alerts(plan, s)],
            interval_ms=plan.evaluation_interval_ms,
        )
        for s in plan.goodput
    ]
