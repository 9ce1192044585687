"""Slow fastest pages: an SLO whose fastest paging tier needs more than :data:`SLOW_PAGE_MS` of
total outage to fire (a 95 % latency SLO at the default tiers pages only after 44 minutes
of every request failing). ``obsgen check`` and ``obsgen explain`` warn, naming the
file, the SLO, the time and two fixes worked out with the same tier math
(:func:`generator.slo.detection_ms`): the lowest tighter objective at which that tier pages in
time, and a faster critical tier at the same burn rate.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal
from fractions import Fraction

from generator import slo
from generator.errors import Diagnostic, Level
from generator.plan import ServicePlan, SLOPlan
from generator.units import decimal_str, format_duration_ms, seconds_text

MINUTE_MS = 60_000
SLOW_PAGE_MS = 30 * MINUTE_MS
"""The longest total outage (every event bad, ms) an SLO's fastest page may need to fire: past
it a full outage goes unpaged for over half an hour."""

# Long windows tried, longest first, for a faster page at the fastest page's burn rate.
_FASTER_LONG_WINDOWS_MS = tuple(m * MINUTE_MS for m in (30, 20, 15, 10, 5))


def sampling(plan: ServicePlan) -> slo.Sampling:
    """The spec's evaluation and scrape intervals, as the detection model takes them."""
    return slo.Sampling(plan.evaluation_interval_ms, plan.scrape_interval_ms)


def fastest_page(s: SLOPlan, how: slo.Sampling) -> tuple[slo.Tier, int] | None:
    """``s``'s critical tier that fires first on a total outage, and after how long (ms);
    None when no critical tier can fire on one (or there is none)."""
    found = [
        (ms, i, t)
        for i, t in enumerate(s.tiers)
        if t.severity == "critical" and (ms := slo.detection_ms(t, Fraction(1), how)) is not None
    ]
    if not found:
        return None
    ms, _, tier = min(found, key=lambda f: (f[0], f[1]))
    return tier, ms


def _at_objective(tier: slo.Tier, budget: Fraction) -> slo.Tier:
    """``tier`` (same windows, same budget share, so the same factor) under an SLO whose
    error budget is ``budget``."""
    return slo.Tier(
        tier.budget,
        tier.long_window_ms,
        tier.short_window_ms,
        tier.severity,
        tier.factor,
        tier.factor * budget,
    )


def tighter_objective(
    s: SLOPlan, tier: slo.Tier, how: slo.Sampling, bound_ms: int
) -> tuple[Decimal, int] | None:
    """The lowest objective (percent, in steps of 0.1 above ``s``'s, at most 99.9) at which
    ``tier`` fires within ``bound_ms`` of a total outage, and that time (ms); None if none."""
    step = Decimal("0.1")
    objective = (Decimal(str(s.objective)) / step).to_integral_value(ROUND_CEILING) * step
    while objective <= Decimal("99.9"):
        if objective > Decimal(str(s.objective)):
            budget = slo.error_budget(float(objective))
            ms = slo.detection_ms(_at_objective(tier, budget), Fraction(1), how)
            if ms is not None and ms <= bound_ms:
                return objective, ms
        objective += step
    return None


def faster_tier(
    s: SLOPlan, tier: slo.Tier, how: slo.Sampling, bound_ms: int
) -> tuple[slo.Tier, int] | None:
    """A critical tier at ``tier``'s burn rate with the longest long window of
    :data:`_FASTER_LONG_WINDOWS_MS` (short window a twelfth, whole minutes, at least four
    scrapes) that fires within ``bound_ms`` of a total outage, and that time (ms)."""
    for long_ms in _FASTER_LONG_WINDOWS_MS:
        if long_ms >= tier.long_window_ms:
            continue
        short_ms = max(
            MINUTE_MS, long_ms // 12 // MINUTE_MS * MINUTE_MS, 4 * how.scrape_interval_ms
        )
        # The budget share, rounded to 4 significant digits as a user would write it.
        share = Fraction(f"{float(slo.burn_rate_factor(tier.factor, long_ms, s.window_ms)):.4g}")
        factor = slo.burn_rate_factor(share, s.window_ms, long_ms)
        candidate = slo.Tier(share, long_ms, short_ms, "critical", factor, factor * s.error_budget)
        if candidate.threshold >= 1 or factor < 1:
            continue
        ms = slo.detection_ms(candidate, Fraction(1), how)
        if ms is not None and ms <= bound_ms:
            return candidate, ms
    return None


def _ms(ms: int) -> str:
    return seconds_text(Fraction(ms, 1000))


def _windows(t: slo.Tier) -> str:
    return f"{format_duration_ms(t.long_window_ms)}/{format_duration_ms(t.short_window_ms)}"


SLOW_PAGE_WARNINGS = "slow_page_warnings"  # the ServicePlan.derive key of plan_slow_page_warnings


def plan_slow_page_warnings(plan: ServicePlan) -> list[Diagnostic]:
    """:func:`slow_page_warnings` of ``plan`` at :data:`SLOW_PAGE_MS`, kept on the plan: a
    render's worker computes them beside the service's files and sends them back with it."""
    return plan.derive(SLOW_PAGE_WARNINGS, lambda: slow_page_warnings(plan))


def slow_page_warnings(plan: ServicePlan, bound_ms: int = SLOW_PAGE_MS) -> list[Diagnostic]:
    """One warning per SLO (goodput SLOs included) whose fastest page needs more than
    ``bound_ms`` of total outage to fire, at the spec's evaluation and scrape intervals, with
    the fixes (module docstring). SLOs without a critical tier are not paging SLOs: none."""
    how = sampling(plan)
    out = []
    for s in (*plan.slos, *plan.goodput):
        found = fastest_page(s, how)
        if found is None or found[1] <= bound_ms:
            continue
        tier, ms = found
        fixes = []
        tighter = tighter_objective(s, tier, how, bound_ms)
        if tighter is not None:
            fixes.append(f"a tighter objective ({tighter[0]}% pages after {_ms(tighter[1])})")
        faster = faster_tier(s, tier, how, bound_ms)
        if faster is not None:
            t, fast_ms = faster
            fixes.append(
                f"a faster critical tier in {s.path or 'spec.slos[]'}.alerting.tiers "
                f"(budget: {decimal_str(t.budget)}, longWindow: "
                f"{format_duration_ms(t.long_window_ms)}, shortWindow: "
                f"{format_duration_ms(t.short_window_ms)}, severity: critical — "
                f"{decimal_str(t.factor)}×, pages after {_ms(fast_ms)}; a tiers list replaces "
                "the default tiers, so list those you keep beside it)"
            )
        fix = " or ".join(fixes) if fixes else "a tighter objective or a faster critical tier"
        out.append(
            Diagnostic(
                plan.source,
                f"{s.path}.alerting" if s.path else "spec.slos",
                f"SLO {s.name!r} ({decimal_str(s.objective)}%): its fastest page, the "
                f"{_windows(tier)} tier ({decimal_str(tier.factor)}×, threshold "
                f"{decimal_str(tier.threshold)}), fires only after {_ms(ms)} of total outage "
                f"(every event bad), more than {_ms(bound_ms)}: a full outage goes unpaged "
                f"that long. Fix: {fix}",
                Level.WARNING,
            )
        )
    return out
