"""``histogram: nhcb`` against a real Prometheus 3 (tests/toolchain.py, the cached 3.16 build)
scraping a real classic text exposition (prometheus_client 0.26, as vLLM and SGLang serve it)
with ``convert_classic_histograms_to_nhcb: true`` (the scrape config field at v3.14.0 and
since: ``config/config.go``), and evaluating the generated rules file itself.

Under conversion the ``_bucket`` series the classic rules read are gone; the nhcb rules read
the one native series with the classic bounds, so the SLI is exact on a bound: 2 of every 10
requests slower than the 1 s threshold read as exactly 0.2 everywhere.
"""

from __future__ import annotations

import copy
import json
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server

from tests.factories import write_spec
from tests.helpers_promtool import render_to
from tests.prometheus_process import PrometheusProcess, free_port
from tests.test_histogram_forms import SPEC

HIST = "http_request_duration_seconds"
FAST, SLOW = 8, 2  # observations per batch at 0.3 s and 3 s: 20 % slower than 1 s
WAIT_S = 60.0


class _BatchRegistry(CollectorRegistry):
    """A registry whose scrapes never see half a batch (``lock`` held while feeding one)."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()

    def collect(self) -> Iterator[Any]:
        with self.lock:
            metrics = list(super().collect())
        yield from metrics


class _Server:
    """A prometheus_client exposition (text format) fed a batch every 0.2 s until stopped."""

    def __init__(self) -> None:
        self.registry = _BatchRegistry()
        self.hist = Histogram(HIST, "latency", buckets=(0.25, 0.5, 1, 2, 4), registry=self.registry)
        # prometheus_client adds _total: the exposed counter is http_requests_total.
        self.requests = Counter("http_requests", "requests", ["status"], registry=self.registry)
        self.port = free_port()
        self.stopping = threading.Event()
        self.http, self.thread = start_http_server(self.port, "127.0.0.1", self.registry)
        self.feeder = threading.Thread(target=self._feed, daemon=True)

    def _feed(self) -> None:
        while not self.stopping.wait(0.2):
            with self.registry.lock:
                for _ in range(FAST):
                    self.hist.observe(0.3)
                for _ in range(SLOW):
                    self.hist.observe(3.0)
                self.requests.labels(status="200").inc(FAST + SLOW)

    def stop(self) -> None:
        self.stopping.set()
        self.http.shutdown()


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[PrometheusProcess, Path]]:
    data = copy.deepcopy(SPEC)
    data["spec"]["metrics"]["requestDuration"]["histogram"] = "nhcb"
    data["spec"]["prometheus"].update({"scrapeInterval": "1s", "evaluationInterval": "1s"})
    rules = render_to(write_spec(tmp_path, data, "lat.yaml"), tmp_path / "out")[
        "rules/lat.rules.yaml"
    ]
    exposition = _Server()
    exposition.feeder.start()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules)],
        "scrape_configs": [
            {
                "job_name": "lat",
                "convert_classic_histograms_to_nhcb": True,
                "static_configs": [
                    {"targets": [f"127.0.0.1:{exposition.port}"], "labels": {"namespace": "llm"}}
                ],
            }
        ],
    }
    workdir = tmp_path / "prom"
    workdir.mkdir()
    server = PrometheusProcess(workdir, config).start()
    try:
        yield server, rules
    finally:
        server.stop()
        exposition.stop()


def _query(server: PrometheusProcess, expr: str) -> list[dict[str, Any]]:
    url = f"{server.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    return list(body["data"]["result"])


def _value(server: PrometheusProcess, expr: str) -> float | None:
    result = _query(server, expr)
    return float(result[0]["value"][1]) if len(result) == 1 and "value" in result[0] else None


def _wait(server: PrometheusProcess, expr: str) -> float:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = _value(server, expr)
        if value is not None:
            return value
        time.sleep(0.5)
    raise AssertionError(f"{expr} had no value after {WAIT_S}s:\n{server.log()[-2000:]}")


def _slow_ratio_expr(rules: Path) -> str:
    return next(
        r["expr"]
        for g in yaml.safe_load(rules.read_text())["groups"]
        for r in g["rules"]
        if r.get("record") == "service:model_slow_requests:ratio_rate5m"
    )


def test_nhcb_rules_read_a_converted_classic_exposition(
    prometheus: tuple[PrometheusProcess, Path], tmp_path: Path
) -> None:
    server, rules = prometheus
    # The conversion: one native series with the classic bounds, no _bucket series left.
    native = _query(server, f'{HIST}{{job="lat"}}')
    deadline = time.monotonic() + WAIT_S
    while not native and time.monotonic() < deadline:
        time.sleep(0.5)
        native = _query(server, f'{HIST}{{job="lat"}}')
    assert native and "histogram" in native[0], native
    assert not _query(server, f'{HIST}_bucket{{job="lat"}}')

    # The generated rules, evaluated by Prometheus itself.
    slow = _wait(server, 'service:model_slow_requests:ratio_rate5m{service="lat"}')
    assert slow == pytest.approx(SLOW / (FAST + SLOW), abs=1e-9)
    p50 = _wait(server, 'service:model_latency_seconds:quantile_rate5m{quantile="0.5"}')
    assert 0.25 < p50 <= 0.5
    sli = 'service:slo_sli_error:ratio_rate5m{service="lat",slo="latency"}'
    total = (
        'sum(sum_over_time(service:slo_outcomes:increase1s{service="lat",slo="latency",'
        'events="total"}[1m]))'
    )
    deadline = time.monotonic() + WAIT_S
    while (_value(server, total) or 0) < 5 * (FAST + SLOW) and time.monotonic() < deadline:
        time.sleep(0.5)
    # Every evaluation's increments are whole batches: bad is exactly 20 % of total.
    assert _wait(server, sli) == pytest.approx(SLOW / (FAST + SLOW), abs=1e-9)

    # The input guard of the histogram stays content: the native series is there.
    guard = next(
        r["expr"]
        for g in yaml.safe_load(rules.read_text())["groups"]
        for r in g["rules"]
        if r.get("alert") == "ModelSignalMissing" and r["labels"].get("signal") == "requestDuration"
    )
    assert _query(server, guard) == []

    # The reported fault, as a control: the classic form's rules read nothing here.
    classic = render_to(write_spec(tmp_path / "classic", SPEC, "lat.yaml"), tmp_path / "c")
    assert _query(server, _slow_ratio_expr(classic["rules/lat.rules.yaml"])) == []
    assert _value(server, _slow_ratio_expr(rules)) == pytest.approx(0.2, abs=1e-9)
