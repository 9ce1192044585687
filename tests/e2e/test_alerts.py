"""Alerts go to firing when a service degrades (and back when it recovers) on a real
Prometheus loading the rendered rules; see ``e2e_scenarios`` for what each scenario does."""

from __future__ import annotations

import pytest

from tests.e2e.e2e_env import Env

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
def test_scenario(e2e: Env, scenario: str) -> None:
    e2e.result(scenario)
