"""Efficiency records (:mod:`generator.builders.efficiency_rules`): energy per 1,000 output
tokens in joules and GPU-seconds per million output tokens, proved in real promtool (Prometheus
3.16 and 2.53) on both GPU sources: the example GPU draws 350 W (21,000 J a minute; dcgm-exporter
in mJ), the server generates a known number of tokens a second, and each record holds the
arithmetic's value; an idle service (no token generated) has no sample, never +Inf.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

from generator import naming
from generator.builders import efficiency_rules
from generator.parts import gpu_series
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    labels_of,
)
from generator.plan import ServicePlan
from generator.promql import go_float
from generator.signals.healthy import healthy
from tests.helpers_promtool import promtool_groups
from tests.test_server_reality import plan_of, spec_data

LINES = ("prometheus3", "prometheus2")
WATTS = 350.0  # the example GPU of generator.parts.gpu_series.healthy_gpu
SPECS = {
    "vLLM, sidecar": spec_data("vllm", gpu={"exporter": "sidecar"}),
    "vLLM, dcgm-exporter": spec_data("vllm", gpu={"exporter": "dcgm"}),
    "SGLang, sidecar, cluster label": spec_data(
        "sglang", gpu={"exporter": "sidecar"}, prometheus={"clusterLabel": "cluster"}
    ),
    "TGI (tokens as a histogram's _sum), dcgm-exporter": spec_data("tgi", gpu={"exporter": "dcgm"}),
}


def _series(plan: ServicePlan, tokens_per_s: float | None) -> list[dict[str, str]]:
    s = healthy(plan, [Klass(BASE_PER_MIN)])
    # The example GPU's energy counter in the source's own unit (dcgm-exporter: mJ).
    gpu_series.put(plan, s, naming.GPU_ENERGY, f"0+{go_float(WATTS * 60)}x40")
    tokens = plan.generation_tokens
    assert tokens is not None
    if tokens_per_s is not None:
        s.add(tokens.name, labels_of(plan, tokens.matchers), tokens_per_s * 60)
    return s.render(40)


def _expr_test(plan: ServicePlan, record: str, value: float | None) -> dict[str, Any]:
    identity = {k: v for k, v in labels_of(plan, ()).items() if k != "namespace"}
    labels = {**identity, "namespace": "ns", "service": plan.name}
    inner = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    # Rounded: promtool 2.53 compares floats exactly (350 reads 349.99999999999994).
    return {
        "expr": f"round({record}, 0.001)",
        "eval_time": "20m",
        "exp_samples": [] if value is None else [{"labels": f"{{{inner}}}", "value": value}],
    }


def _group(plan: ServicePlan, name: str, tokens_per_s: float | None) -> dict[str, Any]:
    energy = None if tokens_per_s is None else 1000 * WATTS / tokens_per_s
    gpu_seconds = None if tokens_per_s is None else 1e6 * 1 / tokens_per_s
    return {
        "name": name,
        "interval": "1m",
        "input_series": _series(plan, tokens_per_s),
        "promql_expr_test": [
            _expr_test(plan, efficiency_rules.ENERGY_PER_1K, energy),
            _expr_test(plan, efficiency_rules.GPU_SECONDS_PER_1M, gpu_seconds),
        ],
    }


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("spec", list(SPECS), ids=list(SPECS))
def test_the_records_hold_the_arithmetics_values(tmp_path: Path, line: str, spec: str) -> None:
    plan = plan_of(SPECS[spec])
    groups = [
        # 350 J/s over 1,000 tokens/s: 350 J per 1,000 tokens; 1 GPU-s/s: 1,000 per million.
        _group(plan, "1,000 tokens a second", 1000.0),
        _group(plan, "50 tokens a second", 50.0),
        _group(plan, "idle: no token generated", None),
    ]
    result = promtool_groups(line, tmp_path, plan, groups)
    assert result.startswith("PASS"), result


def test_a_wrong_value_fails() -> None:
    """The proof is not vacuous: a record 1000× off (mJ read as J) fails its case."""
    plan = plan_of(SPECS["vLLM, dcgm-exporter"])
    group = _group(plan, "1,000 tokens a second", 1000.0)
    group["promql_expr_test"][0]["exp_samples"][0]["value"] = 1000 * WATTS  # mJ not converted
    with tempfile.TemporaryDirectory() as tmp:
        result = promtool_groups("prometheus3", Path(tmp), plan, [group])
    assert result.startswith("FAIL"), result


def test_none_without_a_gpu_source_or_a_token_counter() -> None:
    assert efficiency_rules.records(plan_of(spec_data("vllm"))) == []
    plan = plan_of(spec_data("triton", gpu={"exporter": "sidecar"}))
    assert plan.generation_tokens is None  # Triton's preset counts no output tokens
    assert efficiency_rules.records(plan) == []
