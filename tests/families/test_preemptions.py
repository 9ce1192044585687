"""``ModelPreemptionsHigh`` (``spec.alerts.preemptions``): its generated cases proved alone,
on the llama3-70b example."""

from __future__ import annotations

from pathlib import Path

from tests.families.harness import example_plan, prove, severities

KEY, ALERT = "preemptions", "ModelPreemptionsHigh"


def test_generated_cases_pass(tmp_path: Path) -> None:
    plan = example_plan(KEY, "llama3-70b")
    prove(KEY, plan, tmp_path)
    assert severities(plan, ALERT) == {"warning"}
