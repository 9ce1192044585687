"""``ModelSpecDecodeAcceptanceLow``: speculative decoding's acceptance rate (accepted / draft
tokens) recorded per service and model, a ticket on a sustained drop below the service's own
trailing day, silent when speculative decoding is off; proved by the real promtool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.builders.guard_rules import signal_inputs
from generator.builders.rulefile import rule_file
from generator.cases.rule_tests import family_groups
from generator.plan import ServicePlan
from generator.yamlio import dump_yaml
from tests.helpers_promtool import assert_ok, run_promtool
from tests.test_server_reality import firing, plan_of, promtool_passes, series, spec_data

ALERT = "ModelSpecDecodeAcceptanceLow"
DRAFT = "vllm:spec_decode_num_draft_tokens_total"
ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total"
FIXTURE = Path(__file__).parent / "fixtures" / "spec_decode" / "vllm-v1.prom"
HOUR = "service:model_spec_decode_acceptance:ratio_rate1h"


def rules_of(plan: ServicePlan) -> list[dict[str, Any]]:
    return [r for g in rule_file(plan)["groups"] for r in g["rules"]]


def test_the_preset_reads_the_counters_the_source_exports() -> None:
    text = FIXTURE.read_text(encoding="utf-8")
    plan = plan_of(spec_data("vllm", serverVersion="0.11"))
    assert plan.spec_decode is not None
    for counter in plan.spec_decode:
        assert f"# TYPE {counter.name} counter" in text
    assert [c.name for c in plan.spec_decode] == [DRAFT, ACCEPTED]


def test_a_ticket_against_the_services_own_day_per_model() -> None:
    plan = plan_of(spec_data("vllm", serverVersion="0.11", alerts={"specDecode": {"maxDrop": 0.5}}))
    (rule,) = [r for r in rules_of(plan) if r.get("alert") == ALERT]
    sel = f'{HOUR}{{namespace="ns",service="svc"}}'
    assert rule["expr"] == (
        f"{sel} < 0.5 * {sel.replace('ratio_rate1h', 'ratio_rate1d')}\n"
        f"and on (model_name, namespace, service) ({sel} offset 6h)"
    )
    assert rule["labels"]["severity"] == "warning" and rule["for"] == "30m"
    (record,) = [r for r in rules_of(plan) if r.get("record") == HOUR]
    assert "sum by (model_name, namespace)" in record["expr"] and "> 0)" in record["expr"]


def test_no_guard_asks_for_counters_that_exist_only_when_it_is_on() -> None:
    plan = plan_of(spec_data("vllm", serverVersion="0.11"))
    names = {s.metric for i in signal_inputs(plan) for s in i.sources}
    assert not names & {DRAFT, ACCEPTED}


@pytest.mark.parametrize(
    ("server", "extra"),
    [("sglang", {}), ("tgi", {}), ("vllm", {"serverVariant": "v0", "serverVersion": "0.8"})],
)
def test_a_server_without_the_counters_renders_nothing(server: str, extra: dict[str, Any]) -> None:
    plan = plan_of(spec_data(server, **extra))
    assert plan.spec_decode is None and "spec_decode" not in plan.alerts
    assert not [
        r
        for r in rules_of(plan)
        if "spec_decode" in str(r.get("record", "")) or r.get("alert") == ALERT
    ]


@pytest.mark.parametrize("body", [{}, {"groupBy": ["model_name"]}], ids=["service", "per model"])
def test_generated_case_fires_for_the_dropping_model_alone(
    tmp_path: Path, body: dict[str, Any]
) -> None:
    plan = plan_of(spec_data("vllm", serverVersion="0.11", **body))
    groups = [g for g in family_groups(plan) if g["name"].startswith(ALERT)]
    fired = {g["name"]: [len(t["exp_alerts"]) for t in g["alert_rule_test"]] for g in groups}
    assert fired == {f"{ALERT}: one model's acceptance halves after 8h, fires for it alone": [1]}
    (test,) = groups[0]["alert_rule_test"]
    assert test["exp_alerts"][0]["exp_labels"]["model_name"] == "a"
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule_file(plan)), encoding="utf-8")
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "tests.yaml").write_text(dump_yaml(tests), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", "tests.yaml", cwd=tmp_path))


def _traffic(accepted: str, minutes: int, draft: str | None = None) -> list[dict[str, str]]:
    labels = {"model_name": "m", "engine": "0"}
    return [
        series("up", f"1x{minutes}"),
        series(DRAFT, draft or f"0+100x{minutes}", **labels),
        series(ACCEPTED, accepted, **labels),
    ]


@pytest.mark.parametrize(
    ("accepted", "minutes", "at", "alerts"),
    [
        pytest.param("0+80x480 38480+40x150", 630, "10h", 1, id="80 % then 40 %: fires"),
        pytest.param("0+80x480 38480+70x150", 630, "10h", 0, id="80 % then 70 % (a 12.5 % dip): silent"),
        pytest.param("0+80x630", 630, "10h", 0, id="steady 80 %: silent"),
        pytest.param("0+80x120 9680+20x150", 270, "4h", 0, id="a drop before 6h of history: silent"),
    ],
)  # fmt: skip
def test_the_drop_is_measured_against_the_services_own_baseline(
    tmp_path: Path, accepted: str, minutes: int, at: str, alerts: int
) -> None:
    plan = plan_of(spec_data("vllm", serverVersion="0.11"))
    promtool_passes(tmp_path, plan, _traffic(accepted, minutes), [firing(ALERT, at, alerts)])


def test_off_records_no_ratio_and_no_alert(tmp_path: Path) -> None:
    plan = plan_of(spec_data("vllm", serverVersion="0.11"))
    inputs = [series("up", "1x600")]
    tests = [
        firing(ALERT, "9h", 0),
        {
            "expr": f"count({HOUR}) or vector(0)",
            "eval_time": "9h",
            "exp_samples": [{"labels": "{}", "value": 0}],
        },
    ]
    promtool_passes(tmp_path, plan, inputs, tests)
