"""Burn-rate factors, thresholds, detection and reset times against the SRE Workbook (ch. 5)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from generator import slo

DAY = slo.DAY_MS


@pytest.mark.parametrize(
    ("window_days", "factors"),
    [
        pytest.param(
            30, ("14.4", "6", "3", "1"), id="30-day window gives the Workbook's 14.4/6/3/1"
        ),
        pytest.param(
            28, ("13.44", "5.6", "2.8", "14/15"), id="28-day window scales every factor by 28/30"
        ),
        pytest.param(7, ("3.36", "1.4", "0.7", "7/30"), id="7-day window"),
        pytest.param(90, ("43.2", "18", "9", "3"), id="90-day window"),
    ],
)
def test_default_tier_factors(window_days: int, factors: tuple[str, ...]) -> None:
    got = [slo.bind_tier(t, 99.9, window_days * DAY).factor for t in slo.DEFAULT_TIERS]
    assert got == [Fraction(f) for f in factors]


def test_workbook_fast_tier_spends_two_percent_and_fires_in_52_seconds() -> None:
    tier = slo.bind_tier(slo.DEFAULT_TIERS[0], 99.9, 30 * DAY)
    assert tier.factor == Fraction("14.4")
    assert tier.threshold == Fraction("0.0144")
    # 14.4× for 1h spends 14.4 h of a 720 h budget: 2 %.
    assert tier.factor * Fraction(tier.long_window_ms, 30 * DAY) == Fraction(2, 100)
    assert tier.detection_seconds() == Fraction("51.84")


@pytest.mark.parametrize(
    ("objective", "index", "reset"),
    [
        pytest.param(
            99.9, 0, Fraction("295.68"), id="1h/5m tier at 99.9 resets after 5m × (1 − 0.0144)"
        ),
        pytest.param(99.0, 1, Fraction(1800) * (1 - Fraction("0.06")), id="6h/30m tier at 99"),
    ],
)
def test_reset_time_is_short_window_times_one_minus_threshold(
    objective: float, index: int, reset: Fraction
) -> None:
    assert slo.bind_tier(slo.DEFAULT_TIERS[index], objective, 30 * DAY).reset_seconds() == reset


def test_error_budget_is_exact() -> None:
    assert slo.error_budget(99.9) == Fraction(1, 1000)
    assert slo.max_reachable_burn_rate(90) == 10


@pytest.mark.parametrize(
    ("window_days", "factors", "budgets", "raised"),
    [
        pytest.param(
            30,
            ("14.4", "6", "3", "1"),
            ("0.02", "0.05", "0.1", "0.1"),
            (None, None, None, None),
            id="at 30 days no default tier is raised",
        ),
        pytest.param(
            28,
            ("13.44", "5.6", "2.8", "1"),
            ("0.02", "0.05", "0.1", "3/28"),
            (None, None, None, "0.1"),
            id="at 28 days the 3d tier is raised from 0.933x to 1x with budget 3/28",
        ),
        pytest.param(
            7,
            ("3.36", "1.4", "1", "1"),
            ("0.02", "0.05", "1/7", "3/7"),
            (None, None, "0.1", "0.1"),
            id="at 7 days the 1d and 3d tiers are raised to 1x",
        ),
    ],
)
def test_default_tiers_below_one_are_raised_to_one(
    window_days: int,
    factors: tuple[str, ...],
    budgets: tuple[str, ...],
    raised: tuple[str | None, ...],
) -> None:
    tiers = [slo.bind_default_tier(t, 99.9, window_days * DAY) for t in slo.DEFAULT_TIERS]
    assert [t.factor for t in tiers] == [Fraction(f) for f in factors]
    assert [t.budget for t in tiers] == [Fraction(b) for b in budgets]
    assert [t.raised_from for t in tiers] == [None if r is None else Fraction(r) for r in raised]
    assert all(t.threshold == t.factor * Fraction(1, 1000) for t in tiers)


FAST = slo.bind_tier(slo.DEFAULT_TIERS[0], 99.9, 30 * DAY)


@pytest.mark.parametrize(
    ("ratio", "interval_ms", "expected_ms"),
    [
        # Long window at t = 180 s: samples 0.2+0.4+0.6 of 61 (both ends) = 0.0197 > 0.0144;
        # at 120 s: 0.6 / 61 = 0.0098. The Workbook's instant ratio says 51.84 s.
        pytest.param(
            Fraction(1), 60_000, 180_000, id="total outage at 99.9 fires the 1h tier after 3m"
        ),
        # 0.01512 × (57 full + 0.8+0.6+0.4+0.2 of ramp) / 61 = 0.014624 > 0.0144 at 61m;
        # at 60m 58/61 gives 0.014376. The Workbook's instant ratio says 1h / 1.05 = 57m8.6s.
        pytest.param(Fraction("0.01512"), 60_000, 61 * 60_000, id="5% above 14.4x fires after 61m"),
        pytest.param(Fraction("0.0144"), 60_000, None, id="exactly at the threshold never fires"),
        # At a 1h interval the 1h window holds two samples; both must be full.
        pytest.param(Fraction(1), 3_600_000, 3_600_000, id="1h evaluation interval fires at 1h"),
    ],
)
def test_detection_time_of_our_rules(
    ratio: Fraction, interval_ms: int, expected_ms: int | None
) -> None:
    assert slo.recorded_detection_ms(FAST, ratio, interval_ms) == expected_ms


def test_recorded_ratio_follows_the_5m_rate_ramp() -> None:
    # 5m window, 1m evaluations, 2 min after a step to 0.5: samples 0, 0, 0, 0, 0.2, 0.4 (×0.5).
    assert slo.recorded_window_ratio(Fraction(1, 2), 120_000, 300_000, 60_000) == Fraction(1, 20)
    # Steady state: the ratio is the bad share itself.
    assert slo.recorded_window_ratio(Fraction(1, 2), 3_600_000, 300_000, 60_000) == Fraction(1, 2)


def test_recorded_ratio_with_short_history_is_over_the_samples_present() -> None:
    # 10 min of healthy history, 10 min of 10 %: 1h window holds 20 samples; total ramps
    # (0.2..0.8 then 16 full = 18), bad 0.2..0.8 then 6 full = 8: 0.1 × 8 / 18.
    got = slo.recorded_window_ratio(Fraction(1, 10), 600_000, 3_600_000, 60_000, 600_000)
    assert got == Fraction(2, 45)


def test_detection_never_beats_the_workbook() -> None:
    for spec in slo.DEFAULT_TIERS:
        tier = slo.bind_tier(spec, 99.9, 30 * DAY)
        ours = slo.recorded_detection_ms(tier)
        assert ours is not None and Fraction(ours, 1000) > tier.detection_seconds()


@pytest.mark.parametrize(
    ("since_start_ms", "expected"),
    [
        # 1 event/min, 5 min old: recorded rates 0.2..1.0 of 1/60 sum to 3/60, × 300 s / 5
        # samples = 3 events (5 happened); the mean-rate estimate alone would say 36 in 1h.
        pytest.param(300_000, Fraction(3), id="a 5-minute-old service is not extrapolated"),
        # 2h old: 61 samples of 1/60 × 300 / 6 = 50.83 (60 happened: 5m/(5m+1m) of them).
        pytest.param(7_200_000, Fraction(61 * 300, 60 * 6), id="steady: 5/6 of the events at 1m"),
    ],
)
def test_min_events_guard_counts_recorded_events(since_start_ms: int, expected: Fraction) -> None:
    got = slo.recorded_events(Fraction(1, 60), since_start_ms, 3_600_000, 60_000)
    assert got == expected
