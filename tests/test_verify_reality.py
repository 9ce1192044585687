"""``obsgen verify`` reports the mismatches of issue 13 against a real Prometheus: a renamed
metric (the other name present), a missing variant's request counter, a histogram whose ``le``
bounds are in another unit than the spec assumes.

One Prometheus (1 s scrapes) scrapes static expositions on 127.0.0.1: vLLM 0.11 and vLLM 0.8
V0-engine ones from ``tests/fixtures/metrics``, and two millisecond histograms written here.
"""

from __future__ import annotations

import contextlib
import copy
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from generator.plan import resolve
from generator.prometheus_api import PrometheusAPI
from generator.spec import parse_spec
from generator.verify import Row, Status, verify_plan
from tests.e2e.e2e_prometheus import PrometheusServer, ScrapeJob, find_prometheus, wait_for

pytestmark = pytest.mark.e2e

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "metrics"
LE_MS = (1, 100, 250, 1000, 2500, 5000, 10000)


def _exposition(*histograms: str) -> str:
    """Histograms with millisecond bounds (Go client spelling) and a request counter."""
    lines = []
    for name in histograms:
        lines += [f"# HELP {name} Request duration in milliseconds.", f"# TYPE {name} histogram"]
        for le in (*LE_MS, "+Inf"):
            count = 0 if le == 1 else 600
            lines.append(f'{name}_bucket{{response_code="200",le="{le}"}} {count}')
        lines.append(f'{name}_sum{{response_code="200"}} 120000')
        lines.append(f'{name}_count{{response_code="200"}} 600')
    lines += [
        "# TYPE istio_requests_total counter",
        'istio_requests_total{response_code="200"} 600',
    ]
    return "\n".join(lines) + "\n"


EXPOSITIONS = {
    "vllm-011": (FIXTURES / "vllm-0.11.prom").read_text(encoding="utf-8"),
    "vllm-v0": (FIXTURES / "vllm-0.8-v0.prom").read_text(encoding="utf-8"),
    "istio": _exposition("istio_request_duration_milliseconds"),
    "gateway": _exposition("gateway_request_latency", "gateway_request_latency_seconds"),
}


class _Exposition(BaseHTTPRequestHandler):
    text = ""

    def do_GET(self) -> None:
        body = self.text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def prometheus() -> Iterator[str]:
    """Base URL of a Prometheus that has scraped every exposition (job = its key)."""
    binary = find_prometheus()
    if binary is None:
        pytest.fail("prometheus binary not found (/usr/bin/prometheus or PATH); run `make test`")
    with contextlib.ExitStack() as stack:
        jobs = []
        for job, text in EXPOSITIONS.items():
            handler = type(f"Handler_{job}", (_Exposition,), {"text": text})
            server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
            stack.callback(server.server_close)
            stack.callback(server.shutdown)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            jobs.append(ScrapeJob(job, server.server_address[1], {"namespace": "ns"}))
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="obsgen-verify-")))
        server = PrometheusServer(binary, workdir)
        stack.callback(server.stop)
        server.start(jobs, [])
        wait_for(
            "every exposition scraped",
            lambda: server.query('count(up{namespace="ns"} == 1)'),
            lambda r: bool(r) and int(float(r[0]["value"][1])) == len(EXPOSITIONS),
            timeout_s=60,
        )
        yield server.url


def _spec(server: str, job: str, **body: Any) -> dict[str, Any]:
    return {
        "apiVersion": "obsgen/v1alpha1",
        "kind": "ModelService",
        "metadata": {"name": "svc", "team": "t"},
        "spec": {
            "server": server,
            "selector": {"namespace": "ns", "job": job},
            "deployment": {"name": "svc", "container": "server", "memoryLimit": "32Gi"},
            **body,
        },
    }


def _rows(url: str, data: dict[str, Any], check: str, subject: str) -> list[Row]:
    plan = resolve(parse_spec(copy.deepcopy(data), "svc.yaml"), "svc.yaml")
    rows = verify_plan(plan, PrometheusAPI(url, timeout_s=5))
    return [r for r in rows if r.check == check and r.subject.startswith(subject)]


def test_a_spec_older_than_the_pods_is_told_the_metric_was_renamed(prometheus: str) -> None:
    data = _spec("vllm", "vllm-011", serverVersion="0.9.1")
    (row,) = _rows(prometheus, data, "series", "vllm:gpu_cache_usage_perc{")
    assert row.status is Status.WARNING
    assert "the server exposes vllm:kv_cache_usage_perc" in row.detail
    assert "the rules read both" in row.detail


def test_a_spec_naming_the_old_metric_is_told_the_new_name(prometheus: str) -> None:
    data = _spec(
        "vllm",
        "vllm-011",
        serverVersion="0.11",
        metrics={"kvCacheUsage": {"name": "vllm:gpu_cache_usage_perc"}},
    )
    (row,) = _rows(prometheus, data, "series", "vllm:gpu_cache_usage_perc{")
    assert row.status is Status.MISSING
    assert "the server exposes vllm:kv_cache_usage_perc" in row.detail
    assert "the rules read only the spec's name" in row.detail


def test_a_matching_release_reads_the_current_names(prometheus: str) -> None:
    data = _spec("vllm", "vllm-011", serverVersion="0.11.0")
    rows = [
        *_rows(prometheus, data, "series", "vllm:kv_cache_usage_perc{"),
        *_rows(prometheus, data, "series", "http_requests_total{"),  # and its status label
    ]
    assert [r.status for r in rows] == [Status.OK] * 3, rows


def test_v0_pods_under_a_v1_spec_are_told_the_variant(prometheus: str) -> None:
    data = _spec("vllm", "vllm-v0", serverVersion="0.8.5")
    (row,) = _rows(prometheus, data, "series", "http_requests_total{")
    assert row.status is Status.MISSING
    assert "but vllm:request_success_total is there" in row.detail
    assert "spec.serverVariant" in row.detail


def test_v0_pods_under_a_v0_spec_pass(prometheus: str) -> None:
    data = _spec("vllm", "vllm-v0", serverVersion="0.8.5", serverVariant="v0")
    rows = _rows(prometheus, data, "series", "vllm:request_success_total{")
    assert [r.status for r in rows] == [Status.OK] * 2, rows  # the counter, its reason label
    units = _rows(prometheus, data, "unit", "vllm:")
    # e2e, ttft, itl and queue histograms
    assert {u.status for u in units} == {Status.OK} and len(units) == 4


def _duration(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "requestDuration": {
            "name": name,
            "buckets": [0.001, 0.1, 0.25, 1, 2.5, 5, 10],
            **extra,
        },
        "requests": {"name": "istio_requests_total", "errorMatchers": {"response_code": "5.."}},
    }


def test_a_milliseconds_name_is_read_in_milliseconds(prometheus: str) -> None:
    data = _spec("openai-http", "istio", metrics=_duration("istio_request_duration_milliseconds"))
    (unit,) = _rows(prometheus, data, "unit", "istio_request_duration_milliseconds_bucket")
    (buckets,) = _rows(prometheus, data, "buckets", "istio_request_duration_milliseconds_bucket")
    assert (unit.status, buckets.status) == (Status.OK, Status.OK), (unit, buckets)
    assert "le bounds in milliseconds: median bound 1000 = 1s" in unit.detail


def test_millisecond_bounds_under_no_unit_are_a_unit_mismatch(prometheus: str) -> None:
    # No unit in the name and none declared: seconds assumed, 1000 s median bound.
    data = _spec(
        "openai-http",
        "gateway",
        metrics=_duration(
            "gateway_request_latency", buckets=[1, 100, 250, 1000, 2500, 5000, 10000]
        ),
    )
    (unit,) = _rows(prometheus, data, "unit", "gateway_request_latency_bucket")
    assert unit.status is Status.WRONG
    assert "le bounds do not look like seconds: the median bound 1000 would be 1000s" in unit.detail
    assert "set spec.metrics.requestDuration.unit: milliseconds" in unit.detail


def test_millisecond_bounds_on_a_seconds_name_are_a_unit_mismatch(prometheus: str) -> None:
    data = _spec(
        "openai-http",
        "gateway",
        metrics=_duration(
            "gateway_request_latency_seconds", buckets=[1, 100, 250, 1000, 2500, 5000, 10000]
        ),
    )
    (unit,) = _rows(prometheus, data, "unit", "gateway_request_latency_seconds_bucket")
    assert unit.status is Status.WRONG


def test_declaring_the_unit_fixes_the_mismatch(prometheus: str) -> None:
    data = _spec(
        "openai-http",
        "gateway",
        metrics=_duration("gateway_request_latency", unit="milliseconds"),
    )
    (unit,) = _rows(prometheus, data, "unit", "gateway_request_latency_bucket")
    (buckets,) = _rows(prometheus, data, "buckets", "gateway_request_latency_bucket")
    assert (unit.status, buckets.status) == (Status.OK, Status.OK)
