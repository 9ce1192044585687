"""``ModelContainerCrashLooping`` (``spec.alerts.crashLoop``): its generated cases proved alone,
on the llama-trtllm-serve example."""

from __future__ import annotations

from pathlib import Path

from tests.families.harness import example_plan, prove, severities

KEY, ALERT = "crash_loop", "ModelContainerCrashLooping"


def test_generated_cases_pass(tmp_path: Path) -> None:
    plan = example_plan(KEY, "llama-trtllm-serve")
    prove(KEY, plan, tmp_path)
    assert severities(plan, ALERT) == {"warning"}
