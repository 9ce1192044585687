"""``ModelEfficiencyRegressed`` (``spec.alerts.efficiencyRegression``): its proof cases (not in
the generated test file: they need a day of evaluations) proved alone on the rules they read,
on a sidecar spec asking for it (no example does)."""

from __future__ import annotations

from pathlib import Path

from generator.families import efficiency_regression
from tests.families.harness import plan_of, prove, severities, spec_data

KEY, ALERT = "efficiency_regression", "ModelEfficiencyRegressed"


def test_proof_cases_pass(tmp_path: Path) -> None:
    data = spec_data("vllm", gpu={"exporter": "sidecar"}, alerts={"efficiencyRegression": {}})
    plan = plan_of(data)
    assert efficiency_regression.FAMILY.cases(plan) == []
    prove(KEY, plan, tmp_path, groups=efficiency_regression.proof_cases(plan))
    assert severities(plan, ALERT) == {"warning"}
