"""``ModelKVTransferFailing`` and ``ModelKVTransferSlow`` (``spec.alerts.kvTransfer``): their
generated cases proved alone, on a disaggregated vLLM 0.13 spec (no example has roles)."""

from __future__ import annotations

from pathlib import Path

from tests.families.harness import alert_rules, plan_of, prove, spec_data

KEY = "kv_transfer"
ROLES = {"prefill": "prefill", "decode": "decode"}


def test_generated_cases_pass(tmp_path: Path) -> None:
    """Both alerts fire on their failure and stay quiet on a healthy service."""
    plan = plan_of(spec_data("vllm", serverVersion="0.13", roles=ROLES))
    prove(KEY, plan, tmp_path)
    for alert in ("ModelKVTransferFailing", "ModelKVTransferSlow"):
        (rule,) = alert_rules(plan, alert)
        assert rule["labels"]["severity"] == "warning"
