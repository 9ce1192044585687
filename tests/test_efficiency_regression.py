"""``spec.alerts.efficiencyRegression``: the optional ticket on a sustained regression of energy
per 1,000 output tokens (or GPU-seconds per million) against the same hour a day ago.

Proved in real promtool (Prometheus 3.16 and 2.53) on both GPU sources, from the family's proof
cases (:func:`efficiency_regression.proof_cases`: a day and more of evaluations, so on the
alert and the records it reads, not the whole rule file): energy up by half on the second day with steady tokens fires one ticket after
a regressed hour and ``for``; steady energy stays quiet; the same regression on too little
traffic stays quiet. Off unless the spec sets it: a spec without it renders the same rule file
as one that disables it, with no such alert.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from generator import naming
from generator.builders.rulefile import rule_file
from generator.families import efficiency_regression
from generator.yamlio import dump_yaml
from tests.autoscaling_support import check as _check
from tests.factories import good_spec, set_path
from tests.helpers_promtool import promtool_rules
from tests.test_server_reality import plan_of, spec_data

ALERT = naming.ALERT_EFFICIENCY_REGRESSED
LINES = ("prometheus3", "prometheus2")


def _data(exporter: str, **alert: Any) -> dict[str, Any]:
    data = spec_data("vllm", gpu={"exporter": exporter})
    data["spec"]["alerts"] = {"efficiencyRegression": alert}
    return data


def _reads(plan: Any) -> dict[str, Any]:
    """The plan's rule file cut to the alert and every record it reads, directly or not, in
    their groups and order."""
    doc = rule_file(plan)
    rules = [r for g in doc["groups"] for r in g["rules"]]
    needed = {ALERT}
    exprs = [r["expr"] for r in rules if r.get("alert") == ALERT]
    while exprs:
        text = exprs.pop()
        for r in rules:
            name = r.get("record")
            if (
                name
                and name not in needed
                and re.search(rf"(?<![\w:]){re.escape(name)}(?![\w:])", text)
            ):
                needed.add(name)
                exprs.append(r["expr"])
    groups = []
    for g in doc["groups"]:
        kept = [r for r in g["rules"] if (r.get("record") or r.get("alert")) in needed]
        if kept:
            groups.append({**g, "rules": kept})
    return {**doc, "groups": groups}


def _promtool(line: str, tmp_path: Path, plan: Any, groups: list[dict[str, Any]]) -> str:
    return promtool_rules(line, tmp_path, _reads(plan), groups)


def _alerts(plan: Any) -> set[str]:
    return {r.get("alert") for g in rule_file(plan)["groups"] for r in g["rules"]}


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("exporter", ["sidecar", "dcgm"])
def test_fires_on_a_regression_and_stays_quiet_when_healthy_or_idle(
    tmp_path: Path, line: str, exporter: str
) -> None:
    plan = plan_of(_data(exporter))
    groups = efficiency_regression.proof_cases(plan)
    assert [g["name"] for g in groups] == [
        f"{ALERT} fires",
        f"{ALERT} stays quiet",
        f"{ALERT}: too little traffic to judge stays quiet",
    ]
    result = _promtool(line, tmp_path, plan, groups)
    assert result.startswith("PASS"), result


def test_the_firing_case_fails_against_a_rule_that_cannot_fire(tmp_path: Path) -> None:
    plan = plan_of(_data("sidecar", maxIncrease=0.6))  # 1.5× is not above 1.6×
    groups = efficiency_regression.proof_cases(plan)
    result = _promtool("prometheus3", tmp_path, plan, groups[:1])
    assert result.startswith("FAIL") and f"{ALERT} fires" in result, result


def test_off_unless_the_spec_sets_it() -> None:
    for exporter in ("sidecar", "dcgm"):
        without = spec_data("vllm", gpu={"exporter": exporter})
        off = _data(exporter, enabled=False)
        assert ALERT not in _alerts(plan_of(without))
        assert dump_yaml(rule_file(plan_of(without))) == dump_yaml(rule_file(plan_of(off)))
        assert ALERT in _alerts(plan_of(_data(exporter)))


def test_spec_values_reach_the_rule() -> None:
    plan = plan_of(
        _data("dcgm", maxIncrease=0.5, baseline="7d", minTokensPerSecond=20, measure="gpuSeconds")
    )
    (rule,) = efficiency_regression.rules(plan)
    expr = rule["expr"]
    assert "model_gpu_seconds_per_1m_output_tokens" in expr and "[1h] offset 7d)" in expr
    assert ") > 1.5\n" in expr and expr.count(">= 20") == 2
    assert rule["labels"]["severity"] == "warning" and rule["for"] == "1h"
    assert efficiency_regression.proof_cases(plan) == []  # the proof uses the 1d baseline
    assert efficiency_regression.cases(plan) == []  # none in the generated test file


def test_without_a_gpu_source_there_is_no_rule() -> None:
    data = spec_data("vllm")
    data["spec"]["alerts"] = {"efficiencyRegression": {}}
    assert ALERT not in _alerts(plan_of(data))


@pytest.mark.parametrize(
    ("alert", "message"),
    [
        ({"maxIncrease": 0}, "spec.alerts.efficiencyRegression.maxIncrease"),
        ({"baseline": "2d"}, "spec.alerts.efficiencyRegression.baseline"),
        ({"minTokensPerSecond": -1}, "spec.alerts.efficiencyRegression.minTokensPerSecond"),
        ({"measure": "watts"}, "spec.alerts.efficiencyRegression.measure"),
    ],
)
def test_bad_values_are_refused_naming_file_and_field(
    alert: dict[str, Any],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = set_path(good_spec(), "spec.alerts.efficiencyRegression", alert)
    code, err = _check(tmp_path, monkeypatch, capsys, data)
    assert code == 2, err
    assert f"specs/x.yaml: {message}" in err, err
    assert "Traceback" not in err
