"""``obsgen verify`` with ``spec.models``, the LoRA pool and KV transfers, against a real
Prometheus 3 (tests/toolchain.py) on 127.0.0.1 scraping, each second, a vLLM 0.13 text
exposition served here: ``vllm:request_success_total`` by ``model_name`` (llama-8b 100 and
the unnamed phi-mini 300 requests a second) and, on job ``full`` only, the LoRA info gauge
and NIXL series of tests/fixtures/per_model (vllm at tag v0.13.0). One row per named model
(the missing one names what the server has), the unwatched share, the pool and transfer rows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from generator import verify, verify_models
from generator.prometheus_api import PrometheusAPI
from generator.verify import Row, Status
from tests.prometheus_process import PrometheusProcess
from tests.test_per_model import FIXTURE, SLOS
from tests.test_server_reality import plan_of, spec_data

WAIT_S = 60.0
RATES = {"llama-8b": 100, "phi-mini": 300}  # requests a second per model
START = time.monotonic()


def _exposition(extra: bool) -> str:
    elapsed = time.monotonic() - START
    lines = ["# TYPE vllm:request_success_total counter"]
    for model, rate in RATES.items():
        lines.append(
            f'vllm:request_success_total{{finished_reason="stop",model_name="{model}"}} '
            f"{round(rate * elapsed * 10)}"  # proportional counters: exact shares
        )
    text = "\n".join(lines) + "\n"
    return text + FIXTURE.read_text(encoding="utf-8") if extra else text


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = _exposition(self.path.startswith("/full")).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusAPI]:
    http = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    target = {"targets": [f"127.0.0.1:{http.server_address[1]}"], "labels": {"namespace": "ns"}}
    config = {
        "global": {"scrape_interval": "1s"},
        "scrape_configs": [
            {"job_name": job, "metrics_path": f"/{job}", "static_configs": [target]}
            for job in ("full", "bare")
        ],
    }
    server = PrometheusProcess(tmp_path_factory.mktemp("prom"), config).start()
    client = PrometheusAPI(server.url, timeout_s=5)
    try:
        deadline = time.monotonic() + WAIT_S
        ready = "count(rate(vllm:request_success_total[1h]) > 0) == 4"
        while time.monotonic() < deadline and not client.query(ready):
            time.sleep(0.5)
        yield client
    finally:
        server.stop()
        http.shutdown()


def _rows(api: PrometheusAPI, job: str, **body: Any) -> list[Row]:
    data = spec_data("vllm", serverVersion="0.13", slos=SLOS, **body)
    data["spec"]["selector"]["job"] = job
    report = verify._Report(plan_of(data), api)
    verify_models.model_rows(report)
    verify_models.adapters_and_transfers(report)
    return report.rows


def test_a_row_per_named_model_and_the_unwatched_share(api: PrometheusAPI) -> None:
    rows = _rows(api, "bare", models={"names": ["llama-8b", "qwen.7b"]})
    by_check = [(r.check, r.status) for r in rows]
    assert by_check == [
        ("model", Status.OK),
        ("model", Status.MISSING),
        ("models", Status.WARNING),
        ("lora pool", Status.WARNING),
    ], rows
    llama, qwen, share, pool = rows
    assert 'model_name="llama-8b"' in llama.subject and llama.detail == "1 series"
    assert "no series of model 'qwen.7b'" in qwen.detail
    assert "the server has model_name phi-mini" in qwen.detail
    assert "spec.models.names" in qwen.detail
    assert share.detail.startswith("unwatched share 75% of the requests over 1h (limit 50%")
    assert "ModelTrafficUnwatched" in share.detail
    assert "ModelLoRAPoolSaturated stays silent" in pool.detail


def test_a_share_within_the_limit_is_ok(api: PrometheusAPI) -> None:
    models = {"names": ["llama-8b"], "maxUnwatchedShare": 0.8}
    share = [r for r in _rows(api, "bare", models=models) if r.check == "models"]
    assert [(r.status, r.detail.split(" (")[0]) for r in share] == [
        (Status.OK, "unwatched share 75% of the requests over 1h")
    ]


def test_pool_and_transfer_series_found(api: PrometheusAPI) -> None:
    rows = _rows(api, "full", models={"names": ["llama-8b", "phi-mini"]}, alerts={"kvTransfer": {}})
    assert [(r.check, r.status) for r in rows] == [
        ("model", Status.OK),
        ("model", Status.OK),
        ("models", Status.OK),
        ("lora pool", Status.OK),
        ("kv transfer", Status.OK),
        ("kv transfer", Status.OK),
    ], rows
    assert rows[2].detail.startswith("unwatched share 0%")
    assert rows[3].detail == "2 series"


def test_transfers_missing_is_a_warning(api: PrometheusAPI) -> None:
    rows = _rows(api, "bare", alerts={"kvTransfer": {}})
    assert [(r.check, r.status) for r in rows] == [("kv transfer", Status.WARNING)] * 2
    assert "NIXL" in rows[0].detail


def test_nothing_without_models_pool_or_transfers(api: PrometheusAPI) -> None:
    assert _rows(api, "full") == []


def test_the_checks_run_in_verify_plan() -> None:
    assert (
        verify_models.model_rows in verify.CHECKS
        and verify_models.adapters_and_transfers in verify.CHECKS
    )
