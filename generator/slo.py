"""SLO math: error budgets, burn-rate tiers, detection and reset times.

Source: Google SRE Workbook, ch. 5 "Alerting on SLOs", §6 "Multiwindow, multi-burn-rate
alerts" (table 5-8). A tier that lets ``budget`` (share 0–1) of the SLO window's error budget
burn within ``long_window`` fires at burn rate::

    factor = budget × slo_window / long_window          (14.4 = 0.02 × 30d / 1h)

and its alert condition is ``error_ratio(long) > factor × (1 − objective)`` AND the same over
the short window. All arithmetic is exact (:class:`fractions.Fraction`); constants are written
with :func:`generator.units.decimal_str`.
"""

from __future__ import annotations

from collections.abc import Sequence
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

    def detection_seconds(self) -> Fraction:
        """Seconds from the start of a total outage (100 % bad) until the tier fires.

        The long window's ratio after ``t`` seconds of outage is ``t / long``; it crosses the
        threshold at ``t = threshold × long`` (the short window crosses first). 14.4× at
        99.9 % over 1h: 0.0144 × 3600 s = 51.84 s.
        """
        return self.threshold * Fraction(self.long_window_ms, 1000)

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
            scrapes), ``slo_window`` (long window longer than the SLO window), ``windows``
            (short ≥ long) or ``factor`` (burn rate below 1×).
        message: one user-facing sentence.
    """

    cause: str
    message: str


def tier_problems(
    tier: Tier, objective_percent: float, slo_window_ms: int, scrape_interval_ms: int
) -> list[TierProblem]:
    """Reasons ``tier`` cannot work (empty when it is fine).

    Checks (docs/contracts.md, rules 5 and 6): threshold > 1 (can never fire), factor < 1 (fires while the
    budget would last the window), short ≥ long window, windows shorter than 4 × scrape
    interval, long window longer than the SLO window.
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
                    f"({fmt(4 * scrape_interval_ms)}); rate() needs at least 4 samples",
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


# --- detection time of obsgen's recording rules ------------------------------------------

RATE_WINDOW_MS = 300_000  # the recorded SLI rates are rate(...[5m])
DEFAULT_EVALUATION_INTERVAL_MS = 60_000  # Prometheus' default global evaluation_interval


def _ramp(u_ms: int) -> Fraction:
    """Share of its final value the recorded 5m rate of a step shows ``u_ms`` after the step."""
    return Fraction(min(max(u_ms, 0), RATE_WINDOW_MS), RATE_WINDOW_MS)


def _ramp_sum(last_ms: int, count: int, e: int) -> Fraction:
    """Σ ramp(last − k·e) for k in [0, count): the 5m-rate shares of ``count`` evaluations."""
    if count <= 0:
        return Fraction(0)
    full = min(max((last_ms - RATE_WINDOW_MS) // e + 1, 0), count)  # ≥ 5m after the step
    stop = min(count, max(-(-last_ms // e), 0))  # terms after the step
    return full + sum((_ramp(last_ms - k * e) for k in range(full, stop)), Fraction(0))


def _samples(since_onset_ms: int, window_ms: int, e: int, history_ms: int | None) -> int:
    """Recorded samples in the closed window: none at or before the series' first scrape."""
    n = window_ms // e + 1
    if history_ms is None:
        return n
    return min(n, max(-(-(history_ms + since_onset_ms) // e), 0))


def recorded_window_ratio(
    bad_ratio: Fraction,
    since_onset_ms: int,
    window_ms: int,
    evaluation_interval_ms: int,
    history_ms: int | None = None,
) -> Fraction:
    """Error ratio obsgen's rules record over ``window_ms``, ``since_onset_ms`` after a step.

    Model: constant traffic whose bad share jumps from 0 to ``bad_ratio`` at the onset. The
    recorded 5m rate of bad events ramps linearly to its final value over the 5 minutes after
    the onset (``rate`` over ``[t−5m, t]`` of a counter that bends there, scraped at a divisor
    of 5m, onset on a scrape); likewise the total rate ramps up over the first 5 minutes of
    the series when counters start at 0 ``history_ms`` before the onset (None: a history of
    at least ``window_ms`` + 5m). Rules are evaluated every ``evaluation_interval_ms``, one
    evaluation at the onset; the first scrape records nothing (``rate`` needs two samples). A
    window ratio is ``Σ bad rate / Σ total rate`` over the recorded samples in
    ``[t − window, t]`` (both ends, as in Prometheus 2; Prometheus 3's left-open ranges drop the
    oldest sample and can fire one evaluation earlier). ``since_onset_ms`` and ``history_ms``
    must be multiples of ``evaluation_interval_ms``.

    Returns:
        The ratio (0–1), exact (:class:`~fractions.Fraction`); 0 when nothing is recorded.
    """
    e = evaluation_interval_ms
    m = _samples(since_onset_ms, window_ms, e, history_ms)
    total = Fraction(m) if history_ms is None else _ramp_sum(history_ms + since_onset_ms, m, e)
    if total == 0:
        return Fraction(0)
    return bad_ratio * _ramp_sum(since_onset_ms, m, e) / total


def profile_window_ratio(
    phases: Sequence[tuple[int, Fraction]],
    at_ms: int,
    window_ms: int,
    evaluation_interval_ms: int,
) -> Fraction:
    """Recorded error ratio over ``window_ms`` for traffic whose bad share changes in steps.

    ``phases`` are ``(start, bad share from then on)`` in ms since the counters began at 0
    (sorted; the share is 0 before the first). Same model as :func:`recorded_window_ratio`
    (constant total traffic, 5m rate ramps, closed windows, evaluations every
    ``evaluation_interval_ms`` from the start); steps add up because ``rate`` is linear in the
    counter, so each change contributes its own ramp.
    """
    e = evaluation_interval_ms
    m = _samples(at_ms, window_ms, e, 0)
    total = _ramp_sum(at_ms, m, e)
    if total == 0:
        return Fraction(0)
    bad, previous = Fraction(0), Fraction(0)
    for start, share in phases:
        bad += (share - previous) * _ramp_sum(at_ms - start, m, e)
        previous = share
    return bad / total


def recorded_events(
    per_second: Fraction, since_start_ms: int, window_ms: int, evaluation_interval_ms: int
) -> Fraction:
    """Events the minimum-events guard sees ``since_start_ms`` after a series began at 0.

    The guard takes the smaller of two estimates over the long window ``W``:
    ``avg_over_time(total_rate5m[W]) × W`` (extrapolates a window holding less history than
    ``W``: a service 10 minutes old would be credited with 6 times its events in 1h) and
    ``sum_over_time(total_rate5m[W]) × 300 / count_over_time(total_rate5m[5m])`` (Σ rate ×
    the evaluation interval, read off the sample count; no extrapolation, and under
    Prometheus 2's closed ranges 5m/(5m + interval) of the events). Same sampling model as
    :func:`recorded_window_ratio`, at constant ``per_second`` traffic.
    """
    e = evaluation_interval_ms
    m = _samples(since_start_ms, window_ms, e, 0)
    count_5m = _samples(since_start_ms, RATE_WINDOW_MS, e, 0)
    if m == 0 or count_5m == 0:
        return Fraction(0)
    rates = per_second * _ramp_sum(since_start_ms, m, e)
    mean = rates / m * Fraction(window_ms, 1000)
    summed = rates * Fraction(RATE_WINDOW_MS, 1000) / count_5m
    return min(mean, summed)


def tier_fires(
    tier: Tier,
    bad_ratio: Fraction,
    since_onset_ms: int,
    evaluation_interval_ms: int,
    history_ms: int | None = None,
) -> bool:
    """Whether ``tier``'s ratio condition holds ``since_onset_ms`` after a step to ``bad_ratio``.

    Both windows' recorded ratios (:func:`recorded_window_ratio`) must exceed the threshold.
    The minimum-events guard is not part of it (see :func:`recorded_events`).
    """
    return all(
        recorded_window_ratio(bad_ratio, since_onset_ms, w, evaluation_interval_ms, history_ms)
        > tier.threshold
        for w in (tier.long_window_ms, tier.short_window_ms)
    )


def recorded_detection_ms(
    tier: Tier,
    bad_ratio: Fraction = Fraction(1),
    evaluation_interval_ms: int = DEFAULT_EVALUATION_INTERVAL_MS,
) -> int | None:
    """Time (ms) from a step to ``bad_ratio`` until obsgen's rules fire ``tier``; None if never.

    The first evaluation at which :func:`tier_fires` holds. Unlike the Workbook's
    :meth:`Tier.detection_seconds` (instant ratios: ``threshold × long`` for a total outage),
    our windows are sums of recorded 5m rates, so the long window lags by up to 5 minutes and
    moves in evaluation steps: a total outage at 99.9 % fires the 1h/5m tier after 3m at a 1m
    evaluation interval, not 51.84 s. The ratios stop growing once the long window is all
    outage (``long + 5m``), so the search ends there.
    """
    if bad_ratio <= tier.threshold:
        return None
    e = evaluation_interval_ms
    last = tier.long_window_ms + RATE_WINDOW_MS + e
    # The condition is monotone in time (both ratios only grow), so bisect over evaluations.
    lo, hi = 0, last // e + 1
    if not tier_fires(tier, bad_ratio, hi * e, e):
        return None
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if tier_fires(tier, bad_ratio, mid * e, e):
            hi = mid
        else:
            lo = mid
    return hi * e
