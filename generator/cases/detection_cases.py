"""Generated promtool cases of detection time: each burn-rate tier pages within its bound
after an onset, at each evaluation interval, and an ended burst resolves.

Part of :mod:`generator.cases.rule_tests`; the bounds and why they hold:
docs/proof.md, "Generated promtool tests".
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from generator import naming, slo
from generator.cases.slo_cases import (
    all_bad,
    burns_for_phases,
    distinct_slos,
    onset_series,
    sampling,
    shares_mix,
    slo_bad_ratio,
)
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    INTERVAL_MS,
    MARGIN,
    Klass,
    alert_test,
    promtool_group,
)
from generator.plan import ServicePlan, SLOPlan
from generator.slo import Tier
from generator.units import format_duration_ms, seconds_text

# --- detection time ------------------------------------------------------------------------

# Evaluation intervals of detection cases, finest first; each interval gets its own test file
# (``evaluation_interval`` is per file). promtool evaluates every rule at every step, so a 3d
# tier at 1m would take thousands of steps; the coarsest interval that leaves at least
# MIN_WINDOW_SAMPLES evaluations in the long window keeps each case near 50–150 steps.
DETECTION_INTERVALS_MS = (60_000, 600_000, 3_600_000, 10_800_000)
MIN_WINDOW_SAMPLES = 24
# Scrape interval of the coarser cases (days of 15s samples would dominate promtool's time).
# At a coarse step the rules' increments cover only the scrape interval before each
# evaluation; :class:`generator.slo.Sampling` models that, and piecewise-constant traffic
# that changes on evaluations keeps every window ratio exact.
SLOW_SCRAPE_MS = 150_000


def detection_interval_ms(tier: Tier, query_offset_ms: int = 0) -> int | None:
    """Evaluation interval (ms) of ``tier``'s detection case (see DETECTION_INTERVALS_MS).

    With a query offset the checks are shifted by it (:func:`generator.cases.rule_tests.
    shifted`), exact only where the interval divides it: None (no detection case; the tier's
    thresholds are still proved by the steady burn cases) when the coarsest fitting interval
    does not. A finer interval would make a 3d tier's case cost thousands of evaluations.
    """
    fitting = [e for e in DETECTION_INTERVALS_MS if tier.long_window_ms // e >= MIN_WINDOW_SAMPLES]
    e = max(fitting, default=DETECTION_INTERVALS_MS[0])
    return None if query_offset_ms % e else e


def _scrape_ms(plan: ServicePlan, e: int) -> int:
    """Series step of a detection case: the spec's scrape interval in the 1m file (what
    ``obsgen explain`` assumes), SLOW_SCRAPE_MS in the coarser files."""
    return plan.scrape_interval_ms if e == INTERVAL_MS else SLOW_SCRAPE_MS


def _outage_mix(plan: ServicePlan, slos: Sequence[SLOPlan]) -> list[Klass] | None:
    """A total outage for every SLO of ``slos`` at once: one class of events that each of them
    counts as bad (:func:`all_bad`); None when one of them would not count it so."""
    mix = [all_bad(slos, BASE_PER_MIN * 100)]
    if any(slo_bad_ratio(s, mix)[0] != 1 for s in slos):
        return None
    return mix


def detection_group(
    plan: ServicePlan, members: Sequence[tuple[SLOPlan, Tier]], outage: bool = False
) -> tuple[int, dict[str, Any]] | None:
    """(evaluation interval, case) for tiers with the same windows (one per SLO): healthy
    traffic for the long window + one evaluation interval, then every SLO burning 5 % above
    its tier's threshold; silent one evaluation before the detection time our rules give
    (:func:`generator.slo.detection_ms`, at the spec's scrape interval in the 1m file), firing
    at it. None when the members cannot share a case (different detection times, or their
    bad shares do not fit) or a threshold leaves no room above it.

    ``outage`` (1m file only): every event bad for every member SLO at once
    (:func:`_outage_mix`); each member's tier is asserted silent one evaluation before its own
    detection time and firing at it, and every assertion expects the alerts of every SLO at
    that time (:func:`burns_for_phases`). None when one class cannot be bad for all members."""
    tier = members[0][1]
    e = detection_interval_ms(tier, plan.query_offset_ms)
    if e is None or (outage and e != INTERVAL_MS):
        return None
    targets = [
        Fraction(1) if outage else min(Fraction(1), t.threshold * (1 + MARGIN)) for _, t in members
    ]
    after = (
        _outage_mix(plan, [s for s, _ in members])
        if outage and len(members) > 1
        else shares_mix(plan, members, targets)
    )
    if after is None:
        return None
    scrape = _scrape_ms(plan, e)
    how = sampling(plan, e, scrape)
    found = [slo.detection_ms(t, slo_bad_ratio(s, after)[0], how) for s, t in members]
    detects = [d for d in found if d is not None]
    if len(detects) != len(members) or (not outage and len(set(detects)) != 1):
        return None
    history = how.aligned(tier.long_window_ms + plan.evaluation_interval_ms)
    healthy_traffic = [Klass(BASE_PER_MIN * 100)]
    checks = sorted({history + d - since for d in detects for since in (e, 0)})
    steps = checks[-1] // scrape + 2
    series = onset_series(plan, healthy_traffic, after, history // scrape, steps, scrape)
    tests = [
        alert_test(
            at,
            naming.ALERT_ERROR_BUDGET_BURN,
            burns_for_phases(plan, [(0, healthy_traffic), (history, after)], at, e, scrape),
        )
        for at in checks
    ]

    def name(part: Sequence[int]) -> str:
        """The case of members ``part`` (indexes), which share one detection time."""
        detect = detects[part[0]]
        # One evaluation earlier the short window is normally over already: a fresh spike that
        # a lowered long-window threshold would let through.
        spike = all(
            slo.window_ratio(
                [(0, Fraction(0)), (history, slo_bad_ratio(members[i][0], after)[0])],
                history + detect - e,
                members[i][1].short_window_ms,
                how,
            )
            > members[i][1].threshold
            for i in part
        )
        workbook = min(members[i][1].detection_seconds(targets[i]) for i in part)
        what = "every event bad" if outage else "5% above the threshold"
        return (
            f"{', '.join(members[i][0].name for i in part)} "
            f"{naming.window(tier.long_window_ms)}/{naming.window(tier.short_window_ms)}: "
            f"{what} after a healthy {format_duration_ms(history)} fires "
            f"{format_duration_ms(detect)} in, not {seconds_text(Fraction(detect - e, 1000))}"
            f"{' (short window over, long under)' if spike else ''} "
            f"(Workbook: {seconds_text(workbook)})"
        )

    # A total outage names each SLO's case apart (each its own time); else one time for all.
    parts = [[i] for i in range(len(members))] if outage else [list(range(len(members)))]
    return e, promtool_group(" | ".join(map(name, parts)), series, tests, scrape)


def outage_group(
    plan: ServicePlan, members: Sequence[tuple[SLOPlan, Tier]]
) -> tuple[int, dict[str, Any]] | None:
    """:func:`detection_group` for a total outage: the time ``obsgen explain`` prints."""
    return detection_group(plan, members, outage=True)


def burst_ended_group(
    plan: ServicePlan, members: Sequence[tuple[SLOPlan, Tier]]
) -> tuple[int, dict[str, Any]] | None:
    """(evaluation interval, case) for tiers with the same windows: every SLO burns at twice its
    threshold, then drops to 5 % below it; once the short window holds only the low share
    (its ratio is exactly 95 % of the threshold) the long window is still over, and the tier
    must stay silent. A lowered short-window threshold fires here. None when the shares do not
    fit or the long window would not be over."""
    tier = members[0][1]
    e = detection_interval_ms(tier, plan.query_offset_ms)
    if e is None:
        return None
    burst = shares_mix(plan, members, [min(Fraction(1), t.threshold * 2) for _, t in members])
    low = shares_mix(plan, members, [t.threshold * (1 - MARGIN) for _, t in members])
    if burst is None or low is None:
        return None
    scrape = _scrape_ms(plan, e)
    how = sampling(plan, e, scrape)
    # Long enough for the short window to hold only the low phase.
    switch = how.aligned(tier.short_window_ms + plan.evaluation_interval_ms)
    at = 2 * switch
    for s, t in members:
        shares = [(0, slo_bad_ratio(s, burst)[0]), (switch, slo_bad_ratio(s, low)[0])]
        if slo.window_ratio(shares, at, t.long_window_ms, how) <= t.threshold:
            return None
    # With keepFiringFor the tier fired during the burst keeps firing that long: checked at
    # the same time, and once more after keepFiringFor, when it must have resolved.
    kept = max(s.keep_firing_for_ms for s, _ in members)
    checks = [at, how.aligned(at + kept + e)] if kept else [at]
    series = onset_series(plan, burst, low, switch // scrape, checks[-1] // scrape + 2, scrape)
    tests = [
        alert_test(
            t,
            naming.ALERT_ERROR_BUDGET_BURN,
            burns_for_phases(plan, [(0, burst), (switch, low)], t, e, scrape),
        )
        for t in checks
    ]
    name = (
        f"{', '.join(s.name for s, _ in members)} "
        f"{naming.window(tier.long_window_ms)}/{naming.window(tier.short_window_ms)}: "
        f"a burst that ended (2x the threshold for {format_duration_ms(switch)}, then 5% below) "
        "stays silent: long window over, short window under"
        + (f" (after keepFiringFor {format_duration_ms(kept)})" if kept else "")
    )
    return e, promtool_group(name, series, tests, scrape)


def detection_groups(plan: ServicePlan) -> dict[int, list[dict[str, Any]]]:
    """Detection-time (5 % above; a total outage in the 1m file) and burst-ended cases of every
    tier, by evaluation interval (ms). Tiers with the same windows share one case when they
    can (fewer promtool steps); otherwise one case each."""
    by_windows: dict[tuple[int, int], list[tuple[SLOPlan, Tier]]] = {}
    for s in distinct_slos(plan):
        for tier in s.tiers:
            by_windows.setdefault((tier.long_window_ms, tier.short_window_ms), []).append((s, tier))
    out: dict[int, list[dict[str, Any]]] = {}
    for _, members in sorted(by_windows.items()):
        for build in (detection_group, outage_group, burst_ended_group):
            shared = build(plan, members)
            cases = [shared] if shared else [build(plan, [m]) for m in members]
            for case in cases:
                if case is not None:
                    out.setdefault(case[0], []).append(case[1])
    return out
