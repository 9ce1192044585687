"""``ModelColdStartSlow`` (``spec.alerts.coldStart``): its generated cases proved alone, on a
service scaling from zero behind a KEDA HTTP activator (no example scales to zero)."""

from __future__ import annotations

from pathlib import Path

from tests.families.harness import plan_of, prove, severities, spec_data

KEY, ALERT = "cold_start", "ModelColdStartSlow"
KEDA = {"source": "keda-http", "selector": {"route_namespace": "ns", "route_name": "svc"}}


def test_generated_cases_pass(tmp_path: Path) -> None:
    data = spec_data("vllm", scaleToZero={"activator": KEDA})
    data["spec"]["deployment"]["replicas"] = {"min": 0, "max": 4}
    plan = plan_of(data)
    prove(KEY, plan, tmp_path)
    assert severities(plan, ALERT) == {"critical"}
