"""``spec.models``: per-model SLIs of a server hosting several models (named ones plus an
``other`` rollup), ``ErrorBudgetBurnByModel`` for the model that burns, the
``ModelTrafficUnwatched`` ticket when unnamed models carry most requests; proved by the real
promtool (3.16) on vLLM 0.13 series (``vllm:request_success_total`` by ``model_name`` and
``finished_reason``: vllm/v1/metrics/loggers.py at tag v0.13.0)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.builders import model_slo_rules
from generator.builders.rulefile import rule_file
from generator.cases.model_cases import model_groups
from generator.errors import ObsgenError
from generator.families import family as family_of
from generator.families import lora_pool
from generator.yamlio import dump_yaml
from tests.helpers_promtool import assert_ok, run_promtool
from tests.test_server_reality import firing, plan_of, series, spec_data

BURN = "ErrorBudgetBurnByModel"
UNWATCHED = "ModelTrafficUnwatched"
ENGINE = "vllm:request_success_total"
TTFT = "vllm:time_to_first_token_seconds"
SLOS = [
    {"name": "availability", "objective": 99.0, "window": "28d"},
    {"name": "ttft", "indicator": "ttft", "threshold": "1s", "objective": 99.0, "window": "28d"},
]
NAMED = ["llama-8b", "qwen.7b"]
MINUTES = 100


def _plan(**body: Any) -> Any:
    fields = {"serverVersion": "0.13", "slos": SLOS, "models": {"names": NAMED}, **body}
    return plan_of(spec_data("vllm", **fields))


def _model(name: str, ok: int, errors: int = 0, slow: int = 0) -> list[dict[str, str]]:
    """One model's engine counter (``ok`` stops and ``errors`` errors a minute) and its TTFT
    histogram (``slow`` of the requests a minute over 1s, the rest at 0.1s)."""
    out = [series(ENGINE, f"0+{ok}x{MINUTES}", model_name=name, finished_reason="stop")]
    if errors:
        out.append(
            series(ENGINE, f"0+{errors}x{MINUTES}", model_name=name, finished_reason="error")
        )
    total = ok + errors
    for le, count in (("0.1", total - slow), ("1.0", total - slow), ("+Inf", total)):
        out.append(series(f"{TTFT}_bucket", f"0+{count}x{MINUTES}", model_name=name, le=le))
    out.append(series(f"{TTFT}_count", f"0+{total}x{MINUTES}", model_name=name))
    return out


def _promtool(tmp_path: Path, plan: Any, inputs: list[dict[str, str]], tests: list[Any]) -> None:
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule_file(plan)), encoding="utf-8")
    suite = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": inputs, "promql_expr_test": tests}],
    }
    (tmp_path / "case.test.yaml").write_text(dump_yaml(suite), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", "case.test.yaml", cwd=tmp_path))


def _burning(slo: str, by_model: dict[str, int], at: str = "40m") -> dict[str, Any]:
    """Firing ``ErrorBudgetBurnByModel`` tiers of ``slo`` per model label at ``at``."""
    sel = f'ALERTS{{alertname="{BURN}",alertstate="firing",service="svc",slo="{slo}"}}'
    return {
        "expr": f"count by (model_name) ({sel})",
        "eval_time": at,
        "exp_samples": [
            {"labels": f'{{model_name="{m}"}}', "value": n} for m, n in sorted(by_model.items())
        ],
    }


def _up() -> dict[str, str]:
    return series("up", f"1x{MINUTES}")


def test_healthy_models_and_a_small_rollup_stay_silent(tmp_path: Path) -> None:
    inputs = [
        _up(),
        *_model("llama-8b", 100),
        *_model("qwen.7b", 50),
        *_model("phi-mini", 20),
        *_model("gemma-2b", 10),
    ]
    sli = "service:slo_sli_error_by_model:ratio_rate1h"
    tests = [
        _burning("availability", {}),
        _burning("ttft", {}),
        firing(UNWATCHED, "40m", 0),
        firing(UNWATCHED, "90m", 0),
        {  # the records: two named models and one rollup, each healthy
            "expr": f'count by (model_name) ({sli}{{slo="availability"}} == 0)',
            "eval_time": "40m",
            "exp_samples": [
                {"labels": f'{{model_name="{m}"}}', "value": 1}
                for m in ("llama-8b", "other", "qwen.7b")
            ],
        },
    ]
    _promtool(tmp_path, _plan(), inputs, tests)


def test_a_named_model_burning_fires_with_its_model_label(tmp_path: Path) -> None:
    """qwen.7b fails a third of its requests and is slow on a fifth: every tier of both SLOs
    fires for it alone; the big healthy model dilutes the service's own ratio to 1 in 12."""
    inputs = [
        _up(),
        *_model("llama-8b", 500),
        *_model("qwen.7b", 40, errors=20, slow=12),
        *_model("phi-mini", 20),
    ]
    tests = [_burning("availability", {"qwen.7b": 4}), _burning("ttft", {"qwen.7b": 4})]
    _promtool(tmp_path, _plan(), inputs, tests)


def test_an_unnamed_model_burning_fires_for_the_rollup(tmp_path: Path) -> None:
    inputs = [_up(), *_model("llama-8b", 100), *_model("phi-mini", 10, errors=10)]
    _promtool(tmp_path, _plan(), inputs, [_burning("availability", {"other": 4})])


def test_unnamed_traffic_majority_tickets(tmp_path: Path) -> None:
    inputs = [
        _up(),
        *_model("llama-8b", 10),
        *_model("qwen.7b", 10),
        *_model("phi-mini", 30),
        *_model("gemma-2b", 30),
    ]
    share = "service:model_requests_unwatched:ratio_rate1h"
    tests = [
        firing(UNWATCHED, "10m", 0),  # not yet held for 15m
        firing(UNWATCHED, "30m", 1),
        {
            "expr": f"round({share}, 0.001)",
            "eval_time": "30m",
            "exp_samples": [{"labels": '{namespace="ns",service="svc"}', "value": 0.75}],
        },
    ]
    _promtool(tmp_path, _plan(), inputs, tests)


def test_a_trickle_of_unnamed_traffic_is_no_majority(tmp_path: Path) -> None:
    """An idle night: one canary request a minute to an unnamed model, under 60 an hour."""
    inputs = [_up(), series(ENGINE, "0+0.5x100", model_name="phi-mini", finished_reason="stop")]
    _promtool(tmp_path, _plan(), inputs, [firing(UNWATCHED, "60m", 0)])


def test_specs_without_models_render_no_per_model_rule() -> None:
    plan = plan_of(spec_data("vllm", serverVersion="0.13", slos=SLOS))
    names = [g["name"] for g in rule_file(plan)["groups"]]
    assert not [n for n in names if "models" in n]


def test_the_rollup_bounds_the_records_cardinality() -> None:
    groups = {g["name"]: g for g in rule_file(_plan())["groups"]}
    (events,) = [
        r
        for r in groups["obsgen.svc.slo.availability.models"]["rules"]
        if r.get("record") == "service:slo_outcomes_by_model:increase1m"
    ]
    assert 'model_name=~"llama-8b|qwen\\\\.7b"' in events["expr"]
    assert "label_replace(\nlabel_replace(sum by (namespace) (" in events["expr"]
    assert '"model_name", "other", "", "")' in events["expr"]


def test_vllm_before_013_breaks_down_latency_only() -> None:
    """Before 0.13 no counter carries a model's failures (http_requests_total has no
    model_name; the engine counts no error reason): availability stays service-level."""
    plan = _plan(serverVersion="0.11")
    names = [g["name"] for g in rule_file(plan)["groups"]]
    assert "obsgen.svc.slo.ttft.models" in names
    assert "obsgen.svc.slo.availability.models" not in names


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"server": "tgi"}, "spec.models", "reads no model label"),
        ({"groupBy": ["model_name"]}, "spec.models", "groupBy"),
        ({"models": {"names": ["a", "a"]}}, "spec.models.names", "listed twice"),
        ({"models": {"names": ["other"]}}, "spec.models.names", "rollup"),
        ({"models": {"names": []}}, "spec.models.names", "at least 1"),
    ],
)
def test_bad_models_are_refused_naming_the_field(
    body: dict[str, Any], field: str, words: str
) -> None:
    server = body.pop("server", "vllm")
    fields = {"slos": SLOS, "models": {"names": NAMED}, **body}
    with pytest.raises(ObsgenError) as err:
        plan_of(spec_data(server, **fields))
    text = str(err.value)
    assert field in text and words in text, text


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"serverVersion": "0.11"},
        {"models": {"names": ["llama-8b"], "maxUnwatchedShare": 0.9}},
        {"groupBy": ["engine"]},
    ],
    ids=["vllm-0.13", "vllm-0.11 (latency only)", "share 0.9", "groupBy"],
)
def test_generated_cases_prove_each_alert(tmp_path: Path, body: dict[str, Any]) -> None:
    plan = _plan(**body)
    groups = model_groups(plan)
    names = [g["name"] for g in groups]
    assert len(names) == 3, names
    fired = [len(t["exp_alerts"]) for g in groups for t in g["alert_rule_test"]]
    tiers = sum(len(model_slo_rules.burn_alerts(plan, s)) for s in plan.slos)
    assert fired == [0, 0, tiers, 1] and tiers >= 4, fired
    burn = groups[1]["alert_rule_test"][0]["exp_alerts"]
    assert {a["exp_labels"]["model_name"] for a in burn} == {plan.models.names[0]}
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule_file(plan)), encoding="utf-8")
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "tests.yaml").write_text(dump_yaml(tests), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", "tests.yaml", cwd=tmp_path))


# --- LoRA adapter pool and KV transfer (vLLM, fixture read at tag v0.13.0) --------------------

FIXTURE = Path(__file__).parent / "fixtures" / "per_model" / "vllm-0.13-lora-nixl.prom"
LORA = "vllm:lora_requests_info"
POOL = "ModelLoRAPoolSaturated"


def test_the_preset_reads_what_the_source_exports() -> None:
    text = FIXTURE.read_text(encoding="utf-8")
    preset = _plan().preset
    assert preset.lora_info == LORA and f"# TYPE {LORA} gauge" in text
    assert 'max_lora="2",running_lora_adapters="sql-lora,chat-lora"' in text
    assert preset.kv_transfer is not None
    histogram, failed = preset.kv_transfer
    assert f"# TYPE {histogram} histogram" in text and f"# TYPE {failed} counter" in text
    assert _plan(serverVersion="0.10").preset.lora_info is None  # entries from 0.11 read it


def _pool(phases: list[tuple[str, str, str, int, int]], pod: str = "p0") -> list[dict[str, str]]:
    """The info gauge of one pod: per ``(max, running, waiting, from, to)`` minute, the label
    set vLLM sets then (value: the time it was set), frozen after."""
    out = []
    for slots, running, waiting, start, end in phases:
        values = (f"_x{start} " if start else "") + f"{start * 60}+60x{end - start}"
        if end < MINUTES:
            values += f" {end * 60}x{MINUTES - end}"
        labels = {"max_lora": slots, "running_lora_adapters": running, "pod": pod}
        if waiting:
            labels["waiting_lora_adapters"] = waiting
        out.append(series(LORA, values, **labels))
    return out


@pytest.mark.parametrize(
    ("phases", "slots", "alerts"),
    [
        pytest.param([("2", "a,b", "c", 0, 100)], 2, 1, id="2 of 2 running, c waiting: fires"),
        pytest.param([("4", "a,b,c", "d", 0, 100)], 4, 0, id="a free slot: silent"),
        pytest.param([("2", "a,b", "", 0, 100)], 2, 0, id="full, nothing waiting: silent"),
        pytest.param(
            [("2", "a,b", "c", 0, 30), ("2", "a,c", "", 30, 100)],
            2,
            0,
            id="saturated, then c got a slot (the old label set stays exported): silent",
        ),
        pytest.param(
            [("1", "a", "b", 0, 10), ("1", "a", "", 10, 12), ("1", "a", "b", 12, 100)],
            1,
            1,
            id="max_lora 1 (vLLM's default), waiting again after a brief gap: fires",
        ),
        pytest.param(
            [("8", "a,b,c,d,e,f,g,h", "i", 0, 100)], 8, 1, id="8 of 8 running, i waiting: fires"
        ),
    ],
)
def test_adapter_pool_saturation(
    tmp_path: Path, phases: list[tuple[str, str, str, int, int]], slots: int, alerts: int
) -> None:
    inputs = [_up(), *_model("llama-8b", 10), *_pool(phases)]
    plan = _plan(alerts={"loraPool": {"maxLoras": slots}})
    _promtool(tmp_path, plan, inputs, [firing(POOL, "80m", alerts)])


def test_the_saturation_regex_counts_one_pool_size() -> None:
    """One size per rule: an alternation over every size compiles to thousands of RE2
    instructions, which Prometheus pays at every evaluation."""
    assert lora_pool.full_pattern(1) == "1;[^,;]+"
    assert lora_pool.full_pattern(3) == "3;[^,;]+(?:,[^,;]+){2}"
    exprs = [
        r["expr"]
        for g in rule_file(_plan(alerts={"loraPool": {"maxLoras": 16}}))["groups"]
        for r in g["rules"]
        if r.get("alert") == POOL
    ]
    assert len(exprs) == 1 and "16;[^,;]+(?:,[^,;]+){15}" in exprs[0] and "|" not in exprs[0]


def test_one_pod_saturated_of_two_fires_for_that_pod(tmp_path: Path) -> None:
    inputs = [
        _up(),
        *_pool([("2", "a,b", "c", 0, 100)], pod="p0"),
        *_pool([("2", "a", "", 0, 100)], pod="p1"),
    ]
    test = {
        "expr": f'count by (pod) (ALERTS{{alertname="{POOL}",alertstate="firing"}})',
        "eval_time": "40m",
        "exp_samples": [{"labels": '{pod="p0"}', "value": 1}],
    }
    _promtool(tmp_path, _plan(alerts={"loraPool": {"maxLoras": 2}}), inputs, [test])


def test_pool_and_transfer_alerts_are_opt_in_without_models_or_roles() -> None:
    plain = plan_of(spec_data("vllm", serverVersion="0.13"))
    assert "lora_pool" not in plain.alerts and "kv_transfer" not in plain.alerts
    asked = plan_of(
        spec_data("vllm", serverVersion="0.13", alerts={"loraPool": {}, "kvTransfer": {}})
    )
    assert {"lora_pool", "kv_transfer"} <= set(asked.alerts)
    assert "lora_pool" in _plan().alerts
    roles = {"prefill": "prefill", "decode": "decode"}
    assert "kv_transfer" in plan_of(spec_data("vllm", serverVersion="0.13", roles=roles)).alerts


@pytest.mark.parametrize(
    ("family", "body"),
    [
        ("lora_pool", {}),
        ("kv_transfer", {"roles": {"prefill": "prefill", "decode": "decode"}}),
        ("kv_transfer", {"alerts": {"kvTransfer": {"maxRatio": 0.1, "threshold": "500ms"}}}),
    ],
    ids=["lora pool", "kv transfer, disaggregated", "kv transfer, own limits"],
)
def test_generated_family_cases_pass(tmp_path: Path, family: str, body: dict[str, Any]) -> None:
    plan = _plan(**body)
    f = family_of(family)
    assert f is not None
    groups = f.cases(plan)
    fired = [len(t["exp_alerts"]) for g in groups for t in g["alert_rule_test"]]
    assert sum(fired) >= 1 and 0 in fired, fired
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule_file(plan)), encoding="utf-8")
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "tests.yaml").write_text(dump_yaml(tests), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", "tests.yaml", cwd=tmp_path))


def test_kv_transfer_reads_the_decode_role() -> None:
    roles = {"prefill": "prefill", "decode": "decode"}
    plan = plan_of(spec_data("vllm", serverVersion="0.13", roles=roles))
    (record,) = [
        r
        for g in rule_file(plan)["groups"]
        for r in g["rules"]
        if r.get("record") == "service:model_kv_transfer_failures:ratio_rate5m"
    ]
    assert 'llm_d_ai_role="decode"' in record["expr"] and "prefill" not in record["expr"]


def test_a_transfer_threshold_no_bucket_can_exceed_is_refused() -> None:
    with pytest.raises(ObsgenError) as err:
        plan_of(spec_data("vllm", alerts={"kvTransfer": {"threshold": "5s"}}))
    assert "spec.alerts.kvTransfer.threshold" in str(err.value)
    assert "largest bucket bound" in str(err.value)
