"""Generated rule files pass ``promtool check rules``; generated tests pass ``promtool test rules``
and fail when a rendered threshold is broken."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers_promtool import ROOT, assert_ok, render_to, run_promtool

SPECS = [
    pytest.param(ROOT / "specs" / "o1-preview.yaml", id="o1-preview 30-day SLOs, compat le"),
    pytest.param(ROOT / "tests" / "fixtures" / "slo-28d.yaml", id="28-day SLOs, Prometheus 3 le"),
    pytest.param(
        ROOT / "tests" / "fixtures" / "slo-7d.yaml",
        id="7-day SLOs with custom tiers, Prometheus 2 le",
    ),
    pytest.param(
        ROOT / "tests" / "fixtures" / "slo-native.yaml", id="native-histogram latency SLO"
    ),
]


@pytest.mark.parametrize("spec", SPECS)
def test_generated_rules_and_tests_pass_promtool(spec: Path, tmp_path: Path) -> None:
    files = render_to(spec, tmp_path)
    rules = [p for r, p in files.items() if r.endswith(".rules.yaml")]
    tests = [p for r, p in files.items() if r.endswith(".test.yaml")]
    assert rules and tests
    assert_ok(run_promtool("check", "rules", "--lint=all", "--lint-fatal", *rules))
    assert_ok(run_promtool("test", "rules", *tests))


def test_native_histogram_limits_are_stated_in_the_test_file(tmp_path: Path) -> None:
    files = render_to(ROOT / "tests" / "fixtures" / "slo-native.yaml", tmp_path)
    text = files["rules/native-lat.test.yaml"].read_text()
    assert "promtool 2.42 test series cannot express native histograms" in text
    assert "latency 1h/5m" not in text and "availability 1h/5m" in text


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(
            'slo="availability"} > 0.0144\n',
            'slo="availability"} > 0.02\n',
            id="availability 14.4x threshold raised",
        ),
        pytest.param(
            'slo="latency"} > 0.01\n', 'slo="latency"} > 0.009\n', id="latency 1x threshold lowered"
        ),
        pytest.param("> 0.9\n", "> 0.97\n", id="memory headroom threshold raised"),
    ],
)
def test_generated_tests_fail_on_a_broken_threshold(tmp_path: Path, old: str, new: str) -> None:
    files = render_to(ROOT / "specs" / "o1-preview.yaml", tmp_path)
    rules = files["rules/o1-preview.rules.yaml"]
    text = rules.read_text()
    assert old in text
    rules.write_text(text.replace(old, new))  # both windows of the tier
    result = run_promtool("test", "rules", files["rules/o1-preview.test.yaml"])
    assert result.returncode != 0
    assert "FAILED" in result.stdout + result.stderr
