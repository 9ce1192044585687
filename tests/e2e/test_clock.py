"""The e2e specs agree with the suite's clock (``e2e_clock``): they run at its intervals, no
single failed scrape pages, a guard reading a record outlasts vmalert's lag of one recording
level, and the inhibition scenario's symptoms wait for ModelTargetDown."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator import core, naming
from generator.units import parse_duration_ms
from tests.e2e.e2e_clock import (
    EVALUATION_INTERVAL_S,
    POLL_S,
    SCRAPE_INTERVAL_S,
    react_s,
)
from tests.e2e.e2e_env import INHIBIT_SPEC, SPECS, plan_of, spec_data
from tests.e2e.e2e_scenarios import LATE_PER_LEVEL_S, hold_s
from tests.e2e.test_fastapi_instrumentator import SPEC as FASTAPI_SPEC

SPEC_FILES = sorted(SPECS.glob("*.yaml"))
TARGET_HEALTH = (naming.ALERT_TARGET_DOWN, naming.ALERT_GPU_EXPORTER_DOWN)
"""The alerts a failed scrape makes true."""
SYMPTOMS = (naming.ALERT_LATENCY_P99, naming.ALERT_SLOW_REQUESTS, naming.ALERT_ERROR_RATIO)


def _rules(path: Path) -> str:
    plan = plan_of(spec_data(path), path.name)
    return core.build([plan])[naming.rules_file(plan.name)]


def _alerts(rules: str) -> set[str]:
    return {r["alert"] for g in yaml.safe_load(rules)["groups"] for r in g["rules"] if "alert" in r}


@pytest.mark.parametrize(
    "prometheus",
    [
        *(pytest.param(spec_data(p)["spec"]["prometheus"], id=p.name) for p in SPEC_FILES),
        pytest.param(FASTAPI_SPEC["spec"]["prometheus"], id="test_fastapi_instrumentator.py"),
    ],
)
def test_every_spec_runs_at_the_suites_intervals(prometheus: dict[str, str]) -> None:
    assert parse_duration_ms(prometheus["scrapeInterval"]) / 1000 == SCRAPE_INTERVAL_S
    assert parse_duration_ms(prometheus["evaluationInterval"]) / 1000 == EVALUATION_INTERVAL_S


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.name)
def test_no_single_failed_scrape_pages(path: Path) -> None:
    rules = _rules(path)
    for alert in sorted(_alerts(rules) & set(TARGET_HEALTH)):
        assert hold_s(rules, [alert]) >= 2 * SCRAPE_INTERVAL_S, alert


def test_a_guard_reading_a_record_outlasts_vmalerts_lag_of_one_level() -> None:
    rules = _rules(SPECS / "model.yaml")
    assert hold_s(rules, [naming.ALERT_SIGNAL_MISSING]) > LATE_PER_LEVEL_S


def test_the_symptoms_fire_after_target_down_reached_the_alertmanager() -> None:
    # The scenario kills the target at most a poll after it saw the symptoms pending;
    # ModelTargetDown then fires within react_s of its own hold.
    rules = _rules(INHIBIT_SPEC)
    target_down = react_s(hold_s(rules, [naming.ALERT_TARGET_DOWN]))
    assert hold_s(rules, SYMPTOMS) >= target_down + POLL_S
    for symptom in SYMPTOMS:
        assert hold_s(rules, [symptom]) == hold_s(rules, SYMPTOMS), symptom


@pytest.mark.parametrize(
    ("rule_file", "alerts", "expected"),
    [
        pytest.param(
            "groups: [{name: g, rules: [{alert: A, expr: up == 0, for: 4s}]}]",
            ["A"],
            4.0,
            id="a for",
        ),
        pytest.param(
            "groups: [{name: g, rules: [{alert: A, expr: 'count_over_time((up == 0)[5s:2s]) * 2"
            " >= 4'}, {alert: A, expr: absent(up), for: 4s}]}]",
            ["A"],
            4.0,
            id="a windowed alert's held time",
        ),
        pytest.param(
            "groups: [{name: g, rules: [{alert: A, expr: up == 0}, {alert: B, expr: up, "
            "for: 1m}]}]",
            ["A"],
            0.0,
            id="other alerts do not count",
        ),
    ],
)
def test_hold_reads_for_and_windowed_thresholds(
    rule_file: str, alerts: list[str], expected: float
) -> None:
    assert hold_s(rule_file, alerts) == expected
