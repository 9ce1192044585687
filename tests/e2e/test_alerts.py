"""Alerts go to firing when a service degrades (and back when it recovers) on a real
Prometheus and on a real VictoriaMetrics + vmalert loading the rendered rules, at the same
moments within ``TOLERANCE_S``; see ``e2e_scenarios`` for what each scenario does."""

from __future__ import annotations

import pytest

from tests.e2e.e2e_env import ENGINES, Env
from tests.e2e.e2e_scenarios import recording_depth

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(
            "healthy", id="a healthy service has no alert pending or firing and notifies no one"
        ),
        pytest.param(
            "latency",
            id="slow requests fire ModelSlowRequestsHigh and ModelLatencyP99High, which resolve after recovery",
        ),
        pytest.param("errors", id="an error burst fires ModelErrorRatioHigh"),
        pytest.param("queue", id="a growing queue fires ModelQueueDepthHigh"),
        pytest.param("gpu-memory", id="GPU memory at 97 percent fires GPUMemoryHeadroomLow"),
        pytest.param("exporter-down", id="a killed NVML exporter fires GPUExporterDown"),
        pytest.param("target-down", id="a killed model server fires ModelTargetDown"),
        pytest.param("burn", id="an outage on a seconds-scaled SLO fires ErrorBudgetBurn"),
    ],
)
@pytest.mark.parametrize("engine", ENGINES)
def test_scenario(e2e: Env, engine: str, scenario: str) -> None:
    e2e.result(scenario, engine)


def test_recording_depth_counts_the_recording_levels_under_an_alert() -> None:
    rule_file = """
groups:
- name: g
  rules:
  - {record: "a:x:rate5m", expr: "sum(rate(x[5m]))"}
  - {record: "a:y:rate5m", expr: "sum(rate(y[5m]))"}
  - {record: "a:x:ratio", expr: "a:x:rate5m / a:y:rate5m"}
  - {alert: Deep, expr: "a:x:ratio > 0.1 and a:y:rate5m > 1"}
  - {alert: Shallow, expr: "up == 0"}
"""
    assert recording_depth(rule_file, ["Deep"]) == 2
    assert recording_depth(rule_file, ["Shallow"]) == 0
    assert recording_depth(rule_file, ["Deep", "Shallow"]) == 2
