"""A real FastAPI app under prometheus-fastapi-instrumentator's defaults, scraped by a real
Prometheus evaluating an o1-preview-style spec's rules.

The instrumentator (vLLM's HTTP layer) creates ``http_requests_total{status="5xx"}`` at the
first failure, already at its value (prometheus_client creates a labelled child lazily). The
app serves real 2xx, then one burst of 5xx (the first ever), then slow requests; the
availability SLO must count every failure of the burst and page, and the latency SLO must
count every slow request. Runs alone (not under the package's ``e2e`` fixture): one app, one
Prometheus at the suite's clock (``e2e_clock``), the SLO scaled to seconds as
``specs/burn.yaml``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import uvicorn
import yaml
from fastapi import FastAPI, Response
from prometheus_client import CollectorRegistry
from prometheus_fastapi_instrumentator import Instrumentator

from generator import core, naming
from generator.render import load_plans
from tests.e2e.e2e_clock import EVALUATION_INTERVAL_S, SCRAPE_INTERVAL_S, bound, react_s
from tests.e2e.e2e_prometheus import (
    PrometheusServer,
    ScrapeJob,
    find_prometheus,
    free_port,
    seconds,
    wait_for,
)

REPO = Path(__file__).resolve().parents[2]
NAME = "o1-fastapi"
BURST = 100  # failed requests inside one scrape
SLOW = 6  # requests slower than the latency SLO's 0.5 s
WAIT_S = bound(react_s())
"""Deadline of each wait: polls return as soon as the exact count is reached."""
FAST_SLO = {
    "objective": 90,
    "window": seconds(120 * SCRAPE_INTERVAL_S),
    "alerting": {
        "tiers": [
            {
                "budget": 0.5,
                "longWindow": seconds(20 * SCRAPE_INTERVAL_S),
                "shortWindow": seconds(4 * SCRAPE_INTERVAL_S),
                "severity": "critical",
            }
        ]
    },
}
"""Both SLOs: 90 % over 120 scrapes, paging when half the budget goes in 20 (and in the last
4): ``specs/burn.yaml`` at the suite's clock."""
SPEC = {
    "apiVersion": "obsgen/v1alpha1",
    "kind": "ModelService",
    "metadata": {"name": NAME, "team": "e2e"},
    "spec": {
        "server": "openai-http",
        "selector": {"namespace": "ai-inference", "job": NAME},
        "prometheus": {
            "version": "compat",
            "scrapeInterval": seconds(SCRAPE_INTERVAL_S),
            "evaluationInterval": seconds(EVALUATION_INTERVAL_S),
        },
        "metrics": {
            # The instrumentator's defaults: status is on http_requests_total only; the
            # duration histogram (handler, method) has buckets 0.1, 0.5, 1.
            "requestDuration": {"name": "http_request_duration_seconds", "buckets": [0.1, 0.5, 1]},
            "requests": {"name": "http_requests_total", "errorMatchers": {"status": "5.."}},
        },
        "slos": [
            {"name": "availability", **FAST_SLO},
            {"name": "latency", "indicator": "requestDuration", "threshold": "500ms", **FAST_SLO},
        ],
        "alerts": {"errorRatio": {"enabled": False}},
        "deployment": {"name": NAME, "container": "model"},
    },
}


def _app() -> FastAPI:
    """An OpenAI-style endpoint: 200, 500 while ``state["fail"]``, slow (0.6 s) with ``?slow=1``."""
    app = FastAPI()
    app.state.fail = False

    @app.post("/v1/chat/completions")
    async def chat(slow: int = 0) -> Response:
        if slow:
            await asyncio.sleep(0.6)
        if app.state.fail:
            return Response(status_code=500)
        return Response(content=b'{"choices": []}', media_type="application/json")

    Instrumentator(registry=CollectorRegistry()).instrument(app).expose(app)
    return app


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str, PrometheusServer]]:
    binary = find_prometheus()
    if binary is None:
        pytest.fail("prometheus binary not found; run `make prometheus` (make test does)")
    workdir = tmp_path_factory.mktemp("fastapi")
    spec = workdir / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False), encoding="utf-8")
    rules = workdir / "rules.yaml"
    rules.write_text(
        core.build(load_plans([spec], REPO))[naming.rules_file(NAME)], encoding="utf-8"
    )
    app, port = _app(), free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    prometheus = PrometheusServer(binary, workdir)
    try:
        wait_for("the app", lambda: server.started, bool, 20)
        prometheus.start([ScrapeJob(NAME, port, {"namespace": "ai-inference", "pod": "p-0"})], [])
        prometheus.wait_targets_up()
        prometheus.load_rules([rules])
        yield app, f"http://127.0.0.1:{port}/v1/chat/completions", prometheus
    finally:
        prometheus.stop()
        server.should_exit = True
        thread.join(10)


def _events(prometheus: PrometheusServer, slo: str, events: str) -> float:
    record = naming.record(
        (), naming.SLI_EVENTS, naming.increase(int(EVALUATION_INTERVAL_S * 1000))
    )
    found = prometheus.query(f'sum(sum_over_time({record}{{slo="{slo}",events="{events}"}}[10m]))')
    return float(found[0]["value"][1]) if found else -1.0


def _firing(prometheus: PrometheusServer, slo: str) -> bool:
    query = (
        f'ALERTS{{alertname="ErrorBudgetBurn",alertstate="firing",service="{NAME}",slo="{slo}"}}'
    )
    return bool(prometheus.query(query))


def test_the_first_burst_and_slow_requests_page_through_a_real_prometheus(
    served: tuple[Any, str, PrometheusServer],
) -> None:
    app, url, prometheus = served
    session = requests.Session()

    def traffic(duration_s: float, per_second: int = 5) -> None:
        end = time.monotonic() + duration_s
        while time.monotonic() < end:
            for _ in range(per_second):
                session.post(url, timeout=5)
            time.sleep(1)

    # Healthy: 2xx only, no 5xx series yet. Nothing fires, no bad event.
    traffic(4 * SCRAPE_INTERVAL_S)
    wait_for(
        "2xx counted", lambda: _events(prometheus, "availability", "total"), lambda v: v > 0, WAIT_S
    )
    assert _events(prometheus, "availability", "bad") == 0
    assert not _firing(prometheus, "availability")
    # The first failures ever: the 5xx series is created at the first one, within one scrape.
    app.state.fail = True
    for _ in range(BURST):
        assert session.post(url, timeout=5).status_code == 500
    app.state.fail = False
    wait_for(
        f"the {BURST} failures counted",
        lambda: _events(prometheus, "availability", "bad"),
        lambda v: v == BURST,
        WAIT_S,
    )
    wait_for("the availability page", lambda: _firing(prometheus, "availability"), bool, WAIT_S)
    # Slow requests, concurrently: each lands above the 0.5 s bucket.
    threads = [threading.Thread(target=requests.post, args=(f"{url}?slow=1",)) for _ in range(SLOW)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    wait_for(
        f"the {SLOW} slow requests counted",
        lambda: _events(prometheus, "latency", "bad"),
        lambda v: v == SLOW,
        WAIT_S,
    )
