"""SLO math: error budgets, burn-rate tiers, detection and reset times.

More: docs/slo.md, "SLO math".
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from generator.units import decimal_str

HOUR_MS = 3_600_000
MINUTE_MS = 60_000
DAY_MS = 86_400_000


@dataclass(frozen=True)
class TierSpec:
    """A burn-rate tier before it is tied to an SLO: budget share, windows (ms), severity."""

    budget: Fraction
    long_window_ms: int
    short_window_ms: int
    severity: str


# SRE Workbook ch. 5, table 5-8 ("recommended"), with the 3d/6h ticket tier of §6.
DEFAULT_TIERS: tuple[TierSpec, ...] = (
    TierSpec(Fraction(2, 100), HOUR_MS, 5 * MINUTE_MS, "critical"),  # 14.4× at 30d: page
    TierSpec(Fraction(5, 100), 6 * HOUR_MS, 30 * MINUTE_MS, "critical"),  # 6× at 30d: page
    TierSpec(Fraction(10, 100), DAY_MS, 2 * HOUR_MS, "warning"),  # 3× at 30d: ticket
    TierSpec(Fraction(10, 100), 3 * DAY_MS, 6 * HOUR_MS, "warning"),  # 1× at 30d: ticket
)

# Default minimum number of events in the long window before a burn-rate tier may fire.
DEFAULT_MIN_EVENTS = 10


def error_budget(objective_percent: float) -> Fraction:
    """Allowed bad-event ratio (0–1) for an objective in percent: 99.9 → 1/1000."""
    return 1 - Fraction(str(objective_percent)) / 100


def burn_rate_factor(budget: Fraction, slo_window_ms: int, long_window_ms: int) -> Fraction:
    """Burn rate at which ``budget`` of the SLO window's error budget is spent in the long window.

    ``factor = budget × slo_window / long_window`` (SRE Workbook ch. 5, table 5-8):
    14.4 for 2 % over 1h at 30d, 13.44 at 28d, 6 for 5 % over 6h at 30d.
    """
    return budget * Fraction(slo_window_ms, long_window_ms)


@dataclass(frozen=True)
class Tier:
    """A burn-rate tier bound to one SLO.

    Attributes:
        budget: share (0–1) of the window's error budget consumed when it fires.
        long_window_ms, short_window_ms: the two windows, in ms.
        severity: ``critical`` pages, ``warning`` tickets.
        factor: burn rate (× the sustainable rate) that fires the tier.
        threshold: bad-event ratio (0–1) both windows must exceed: factor × error budget.
        raised_from: for a default tier whose Workbook budget share would give a factor
            below 1 (SLO windows shorter than 30d), the share it had before
            :func:`bind_default_tier` raised ``budget`` to make the factor exactly 1; else None.
    """

    budget: Fraction
    long_window_ms: int
    short_window_ms: int
    severity: str
    factor: Fraction
    threshold: Fraction
    raised_from: Fraction | None = None

    def detection_seconds(self, bad_ratio: Fraction = Fraction(1)) -> Fraction:
        """The Workbook's time to fire (s) after a step from no bad events to ``bad_ratio`` (0–1).

        The long window's ratio ``t`` seconds after the step is ``bad_ratio × t / long``; it
        crosses the threshold at ``t = threshold × long / bad_ratio`` (the short window
        crosses first). Total outage, 14.4× at 99.9 % over 1h: 0.0144 × 3600 s = 51.84 s; at
        twice the factor any tier needs half its long window.
        """
        return self.threshold * Fraction(self.long_window_ms, 1000) / bad_ratio

    def reset_seconds(self) -> Fraction:
        """Seconds after full recovery (following a long outage) until the alert resolves.

        The short window empties of bad events first; the AND condition stops holding once
        its ratio ``(short − t) / short`` drops to the threshold: ``t = short × (1 − threshold)``.
        """
        return Fraction(self.short_window_ms, 1000) * (1 - self.threshold)


def bind_tier(spec: TierSpec, objective_percent: float, slo_window_ms: int) -> Tier:
    """Compute factor and threshold of ``spec`` for an SLO (no validation)."""
    factor = burn_rate_factor(spec.budget, slo_window_ms, spec.long_window_ms)
    return Tier(
        budget=spec.budget,
        long_window_ms=spec.long_window_ms,
        short_window_ms=spec.short_window_ms,
        severity=spec.severity,
        factor=factor,
        threshold=factor * error_budget(objective_percent),
    )


def bind_default_tier(spec: TierSpec, objective_percent: float, slo_window_ms: int) -> Tier:
    """Bind one of :data:`DEFAULT_TIERS`, raising its budget share when the factor would be < 1.

    Below 1× a tier fires while the error budget is still on track to last the window (7d:
    the 1d tier is 0.7×, the 3d tier 0.233×). Such a tier keeps its windows but gets budget
    ``long_window / slo_window``, so its factor is exactly 1 (28d: the 3d tier's 10 % becomes
    3/28 ≈ 10.7 %); ``raised_from`` records the original share. A long window longer than the
    SLO window is left as it is (:func:`tier_problems` reports it).
    """
    tier = bind_tier(spec, objective_percent, slo_window_ms)
    if tier.factor >= 1 or spec.long_window_ms > slo_window_ms:
        return tier
    raised = TierSpec(
        Fraction(spec.long_window_ms, slo_window_ms),
        spec.long_window_ms,
        spec.short_window_ms,
        spec.severity,
    )
    return replace(bind_tier(raised, objective_percent, slo_window_ms), raised_from=spec.budget)


def max_reachable_burn_rate(objective_percent: float) -> Fraction:
    """Highest burn rate a total outage can reach: 1 / error budget (1000× at 99.9 %)."""
    return 1 / error_budget(objective_percent)


@dataclass(frozen=True)
class TierProblem:
    """Why a tier cannot work, and which setting causes it.

    Attributes:
        cause: ``objective`` (can never fire), ``scrape_interval`` (a window shorter than 4
            scrapes), ``evaluation_interval`` (a window not a multiple of it), ``slo_window``
            (long window longer than the SLO window), ``windows`` (short ≥ long) or
            ``factor`` (burn rate below 1×).
        message: one user-facing sentence.
    """

    cause: str
    message: str


def tier_problems(
    tier: Tier,
    objective_percent: float,
    slo_window_ms: int,
    scrape_interval_ms: int,
    evaluation_interval_ms: int = 60_000,
) -> list[TierProblem]:
    """Reasons ``tier`` cannot work (empty when it is fine).

    Checks (docs/contracts.md, rules 5 and 6): threshold > 1 (can never fire), factor < 1 (fires while the
    budget would last the window), short ≥ long window, windows shorter than 4 × scrape
    interval, windows that are not a whole number of evaluation intervals (each window sums
    one increment per evaluation), long window longer than the SLO window.
    """
    from generator.units import format_duration_ms as fmt

    problems = []
    # The alert compares `error_ratio > threshold`: a threshold of exactly 1 is never exceeded.
    if tier.threshold >= 1:
        problems.append(
            TierProblem(
                "objective",
                f"burn rate {decimal_str(tier.factor)}× can never fire at objective "
                f"{decimal_str(objective_percent)}%: it needs an error ratio above "
                f"{decimal_str(tier.threshold)}, and a ratio cannot exceed 1; burn rates must "
                f"stay below {decimal_str(max_reachable_burn_rate(objective_percent))}×",
            )
        )
    if tier.factor < 1 and tier.long_window_ms <= slo_window_ms:
        problems.append(
            TierProblem(
                "factor",
                f"burn rate {decimal_str(tier.factor)}× is below 1×: the tier would fire while "
                f"the error budget is on track to last the {fmt(slo_window_ms)} window; give it "
                f"budget ≥ {decimal_str(Fraction(tier.long_window_ms, slo_window_ms))} "
                "(longWindow / SLO window) or a shorter longWindow",
            )
        )
    if tier.short_window_ms >= tier.long_window_ms:
        problems.append(
            TierProblem(
                "windows",
                f"shortWindow {fmt(tier.short_window_ms)} must be shorter than longWindow "
                f"{fmt(tier.long_window_ms)} (the Workbook uses 1/12 of it)",
            )
        )
    for name, window in (
        ("shortWindow", tier.short_window_ms),
        ("longWindow", tier.long_window_ms),
    ):
        if window < 4 * scrape_interval_ms:
            problems.append(
                TierProblem(
                    "scrape_interval",
                    f"{name} {fmt(window)} is shorter than 4 × scrapeInterval "
                    f"({fmt(4 * scrape_interval_ms)}); a window needs at least 4 scrapes",
                )
            )
        if window % evaluation_interval_ms:
            problems.append(
                TierProblem(
                    "evaluation_interval",
                    f"{name} {fmt(window)} is not a multiple of evaluationInterval "
                    f"{fmt(evaluation_interval_ms)}; the window sums one increment per evaluation",
                )
            )
    if tier.long_window_ms > slo_window_ms:
        problems.append(
            TierProblem(
                "slo_window",
                f"longWindow {fmt(tier.long_window_ms)} is longer than the SLO window "
                f"{fmt(slo_window_ms)}",
            )
        )
    return problems


# --- what obsgen's rules record, and when they fire -----------------------------------------
#
# Every SLO records, at each evaluation, the events its counters gained since the previous
# evaluation (``x - x offset <interval>``, per series, reset-aware, then summed); a window's
# error ratio sums the increments of the window's evaluations. Evaluation timestamps are exact
# multiples of the group's interval, so a window holds exactly window / interval increments
# and they telescope: the window covers the scraped events between two scrapes one window
# apart, with no ramp and no extrapolation. What remains between the Workbook's instant ratio
# and these rules is when evaluations and scrapes happen; the functions below model exactly
# that, in exact arithmetic.

DEFAULT_EVALUATION_INTERVAL_MS = 60_000  # Prometheus' default global evaluation_interval

# --- hourly tiles: how the long windows are summed cheaply ------------------------------------
#
# Summing a 30-day window from per-evaluation increments reads 43,200 samples per series at 1m
# evaluations (86,400 at 30 s), at every evaluation. So each SLO also records, at the one
# evaluation in each hour's first interval (``time() % 3600 < interval``), the sum of the
# increments of the hour that ends there: a *tile*, one sample an hour. A window of at least
# :data:`TILED_FROM_MS` that is a whole number of hours sums its tiles instead (720 for 30d):
# exactly the increments of ``window`` that end at the newest tile, i.e. at the first
# evaluation of the current hour — the window ends up to one hour (less one evaluation
# interval) before now. Shorter windows (the page tiers' 1h/5m and 6h/30m, the ticket tiers'
# short windows) keep summing the increments themselves and stay exact.

TILE_MS = HOUR_MS
TILED_FROM_MS = DAY_MS  # windows this long or longer sum hourly tiles


def tiled(window_ms: int, evaluation_interval_ms: int) -> bool:
    """Whether the rules sum ``window_ms`` from hourly tiles: a window of a day or more, a
    whole number of hours, at an evaluation interval below an hour that divides it (one
    evaluation in each hour's first interval)."""
    return (
        window_ms >= TILED_FROM_MS
        and window_ms % TILE_MS == 0
        and evaluation_interval_ms < TILE_MS
        and TILE_MS % evaluation_interval_ms == 0
    )


def tile_times(at_ms: int, window_ms: int, sampling: Sampling) -> list[int]:
    """Evaluations (ms, newest first) whose tiles the window record at ``at_ms`` sums: those
    in ``(at − window + interval/2, at]`` (the range is half an interval short, as every
    window's) that fall in an hour's first evaluation interval."""
    c, e = sampling.evaluation_interval_ms, sampling.step
    lowest = at_ms - window_ms + c // 2
    found = []
    hour = at_ms // TILE_MS * TILE_MS
    while hour + c > lowest and hour >= 0:
        first = -(-hour // e) * e
        found += [t for t in range(first, min(hour + c, at_ms + 1), e) if t > lowest]
        hour -= TILE_MS
    return sorted(found, reverse=True)


@dataclass(frozen=True)
class Sampling:
    """When Prometheus scrapes and evaluates, as the model assumes it.

    Counters start at 0 at time 0 and are scraped at 0, ``scrape_interval_ms``, 2 × … .
    Rules are evaluated at 0, ``step_ms``, 2 × … ; each evaluation records the increments since
    ``evaluation_interval_ms`` earlier (the ``offset`` in the rule: the group's interval).
    ``step_ms`` is the evaluation interval itself in Prometheus, and a coarser one in promtool
    test files that evaluate every group at the file's ``evaluation_interval``; None = the same.
    All in ms.
    """

    evaluation_interval_ms: int = DEFAULT_EVALUATION_INTERVAL_MS
    scrape_interval_ms: int = DEFAULT_EVALUATION_INTERVAL_MS
    step_ms: int | None = None

    @property
    def step(self) -> int:
        """Milliseconds between two evaluations."""
        return self.step_ms or self.evaluation_interval_ms

    def aligned(self, at_least_ms: int) -> int:
        """The first time ≥ ``at_least_ms`` that is both a scrape and an evaluation."""
        both = math.lcm(self.step, self.scrape_interval_ms)
        return -(-at_least_ms // both) * both


# A bad-event profile: (start in ms since the counters began, bad share 0–1 from then on),
# sorted; the share is 0 before the first start. Total traffic is constant.
Profile = Sequence[tuple[int, Fraction]]


def covered_intervals(at_ms: int, window_ms: int, sampling: Sampling) -> list[tuple[int, int]]:
    """Scrape-to-scrape intervals ``(since, until]`` (ms) whose events a window record sums.

    The record at ``at_ms`` (an evaluation) sums the increments of the evaluations ``t`` in
    ``(at − window + interval/2, at]`` (the rule's range is half an interval short of the
    window, so Prometheus 2's closed and 3's left-open ranges both hold window / interval
    samples). Each increment is ``x(t) − x(t − interval)``, both read at the last scrape at or
    before their time, and exists once ``t − interval`` is at or after the first scrape.
    Consecutive increments join up (telescope) when evaluations are ``interval`` apart.
    A tiled window (:func:`tiled`) covers the 1h pieces of each of its tiles instead.
    """
    c, e, s = sampling.evaluation_interval_ms, sampling.step, sampling.scrape_interval_ms
    if tiled(window_ms, c):
        # The window sums hourly tiles (:func:`tile_times`), each the 1h window's increments.
        pieces = sorted(
            p
            for t in tile_times(at_ms, window_ms, sampling)
            for p in covered_intervals(t, TILE_MS, sampling)
        )
        merged: list[tuple[int, int]] = []
        for since, until in pieces:
            if merged and merged[-1][1] == since:
                merged[-1] = (merged[-1][0], until)
            else:
                merged.append((since, until))
        return merged[::-1]
    lowest = max(at_ms - window_ms + c // 2, c - 1)  # t must exceed this
    times = range(at_ms, lowest, -e)
    pieces = [((t - c) // s * s, t // s * s) for t in times]
    if e == c and pieces:
        return [(pieces[-1][0], pieces[0][1])]
    return pieces


def window_ratio(profile: Profile, at_ms: int, window_ms: int, sampling: Sampling) -> Fraction:
    """Error ratio (0–1) the rules record over ``window_ms`` at evaluation ``at_ms``; 0 when
    the window holds no events (as the rules record at zero traffic)."""
    return _window_ratio(tuple(profile), at_ms, window_ms, sampling)


@functools.lru_cache(maxsize=8192)
def _window_ratio(
    profile: tuple[tuple[int, Fraction], ...], at_ms: int, window_ms: int, sampling: Sampling
) -> Fraction:
    # Exact rationals: each phase's share times the ms of the window it covers, summed.
    pieces = covered_intervals(at_ms, window_ms, sampling)
    total = sum((u - v for v, u in pieces), 0)
    if total <= 0:
        return Fraction(0)
    bad = Fraction(0)
    for i, (start, share) in enumerate(profile):
        end = profile[i + 1][0] if i + 1 < len(profile) else None
        covered = 0
        for since, until in pieces:
            overlap = (until if end is None else min(end, until)) - max(start, since)
            if overlap > 0:
                covered += overlap
        if covered:
            bad += share * covered
    return bad / total


def recorded_events(
    per_second: Fraction, since_start_ms: int, window_ms: int, sampling: Sampling
) -> Fraction:
    """Events the minimum-events guard counts over ``window_ms``, ``since_start_ms`` after a
    series began at 0 with constant ``per_second`` traffic: the sum of the increments in the
    window (:func:`covered_intervals`), which never credits history the series does not have."""
    pieces = covered_intervals(since_start_ms, window_ms, sampling)
    return per_second * Fraction(sum((u - v for v, u in pieces), 0), 1000)


def tier_fires(tier: Tier, profile: Profile, at_ms: int, sampling: Sampling) -> bool:
    """Whether ``tier``'s ratio condition holds at evaluation ``at_ms``: both windows'
    recorded ratios exceed the threshold (the minimum-events guard is not part of it)."""
    return all(
        window_ratio(profile, at_ms, w, sampling) > tier.threshold
        for w in (tier.long_window_ms, tier.short_window_ms)
    )


def _first(holds: Callable[[int], bool], count: int) -> int | None:
    """The smallest k in [0, count] with ``holds(k)``, for a predicate monotone in k."""
    if not holds(count):
        return None
    lo, hi = -1, count
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


def detection_ms(
    tier: Tier, bad_ratio: Fraction = Fraction(1), sampling: Sampling = Sampling()
) -> int | None:
    """Time (ms) from a step to ``bad_ratio`` (0–1) until obsgen's rules fire ``tier``; None
    if they never do.

    Derivation (SRE Workbook ch. 5, "Alerting on SLOs", §6 "Multiwindow, multi-burn-rate
    alerts"): the Workbook's long-window ratio ``t`` after the onset is ``bad_ratio × t / long``
    and crosses the threshold at ``T = threshold × long / bad_ratio``
    (:meth:`Tier.detection_seconds`); the short window crosses first. Our long window sums
    increments between scrapes exactly one window apart (:func:`covered_intervals`), so at an
    evaluation ``t`` that is also a scrape its ratio *is* ``bad_ratio × t / long``: the rules
    fire at the first evaluation strictly after ``T``, never before it and at most one
    evaluation interval after it (51.84 s → 1m for 14.4× at 99.9 %). The onset is on a scrape
    that is also an evaluation, after a healthy history of at least the long window; when the
    last scrape before an evaluation lags it by δ (scrapes not aligned with evaluations, or a
    scrape interval that does not divide the evaluation interval), δ adds to the delay.
    Bisects over evaluations: the condition only grows after the onset.
    """
    if bad_ratio <= tier.threshold:
        return None
    onset = sampling.aligned(tier.long_window_ms + sampling.evaluation_interval_ms)
    profile = [(0, Fraction(0)), (onset, bad_ratio)]
    e = sampling.step
    last = (tier.long_window_ms + sampling.evaluation_interval_ms) // e + 2
    found = _first(lambda k: tier_fires(tier, profile, onset + k * e, sampling), last)
    return None if found is None else found * e


def reset_ms(tier: Tier, sampling: Sampling = Sampling()) -> int | None:
    """Time (ms) from full recovery after a total outage (that filled the long window) until
    ``tier`` stops firing; None if it never fires.

    The Workbook's short-window ratio ``t`` after recovery is ``(short − t) / short``, at or
    below the threshold from ``short × (1 − threshold)`` (:meth:`Tier.reset_seconds`); our
    windows cover whole scrape intervals, so the alert resolves at the first evaluation at or
    after that time (plus any scrape lag, as in :func:`detection_ms`).
    """
    if tier.threshold >= 1:
        return None
    recovery = sampling.aligned(tier.long_window_ms + sampling.evaluation_interval_ms)
    profile = [(0, Fraction(1)), (recovery, Fraction(0))]
    e = sampling.step
    last = (tier.short_window_ms + sampling.evaluation_interval_ms) // e + 2
    found = _first(lambda k: not tier_fires(tier, profile, recovery + k * e, sampling), last)
    return None if found is None else found * e
