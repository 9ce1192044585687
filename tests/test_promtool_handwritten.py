"""Hand-written promtool tests of the o1-preview alerts (issue 2) pass against the committed rules."""

from __future__ import annotations

from tests.helpers_promtool import ROOT, assert_ok, run_promtool


def test_handwritten_o1_preview_alert_tests_pass() -> None:
    path = ROOT / "tests" / "promtool" / "o1-preview.alerts.test.yaml"
    assert_ok(run_promtool("test", "rules", path))
