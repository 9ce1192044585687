"""``ModelSpecDecodeAcceptanceLow`` (``spec.alerts.specDecode``): its generated cases proved
alone, on the llama3-70b example."""

from __future__ import annotations

from pathlib import Path

from tests.families.harness import example_plan, prove

KEY, ALERT = "spec_decode", "ModelSpecDecodeAcceptanceLow"


def test_generated_cases_pass(tmp_path: Path) -> None:
    """Its one case is also its healthy control: two models, one's acceptance halves and only
    that model's alert is expected (promtool fails on an unexpected alert of the other)."""
    plan = example_plan(KEY, "llama3-70b")
    (group,) = prove(KEY, plan, tmp_path, quiet=False)
    (test,) = group["alert_rule_test"]
    assert len(test["exp_alerts"]) == 1
