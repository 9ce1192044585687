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
