"""``GPUNVLinkErrors`` (``spec.alerts.gpuNvLinkErrors``): its generated cases proved alone, on the sidecar
example and on a dcgm-exporter spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.plan import ServicePlan
from tests.families.harness import dcgm_plan, example_plan, prove, severities

KEY, ALERT = "gpu_nv_link_errors", "GPUNVLinkErrors"


@pytest.mark.parametrize("plan", [example_plan(KEY), dcgm_plan()], ids=["sidecar", "dcgm"])
def test_generated_cases_pass(tmp_path: Path, plan: ServicePlan) -> None:
    prove(KEY, plan, tmp_path)
    assert severities(plan, ALERT) == {"warning"}
