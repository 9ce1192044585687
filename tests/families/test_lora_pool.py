"""``ModelLoRAPoolSaturated`` (``spec.alerts.loraPool``): its generated cases proved alone, on a
vLLM 0.13 spec asking for it (no example serves LoRA adapters)."""

from __future__ import annotations

from pathlib import Path

from tests.families.harness import plan_of, prove, severities, spec_data

KEY, ALERT = "lora_pool", "ModelLoRAPoolSaturated"


def test_generated_cases_pass(tmp_path: Path) -> None:
    plan = plan_of(spec_data("vllm", serverVersion="0.13", alerts={"loraPool": {}}))
    prove(KEY, plan, tmp_path)
    assert severities(plan, ALERT) == {"warning"}
