"""A slow fastest page is flagged (issue 48): ``obsgen check`` and ``obsgen explain`` warn when an
SLO's fastest paging tier needs more than 30 minutes of total outage to fire, naming the file,
the SLO and the time (from :func:`generator.slo.detection_ms`), with two fixes that work."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from generator import slo
from generator.cli import main
from generator.render import load_plans
from generator.slow_page import SLOW_PAGE_MS, fastest_page, sampling, slow_page_warnings
from tests.factories import good_spec, set_path, write_spec
from tests.test_goodput import goodput_spec
from tests.test_server_reality import plan_of

SLOW = "fires only after"


def _spec(tmp_path: Path, objective: float = 95, **alerting: Any) -> Path:
    """o1-preview with its latency SLO (``spec.slos[1]``) at ``objective``."""
    data = set_path(good_spec(), "spec.slos[1].objective", objective)
    if alerting:
        set_path(data, "spec.slos[1].alerting", alerting)
    return write_spec(tmp_path, data)


def _warnings(path: Path) -> list[str]:
    (plan,) = load_plans([path], path.parent)
    return [str(w) for w in slow_page_warnings(plan)]


def test_check_flags_a_95_percent_slo_paging_after_44_minutes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _spec(tmp_path)
    assert main(["check", str(path)]) == 0  # a warning, not an error
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if SLOW in x]
    assert line.startswith(f"{path}: spec.slos[1].alerting: warning: SLO 'latency' (95%)")
    assert "the 1h/5m tier (14.4×, threshold 0.72), fires only after 44m of total outage" in line
    assert "a tighter objective (96.6% pages after 30m)" in line
    assert (
        "a faster critical tier in spec.slos[1].alerting.tiers (budget: 0.01, longWindow: 30m, "
        "shortWindow: 2m, severity: critical — 14.4×, pages after 22m; a tiers list replaces "
        "the default tiers, so list those you keep beside it)" in line
    )


def test_render_flags_it_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _spec(tmp_path)
    assert main(["render", str(path), "--skip-promtool", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert len([x for x in err.splitlines() if SLOW in x]) == 1, err


def test_explain_flags_it_too_and_prints_every_fastest_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _spec(tmp_path)
    assert main(["explain", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "  fastest page: 1h/5m after 1m of total outage\n" in out  # availability 99.9 %
    assert (
        "  fastest page: 1h/5m after 44m of total outage — slower than 30m: see the warning" in out
    )
    assert len([x for x in err.splitlines() if SLOW in x]) == 1


def test_a_99_percent_slo_is_not_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _spec(tmp_path, objective=99)
    assert main(["check", str(path)]) == 0
    assert main(["explain", str(path)]) == 0
    out, err = capsys.readouterr()
    assert SLOW not in err
    assert "  fastest page: 1h/5m after 9m of total outage\n" in out


def test_the_time_is_the_tier_math(tmp_path: Path) -> None:
    (plan,) = load_plans([_spec(tmp_path)], tmp_path)
    latency = plan.slos[1]
    tier, ms = fastest_page(latency, sampling(plan)) or (None, 0)
    assert tier is latency.tiers[0]
    assert ms == slo.detection_ms(latency.tiers[0], Fraction(1), sampling(plan)) == 44 * 60_000
    assert ms > SLOW_PAGE_MS
    # The bound is a parameter: a 99 % SLO's 9m page is slow against 8 minutes.
    (plan99,) = load_plans([_spec(tmp_path, objective=99)], tmp_path)
    assert slow_page_warnings(plan99) == []
    assert len(slow_page_warnings(plan99, bound_ms=8 * 60_000)) == 1


def test_each_suggested_fix_silences_the_warning(tmp_path: Path) -> None:
    (warning,) = _warnings(_spec(tmp_path))
    objective = re.search(r"a tighter objective \(([\d.]+)%", warning)
    assert objective is not None
    assert _warnings(_spec(tmp_path / "a", objective=float(objective.group(1)))) == []
    tiers = [
        {"budget": 0.01, "longWindow": "30m", "shortWindow": "2m", "severity": "critical"},
        {"budget": 0.02, "longWindow": "1h", "shortWindow": "5m", "severity": "critical"},
    ]
    assert _warnings(_spec(tmp_path / "b", tiers=tiers)) == []


def test_an_slo_without_a_page_is_not_flagged(tmp_path: Path) -> None:
    tickets = [{"budget": 0.1, "longWindow": "1d", "shortWindow": "2h", "severity": "warning"}]
    assert _warnings(_spec(tmp_path, tiers=tickets)) == []
    assert _warnings(_spec(tmp_path / "off", enabled=False)) == []


def test_a_goodput_slo_is_flagged_like_the_others() -> None:
    (warning,) = slow_page_warnings(plan_of(goodput_spec(objective=95)))
    assert str(warning).startswith("mem.yaml: spec.slos[0].alerting: warning: SLO 'goodput' (95%)")
    assert "44m of total outage" in warning.message
    assert slow_page_warnings(plan_of(goodput_spec())) == []
