"""``ModelLatencyP99High`` (``spec.alerts.latencyP99``): its generated cases proved alone,
on the llama-trtllm-serve example."""

from __future__ import annotations

from pathlib import Path

from generator.builders.guard_rules import _histogram_users
from tests.families.harness import example_plan, family, prove, severities

KEY, ALERT = "latency_p99", "ModelLatencyP99High"


def test_generated_cases_pass(tmp_path: Path) -> None:
    plan = example_plan(KEY, "llama-trtllm-serve")
    prove(KEY, plan, tmp_path)
    assert severities(plan, ALERT) == {"critical"}


def test_guards_read_every_bucket() -> None:
    """Its histogram read (a quantile: every bucket, no bound) is what the guards watch."""
    plan = example_plan(KEY, "llama-trtllm-serve")
    (read,) = family(KEY).histogram_reads(plan)
    assert read.reader == ALERT and read.bound is None
    assert (ALERT, None) in _histogram_users(plan)[read.key]
