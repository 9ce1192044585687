"""Generated promtool cases of the goodput SLOs (:mod:`generator.builders.goodput_rules`).

Per goodput SLO two groups, each request class slow on one target only: *within target*
(each target's share ``0.8 × budget / N``: the bound itself, not only the truth, meets the
objective; every tier silent) and *pages on the sum* (each share ``1.25 × T / N``, ``T`` the
highest page threshold, so no share alone reaches it but the bound does). With budget levels
(``GoodputBudgetLow``) two more: *budget kept* (the bound spends half of what the highest level
allows: every goodput alert silent) and *between levels* (the bound leaves the budget midway
between the two highest levels: the higher one tickets). Expectations in exact arithmetic
(:func:`expected_burns`, :func:`expected_budget_lows`); every group asserts both alerts.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from generator import naming, slo
from generator.builders import goodput_rules, slo_rules
from generator.cases.slo_cases import sampling
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    INTERVAL_MS,
    Klass,
    agg_of,
    alert_test,
    expected_alert,
    promtool_group,
    steps_until,
)
from generator.plan import GoodputTargetPlan, HistogramPlan, ServicePlan, SLOPlan
from generator.signals.healthy import healthy
from generator.units import decimal_str

CHECK_MS = 30 * INTERVAL_MS  # constant shares from the first sample: every window reads them
WITHIN = Fraction(8, 10)  # healthy: the bound's bad share at 80 % of the error budget
OVER = Fraction(5, 4)  # failing: the bound's bad share 25 % above the highest page threshold


def _slow_seconds(t: GoodputTargetPlan) -> float:
    """A duration (s) over ``t``'s threshold: the next bucket bound, or twice the bound."""
    h = t.histogram
    above = [b for b in h.buckets if b > t.bound]
    return (above[0] if above else t.bound * 2) * h.seconds_per_unit


def _is_slow(k: Klass, h: HistogramPlan, bound: float) -> bool:
    return k.duration(h) > bound * h.seconds_per_unit


def _per_min(plan: ServicePlan) -> int:
    """Requests a minute: enough that every SLO's long window counts ``min_events`` by
    :data:`CHECK_MS` (25 minutes of increments, with room to spare)."""
    most = max((s.min_events for s in plan.goodput), default=0)
    return max(BASE_PER_MIN, -(-most // 25))


def _classes(s: SLOPlan, per_min: int, bound_share: Fraction) -> list[Klass]:
    """Requests a minute: each target's share ``bound_share / N`` slow on that target alone,
    the rest fast everywhere."""
    share = bound_share / len(s.targets)
    slow = [
        Klass(float(per_min * share), durations=((t.histogram.key, _slow_seconds(t)),))
        for t in s.targets
    ]
    rest = per_min - sum(Fraction(k.per_min) for k in slow)
    return [Klass(float(rest)), *slow]


def _shares(s: SLOPlan, classes: list[Klass]) -> list[Fraction]:
    """Each target's violation share (0–1) of ``s`` on constant traffic ``classes``."""
    total = sum((Fraction(k.per_min) for k in classes), Fraction(0))
    return [
        sum(
            (Fraction(k.per_min) for k in classes if _is_slow(k, t.histogram, t.bound)),
            Fraction(0),
        )
        / total
        for t in s.targets
    ]


def _bound(
    plan: ServicePlan, s: SLOPlan, classes: list[Klass], at_ms: int, window_ms: int
) -> Fraction:
    """The union bound's bad share (0–1) of ``s`` the rules record over ``window_ms`` at
    ``at_ms`` on constant traffic ``classes`` counted from 0: each target's share where its
    window holds events, 0 where it holds none (:func:`generator.slo.window_ratio`, hourly
    tiles for a window of a day or more)."""
    how = sampling(plan, INTERVAL_MS, INTERVAL_MS)
    read = (slo.window_ratio([(0, share)], at_ms, window_ms, how) for share in _shares(s, classes))
    return min(sum(read, Fraction(0)), Fraction(1))


def _requests(plan: ServicePlan, classes: list[Klass], at_ms: int, window_ms: int) -> Fraction:
    """Requests the ``minEvents`` guard counts over ``window_ms`` at ``at_ms``
    (:func:`generator.slo.recorded_events`)."""
    per_s = sum((Fraction(k.per_min) for k in classes), Fraction(0)) / 60
    return slo.recorded_events(per_s, at_ms, window_ms, sampling(plan, INTERVAL_MS, INTERVAL_MS))


def _labels(plan: ServicePlan) -> dict[str, str]:
    labels = {**agg_of(plan, plan.goodput[0].targets[0].histogram.matchers)} if plan.goodput else {}
    labels[naming.SERVICE] = plan.name
    return labels


def expected_burns(plan: ServicePlan, classes: list[Klass], at_ms: int) -> list[dict[str, Any]]:
    """The ``GoodputBudgetBurn`` alerts of every goodput SLO of ``plan`` on constant traffic
    ``classes`` at ``at_ms``: a tier fires when the bound over both its windows exceeds its
    threshold and its long window counted ``min_events`` requests."""
    out = []
    for s in plan.goodput:
        rules = goodput_rules.burn_alerts(plan, s)
        for tier, rule in zip(s.tiers, rules, strict=True):
            over = all(
                _bound(plan, s, classes, at_ms, w) > tier.threshold
                for w in (tier.long_window_ms, tier.short_window_ms)
            )
            if over and _requests(plan, classes, at_ms, tier.long_window_ms) >= s.min_events:
                out.append(expected_alert(rule, _labels(plan), None))
    return out


def expected_budget_lows(
    plan: ServicePlan, classes: list[Klass], at_ms: int
) -> list[dict[str, Any]]:
    """The ``GoodputBudgetLow`` tickets of every goodput SLO of ``plan`` on constant traffic
    ``classes`` at ``at_ms``: the lowest level above the budget left by the bound over the SLO
    window (``1 − bound / budget``), once that window counted ``min_events`` requests."""
    out = []
    for s in plan.goodput:
        left = 1 - _bound(plan, s, classes, at_ms, s.window_ms) / s.error_budget
        crossed = [i for i, lvl in enumerate(s.budget_levels) if left < Fraction(str(lvl))]
        if not crossed or _requests(plan, classes, at_ms, s.window_ms) < s.min_events:
            continue
        rule = goodput_rules.budget_low_alerts(plan, s)[crossed[-1]]
        out.append(expected_alert(rule, _labels(plan), None))
    return out


def check_ms(plan: ServicePlan) -> int:
    """When the cases check: :data:`CHECK_MS`, or the first tile (1h) where a goodput SLO's
    window of a day or more sums hourly tiles (:func:`generator.slo.tiled`: none before it)."""
    tiled = any(
        slo.tiled(w, plan.evaluation_interval_ms)
        for s in plan.goodput
        for w in slo_rules.windows(s)
    )
    return max(CHECK_MS, slo.TILE_MS) if tiled else CHECK_MS


def _cases(s: SLOPlan) -> list[tuple[str, Fraction]]:
    """(group name, the bound's bad share) of the groups of goodput SLO ``s``."""
    cases = []
    if s.tiers:
        pages = [t.threshold for t in s.tiers if t.severity == "critical"] or [
            max(t.threshold for t in s.tiers)
        ]
        over = min(OVER * max(pages), (1 + max(pages)) / 2)
        cases += [
            ("within target: no burn", WITHIN * s.error_budget),
            ("each target under the page threshold, the sum over it: pages", over),
        ]
    levels = [Fraction(str(x)) for x in s.budget_levels]
    if levels:
        cases.append(
            ("budget kept: every goodput alert silent", (1 - levels[0]) / 2 * s.error_budget)
        )
    if len(levels) >= 2:
        mid = (levels[0] + levels[1]) / 2
        cases.append(
            (
                f"the bound leaves {decimal_str(mid * 100)}% of the budget: the "
                f"{decimal_str(levels[0] * 100)}% level tickets",
                (1 - mid) * s.error_budget,
            )
        )
    return cases


def goodput_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """The two groups of each goodput SLO with tiers (module docstring)."""
    groups = []
    per_min = _per_min(plan)
    at = check_ms(plan)
    steps = steps_until(at)
    for s in plan.goodput:
        for name, share in _cases(s):
            classes = _classes(s, per_min, share)
            series = healthy(plan, classes, steps).render(steps)
            tests = [
                alert_test(at, goodput_rules.ALERT, expected_burns(plan, classes, at)),
                alert_test(at, goodput_rules.BUDGET_LOW, expected_budget_lows(plan, classes, at)),
            ]
            groups.append(promtool_group(f"{goodput_rules.ALERT} {s.name}: {name}", series, tests))
    return groups
