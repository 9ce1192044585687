"""``ModelSlowRequestsHigh`` (``spec.alerts.slowRequests``): its generated cases proved alone,
on the llama-trtllm-serve example."""

from __future__ import annotations

from pathlib import Path

from generator import verify
from generator.builders.guard_rules import _histogram_users
from tests.families.harness import example_plan, family, prove, severities

KEY, ALERT = "slow_requests", "ModelSlowRequestsHigh"


def test_generated_cases_pass(tmp_path: Path) -> None:
    plan = example_plan(KEY, "llama-trtllm-serve")
    prove(KEY, plan, tmp_path)
    assert severities(plan, ALERT) == {"warning"}


def test_guards_and_verify_read_its_bound() -> None:
    """Its histogram read (indicator at the threshold's bound) is what the guards watch and
    what ``obsgen verify`` checks is a bucket."""
    plan = example_plan(KEY, "llama-trtllm-serve")
    (read,) = family(KEY).histogram_reads(plan)
    assert read.reader == ALERT and read.bound is not None
    assert (ALERT, read.bound) in _histogram_users(plan)[read.key]
    where = ("spec.alerts.slowRequests.threshold", read.bound)
    assert where in verify._thresholds(plan, plan.histograms[read.key])
