"""Hand-written promtool tests of the o1-preview alerts (issue 2) pass against the committed rules,
and cover every alert of issue 2 with a firing and a silent case."""

from __future__ import annotations

import pytest
import yaml

from tests.helpers_promtool import ROOT, assert_ok, run_promtool

PATH = ROOT / "tests" / "promtool" / "o1-preview.alerts.test.yaml"
ISSUE_2_ALERTS = (
    "ModelLatencyP99High",
    "ModelSlowRequestsHigh",
    "ModelErrorRatioHigh",
    "ModelQueueDepthHigh",
    "ModelMemoryHeadroomLow",
    "ModelTargetDown",
)


def test_handwritten_o1_preview_alert_tests_pass() -> None:
    assert_ok(run_promtool("test", "rules", PATH))


@pytest.mark.parametrize("alert", [pytest.param(a, id=a) for a in ISSUE_2_ALERTS])
def test_every_issue_2_alert_has_a_firing_and_a_silent_case(alert: str) -> None:
    checks = [
        c
        for group in yaml.safe_load(PATH.read_text())["tests"]
        for c in group["alert_rule_test"]
        if c["alertname"] == alert
    ]
    assert any(c["exp_alerts"] for c in checks), f"no case fires {alert}"
    assert any(not c["exp_alerts"] for c in checks), f"no case keeps {alert} silent"


def test_target_down_pages_when_all_down_or_absent_and_tickets_for_one() -> None:
    severities = {
        (group["name"].split(" ")[0], a["exp_labels"]["severity"])
        for group in yaml.safe_load(PATH.read_text())["tests"]
        for c in group["alert_rule_test"]
        if c["alertname"] == "ModelTargetDown"
        for a in c["exp_alerts"]
    }
    assert severities == {
        ("all", "critical"),
        ("a", "critical"),
        ("no", "critical"),
        ("one", "warning"),
    }
