"""``ModelPreemptionsHigh``: preempted requests per second above ``alerts.preemptions.max``,
rendered only where the server has a preemption counter; proved by the real promtool."""

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

ALERT = "ModelPreemptionsHigh"
ENGINE = {"model_name": "m", "engine": "0"}


def alerts_of(plan: ServicePlan) -> list[dict[str, Any]]:
    return [r for g in rule_file(plan)["groups"] for r in g["rules"] if r.get("alert") == ALERT]


def test_vllm_tickets_above_the_specs_rate_with_a_guard_on_its_counter() -> None:
    plan = plan_of(spec_data("vllm", alerts={"preemptions": {"max": 0.5, "for": "5m"}}))
    (rule,) = alerts_of(plan)
    assert rule["expr"] == 'service:model_preemptions:rate5m{namespace="ns",service="svc"} > 0.5'
    assert rule["for"] == "5m" and rule["labels"]["severity"] == "warning"
    assert "vllm:num_preemptions_total" in rule["annotations"]["description"]
    guards = {(i.signal, i.metric) for i in signal_inputs(plan) if ALERT in i.readers}
    assert guards == {("preemptions", "vllm:num_preemptions_total")}


@pytest.mark.parametrize("server", ["sglang", "trtllm", "tgi", "triton", "openai-http"])
def test_a_server_without_a_preemption_counter_renders_no_alert(server: str) -> None:
    plan = plan_of(spec_data(server))
    assert plan.preemptions is None and alerts_of(plan) == []
    assert not any(i.signal == "preemptions" for i in signal_inputs(plan))


def test_asking_for_it_on_such_a_server_warns_and_a_declared_counter_enables_it() -> None:
    plan = plan_of(spec_data("sglang", alerts={"preemptions": {"max": 2}}))
    assert alerts_of(plan) == []
    (warning,) = [w for w in plan.warnings if w.path == "spec.alerts.preemptions"]
    assert "exports no preemptions counter" in warning.message
    declared = plan_of(
        spec_data(
            "sglang", metrics={"preemptions": {"name": "sglang:num_retracted_requests_total"}}
        )
    )
    (rule,) = alerts_of(declared)
    assert "sglang:num_retracted_requests_total" in rule["annotations"]["description"]


def test_disabled_renders_no_alert_and_no_guard() -> None:
    plan = plan_of(spec_data("vllm", alerts={"preemptions": {"enabled": False}}))
    assert alerts_of(plan) == []
    assert not any(i.signal == "preemptions" for i in signal_inputs(plan))


def test_generated_cases_fire_on_preemptions_and_stay_silent_when_healthy(tmp_path: Path) -> None:
    plan = plan_of(spec_data("vllm"))
    groups = [g for g in family_groups(plan) if g["name"].startswith(ALERT)]
    fired = {
        g["name"]: [(t["alertname"], len(t["exp_alerts"])) for t in g["alert_rule_test"]]
        for g in groups
    }
    assert fired == {f"{ALERT} fires": [(ALERT, 1)], f"{ALERT} stays quiet": [(ALERT, 0)]}
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule_file(plan)), encoding="utf-8")
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "tests.yaml").write_text(dump_yaml(tests), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", "tests.yaml", cwd=tmp_path))


@pytest.mark.parametrize(
    ("values", "alerts"),
    [
        pytest.param("0+120x40", 1, id="2/s from start-up: fires"),
        pytest.param("0+30x40", 0, id="0.5/s, under the limit: silent"),
        pytest.param("0x40", 0, id="idle engine, counter at 0: silent"),
        pytest.param("_x10 3000+120x30", 1, id="counter appears late at 3000, then 2/s: fires"),
    ],
)
def test_the_rate_is_read_from_the_counter_however_it_starts(
    tmp_path: Path, values: str, alerts: int
) -> None:
    plan = plan_of(spec_data("vllm", alerts={"preemptions": {"max": 1, "for": "10m"}}))
    inputs = [series("up", "1x40"), series("vllm:num_preemptions_total", values, **ENGINE)]
    promtool_passes(tmp_path, plan, inputs, [firing(ALERT, "30m", alerts)])
