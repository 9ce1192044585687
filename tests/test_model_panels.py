"""Dashboard panels of ``spec.models``, the LoRA adapter pool and KV transfers
(:mod:`generator.builders.model_panels`, the ``panels`` of ``lora_pool`` and ``kv_transfer``):
drawn only where their records are, passing the dashboard lint, and each panel's own query
(Grafana variables at "All", ``$__rate_interval`` at 5m) evaluated by the real promtool 3.16
against the rule file, on vLLM 0.13 series (as tests/test_per_model.py), gives the recorded
value: the model burning, the request shares, the rollup's share, the pool and the transfers.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from generator.builders.dashboard import service_dashboard
from generator.builders.rulefile import rule_file
from generator.families import kv_transfer
from generator.lint.dashboards import lint_dashboards, promql_for_promtool
from generator.plan import ServicePlan
from tests.test_grafana_schema import RELEASES, schema_errors
from tests.test_per_model import SLOS, _model, _plan, _pool, _promtool, _up
from tests.test_server_reality import plan_of, spec_data

ROLES = {"prefill": "prefill", "decode": "decode"}
MODELS_ROW = [
    "SLO availability by model: SLI over 28d (objective 99%)",
    "SLO availability by model: error ratio (1h)",
    "SLO ttft by model: SLI over 28d (objective 99%)",
    "SLO ttft by model: error ratio (1h)",
    "Share of requests by model",
    "Unwatched share of requests (limit 50%)",
]
LORA = ["LoRA adapter pool per pod", "Pods with a full LoRA pool, with adapters waiting"]
KV = ["KV transfers failing", "KV transfer time p99"]


def _rows(plan: ServicePlan) -> dict[str, list[dict[str, Any]]]:
    """Row title -> its panels."""
    out: dict[str, list[dict[str, Any]]] = {}
    current: list[dict[str, Any]] = []
    for p in service_dashboard(plan)["panels"]:
        if p["type"] == "row":
            current = out.setdefault(p["title"], [])
        else:
            current.append(p)
    return out


def _titles(plan: ServicePlan) -> list[str]:
    return [p["title"] for panels in _rows(plan).values() for p in panels]


def _exprs(plan: ServicePlan, title: str) -> list[str]:
    (panel,) = [p for ps in _rows(plan).values() for p in ps if p["title"] == title]
    return [promql_for_promtool(t["expr"]) for t in panel["targets"]]


def _samples(expr: str, at: str, found: dict[str, float], digits: float = 0.001) -> dict[str, Any]:
    return {
        "expr": f"round({expr}, {digits})",
        "eval_time": at,
        "exp_samples": [{"labels": k, "value": v} for k, v in found.items()],
    }


def _by_model(slo: str, values: dict[str, float]) -> dict[str, float]:
    return {
        f'{{model_name="{m}",namespace="ns",service="svc",slo="{slo}"}}': v
        for m, v in values.items()
    }


def test_without_models_roles_or_pool_nothing_is_drawn() -> None:
    plan = plan_of(spec_data("vllm", serverVersion="0.13", slos=SLOS))
    rows = _rows(plan)
    assert "Models" not in rows
    assert not {*LORA, *KV} & set(_titles(plan))


def test_the_panels_are_drawn_where_their_records_are_and_pass_the_lint() -> None:
    plan = _plan(roles=ROLES)
    rows = _rows(plan)
    assert [p["title"] for p in rows["Models"]] == MODELS_ROW
    assert [p["title"] for p in rows["Throughput & saturation"] if "LoRA" in p["title"]] == LORA
    assert [p["title"] for p in rows["Traffic & errors"] if "KV" in p["title"]] == KV
    assert lint_dashboards({"d.json": service_dashboard(plan)}) == []
    links = {p["title"]: p["links"][0]["title"] for ps in rows.values() for p in ps if p["links"]}
    assert "ErrorBudgetBurnByModel" in links[MODELS_ROW[1]]
    assert "ModelTrafficUnwatched" in links[MODELS_ROW[5]]
    assert "ModelLoRAPoolSaturated" in links[LORA[1]]


@pytest.mark.parametrize("release", RELEASES)
def test_the_panels_meet_grafanas_schema_and_read_defined_records(release: str) -> None:
    plan = _plan(roles=ROLES)
    dashboard = service_dashboard(plan)
    assert schema_errors(dashboard, release) == []
    records = {r["record"] for g in rule_file(plan)["groups"] for r in g["rules"] if "record" in r}
    exprs = [t["expr"] for ps in _rows(plan).values() for p in ps for t in p.get("targets", [])]
    used = {n for e in exprs for n in re.findall(r"[a-z_]+:[a-z0-9_]+:[a-z0-9_]+", e)}
    assert {"service:model_lora_pool:info", "service:slo_sli_by_model:ratio_rate28d"} <= used
    assert used <= records, used - records


def test_latency_only_breakdown_draws_only_the_latency_slo() -> None:
    """vLLM 0.11 counts no model's failures: only ttft has per-model records and panels."""
    titles = [t for t in _titles(_plan(serverVersion="0.11")) if "by model" in t]
    assert titles == [t for t in MODELS_ROW if "by model" in t and "availability" not in t]


def test_the_models_panels_hold_the_records_values(tmp_path: Path) -> None:
    """200 requests a minute: llama-8b 100 (healthy), qwen.7b 60 (a third failing, a fifth
    slow), the unnamed phi-mini and gemma-2b 20 each (the rollup: a fifth of the traffic)."""
    plan = _plan()
    inputs = [
        _up(),
        *_model("llama-8b", 100),
        *_model("qwen.7b", 40, errors=20, slow=12),
        *_model("phi-mini", 20),
        *_model("gemma-2b", 20),
    ]
    errors = {"llama-8b": 0, "other": 0, "qwen.7b": 0.333}
    (sli,) = _exprs(plan, MODELS_ROW[0])
    (error,) = _exprs(plan, MODELS_ROW[1])
    (ttft,) = _exprs(plan, MODELS_ROW[3])
    (share,) = _exprs(plan, MODELS_ROW[4])
    (unwatched,) = _exprs(plan, MODELS_ROW[5])
    tests = [
        _samples(error, "40m", _by_model("availability", errors)),
        _samples(sli, "40m", _by_model("availability", {m: 1 - v for m, v in errors.items()})),
        _samples(ttft, "40m", _by_model("ttft", {"llama-8b": 0, "other": 0, "qwen.7b": 0.2})),
        _samples(
            share,
            "40m",
            _by_model("availability", {"llama-8b": 0.5, "other": 0.2, "qwen.7b": 0.3}),
        ),
        _samples(unwatched, "80m", {'{namespace="ns",service="svc"}': 0.2}),
    ]
    _promtool(tmp_path, plan, inputs, tests)


def test_the_pool_panels_hold_the_records_values(tmp_path: Path) -> None:
    """maxLoras 2. p0: 2 of 2 slots running, c waiting; p1: one of 2 slots free."""
    plan = _plan(alerts={"loraPool": {"maxLoras": 2}})
    inputs = [
        _up(),
        *_pool([("2", "a,b", "c", 0, 100)], pod="p0"),
        *_pool([("2", "a", "", 0, 100)], pod="p1"),
    ]
    (state,) = _exprs(plan, LORA[0])
    full, waiting = _exprs(plan, LORA[1])
    pool = 'max_lora="2",pod="{}",running_lora_adapters="{}"'
    tests = [
        _samples(
            state,
            "40m",
            {
                "{" + pool.format("p0", "a,b") + ',waiting_lora_adapters="c"}': 2400,
                "{" + pool.format("p1", "a") + "}": 2400,
            },
        ),
        _samples(full, "40m", {'{namespace="ns"}': 1}),
        _samples(waiting, "40m", {'{namespace="ns"}': 1}),
    ]
    _promtool(tmp_path, plan, inputs, tests)


def test_the_transfer_panels_hold_the_records_values(tmp_path: Path) -> None:
    """The decode role: 75 transfers a minute done (at 5 ms), 25 failed."""
    plan = _plan(roles=ROLES)
    failing, slow = (_exprs(plan, title)[0] for title in KV)
    tests = [
        _samples(f"sum({failing})", "20m", {"{}": 0.25}),
        _samples(f"sum({slow})", "20m", {"{}": 0.00495}, digits=0.00001),
    ]
    inputs = [_up(), *kv_transfer._transfers(plan, 30, 75, 25, slow=False)]
    _promtool(tmp_path, plan, inputs, tests)
