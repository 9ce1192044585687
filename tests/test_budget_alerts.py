"""``ErrorBudgetLow``: one ticket per SLO for the lowest budget level crossed, proved by promtool."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.builders.rulefile import rule_file
from generator.cases.slo_cases import budget_groups
from generator.errors import ObsgenError
from generator.plan import ServicePlan, resolve
from generator.spec import parse_spec
from generator.yamlio import dump_yaml
from tests.helpers_promtool import promtool

ROOT = Path(__file__).resolve().parents[1]


def spec(**alerting: Any) -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "specs" / "qwen-sglang.yaml").read_text(encoding="utf-8"))
    data = copy.deepcopy(data)
    data["spec"]["slos"] = [
        {"name": "availability", "objective": 99.5, "alerting": alerting},
        {"name": "ttft", "indicator": "ttft", "threshold": "2s", "objective": 99},
    ]
    return dict(data)


def plan_of(data: dict[str, Any]) -> ServicePlan:
    return resolve(parse_spec(data, "mem.yaml"), "mem.yaml")


def budget_rules(plan: ServicePlan) -> list[dict[str, Any]]:
    return [
        r
        for g in rule_file(plan)["groups"]
        for r in g["rules"]
        if r.get("alert") == "ErrorBudgetLow"
    ]


def test_each_level_fires_down_to_the_next_one_only() -> None:
    rules = budget_rules(plan_of(spec()))
    by_level = {(r["labels"]["slo"], r["labels"]["budget_left"]): r for r in rules}
    assert sorted(by_level) == [
        ("availability", "25"),
        ("availability", "50"),
        ("ttft", "25"),
        ("ttft", "50"),
    ]
    top = by_level["availability", "50"]["expr"]
    assert top.startswith(
        '(service:slo_error_budget_remaining:ratio{namespace="llm-serving",service="qwen-sglang",slo="availability"} < 0.5) >= 0.25\n'
    )
    assert "< 0.25\n" in by_level["availability", "25"]["expr"]
    assert ">= 10" in top  # the window counted minEvents events
    assert {r["labels"]["severity"] for r in rules} == {"warning"}


def test_budget_left_levels_are_the_specs_and_an_empty_list_disables_them() -> None:
    rules = budget_rules(plan_of(spec(budgetLeft=[0.75, 0.4, 0.1])))
    assert sorted(
        {r["labels"]["budget_left"] for r in rules if r["labels"]["slo"] == "availability"}
    ) == ["10", "40", "75"]
    rules = budget_rules(plan_of(spec(budgetLeft=[])))
    assert {r["labels"]["slo"] for r in rules} == {"ttft"}
    assert budget_rules(plan_of(spec(enabled=False))) == [
        r for r in rules if r["labels"]["slo"] == "ttft"
    ]


@pytest.mark.parametrize(
    ("levels", "message"),
    [
        pytest.param([0.25, 0.5], "expected levels in strictly descending order", id="ascending"),
        pytest.param([1.0], "each above 0 and below 1", id="a whole budget"),
    ],
)
def test_bad_levels_are_refused_with_the_field_path(levels: list[float], message: str) -> None:
    with pytest.raises(ObsgenError) as caught:
        parse_spec(spec(budgetLeft=levels), "mem.yaml")
    (d,) = caught.value.diagnostics
    assert d.path == "spec.slos[0].alerting.budgetLeft" and message in d.message


def test_generated_cases_fire_on_a_spent_budget_stay_silent_when_healthy_and_pass_promtool(
    tmp_path: Path,
) -> None:
    plan = plan_of(spec())
    groups = budget_groups(plan)
    fired = {
        g["name"]: sorted(
            (a["exp_labels"]["slo"], a["exp_labels"]["budget_left"]) for a in t["exp_alerts"]
        )
        for g in groups
        for t in g["alert_rule_test"]
    }
    assert fired == {
        "every request bad: each SLO's lowest budget level tickets": [
            ("availability", "25"),
            ("ttft", "25"),
        ],
        "healthy traffic keeps every budget: no ErrorBudgetLow": [],
        "availability: 62.5% of its budget spent leaves 37.5%: the 50% level tickets": [
            ("availability", "50")
        ],
        "ttft: 62.5% of its budget spent leaves 37.5%: the 50% level tickets": [("ttft", "50")],
    }
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule_file(plan)), encoding="utf-8")
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "tests.yaml").write_text(dump_yaml(tests), encoding="utf-8")
    result = subprocess.run(
        [promtool(), "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
