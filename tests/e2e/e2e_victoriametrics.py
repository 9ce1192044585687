"""VictoriaMetrics single-node + vmalert for the end-to-end suite (the pinned 1.151 on ``PATH``:
tests/toolchain.py).

:class:`VictoriaMetricsStack` runs ``victoria-metrics`` scraping the same targets as the
suite's Prometheus, and, once every target is visible to its queries, ``vmalert`` over the same
rule files (reading and writing back to it, restoring from it, notifying a sink: vmalert
refuses alerting rules without ``-notifier.url``). Its flags scale vmalert to the suite's clock
and pin one query instant per evaluation; why each value: docs/scale-out.md, "The end-to-end
suite".
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests
import yaml

from tests.e2e.e2e_clock import (
    API_S,
    EVALUATION_INTERVAL_S,
    FLUSH_INTERVAL_S,
    LATENCY_OFFSET_S,
    SCRAPE_INTERVAL_S,
    SCRAPE_TIMEOUT_S,
    START_S,
    VISIBLE_S,
)
from tests.e2e.e2e_prometheus import ScrapeJob, config, free_port, seconds, wait_for

VM_FLAGS = (f"-search.latencyOffset={seconds(LATENCY_OFFSET_S)}", "-loggerLevel=WARN")
"""Server flags besides addresses and paths: queries near "now" read the data of
``LATENCY_OFFSET_S`` ago, when every scrape up to then is searchable."""
VMALERT_FLAGS = (
    f"-evaluationInterval={seconds(EVALUATION_INTERVAL_S)}",
    f"-remoteWrite.flushInterval={seconds(FLUSH_INTERVAL_S)}",
    f"-rule.evalDelay={seconds(LATENCY_OFFSET_S)}",
    "-loggerLevel=WARN",
)
"""vmalert flags besides addresses and rule files: each evaluation queries one instant,
``-rule.evalDelay`` (default 30 s) before its start, as long as the server's latency offset
(shorter, VictoriaMetrics would shift each query to its own arrival time; longer, every alert
lags more)."""


def find_victoriametrics() -> tuple[str, str] | None:
    """Paths of the ``victoria-metrics`` and ``vmalert`` binaries on PATH (the pinned release
    first: tests/toolchain.py), or None when either is missing."""
    found = []
    for name in ("victoria-metrics", "vmalert"):
        path = shutil.which(name)
        if path is None:
            return None
        found.append(path)
    return found[0], found[1]


class _Sink(BaseHTTPRequestHandler):
    """Accepts vmalert's notifications (``POST /api/v2/alerts``) and drops them."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class VictoriaMetricsStack:
    """A running VictoriaMetrics + vmalert pair; use :meth:`start` then :meth:`stop`
    (idempotent).

    Args:
        binaries: ``(victoria-metrics, vmalert)`` paths, as :func:`find_victoriametrics` gives.
        workdir: a private temporary folder (configs, data, logs) the caller removes.
    """

    name = "victoriametrics"

    def __init__(self, binaries: tuple[str, str], workdir: Path) -> None:
        self.server_binary, self.vmalert_binary = binaries
        self.workdir = workdir
        self.port = 0
        self.vmalert_port = 0
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.sink: ThreadingHTTPServer | None = None
        self.session = requests.Session()
        self._stopping = threading.Lock()
        self.jobs: list[ScrapeJob] = []

    @property
    def url(self) -> str:
        """Base URL of the VictoriaMetrics server (the query API)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def vmalert_url(self) -> str:
        """Base URL of vmalert (alerts and rules API)."""
        return f"http://127.0.0.1:{self.vmalert_port}"

    def log(self) -> str:
        """Both processes' logs so far (for failure messages)."""
        parts = []
        for name in ("victoria-metrics", "vmalert"):
            path = self.workdir / f"{name}.log"
            if path.exists():
                parts.append(f"--- {name}\n{path.read_text(errors='replace')[-3000:]}")
        return "\n".join(parts)

    def _spawn(self, name: str, args: list[str], health_url: str) -> None:
        """Start ``args`` as ``name`` and wait until ``health_url`` answers 200 (``START_S``)."""
        for _attempt in range(3):  # the free port may be taken between probe and bind
            with (self.workdir / f"{name}.log").open("wb") as log:
                process = subprocess.Popen(
                    args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                )
            self.processes[name] = process
            deadline = time.monotonic() + START_S
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    if self.session.get(health_url, timeout=1).status_code == 200:
                        return
                except requests.RequestException:
                    pass
                time.sleep(0.1)
            if process.poll() is None or "address already in use" not in self.log():
                break
        self.stop()
        raise RuntimeError(f"{name} did not become ready:\n{self.log()}")

    def start(self, jobs: Sequence[ScrapeJob], rule_files: Sequence[Path]) -> None:
        """:meth:`start_server` scraping ``jobs`` (none: a bare server), then, when there are
        ``rule_files``, :meth:`wait_targets_up` and :meth:`start_vmalert` over them.

        Raises:
            RuntimeError: a process exited or did not become ready within ``START_S``.
            AssertionError: a target not visible within ``VISIBLE_S``.
        """
        self.start_server(jobs)
        if rule_files:
            self.wait_targets_up()
            self.start_vmalert(rule_files)

    def start_server(self, jobs: Sequence[ScrapeJob]) -> None:
        """Start VictoriaMetrics scraping ``jobs`` at the suite's clock; return once it
        answers ``/health``.

        Raises:
            RuntimeError: it exited or did not become ready within ``START_S``.
        """
        self.jobs = list(jobs)
        scrape_flags = []
        if jobs:
            scrape = {k: v for k, v in config(jobs, ()).items() if k != "rule_files"}
            scrape["global"] = {
                "scrape_interval": seconds(SCRAPE_INTERVAL_S),
                "scrape_timeout": seconds(SCRAPE_TIMEOUT_S),
            }
            scrape_path = self.workdir / "vm-scrape.yml"
            scrape_path.write_text(yaml.safe_dump(scrape), encoding="utf-8")
            scrape_flags.append(f"-promscrape.config={scrape_path}")
        self.port = free_port()
        self._spawn(
            "victoria-metrics",
            [
                self.server_binary,
                f"-httpListenAddr=127.0.0.1:{self.port}",
                f"-storageDataPath={self.workdir / 'vm-data'}",
                *scrape_flags,
                *VM_FLAGS,
            ],
            f"{self.url}/health",
        )

    def wait_targets_up(self, stop: Callable[[], bool] = lambda: False) -> None:
        """Wait until a query of "now" (the data of the latency offset ago, as vmalert reads
        it) sees every target up.

        Raises:
            AssertionError: some target not visible within ``VISIBLE_S``.
        """
        wanted = {job.name for job in self.jobs}
        wait_for(
            f"every target of {self.name} up",
            lambda: {r["metric"]["job"] for r in self.query("up == 1")},
            lambda up: up >= wanted,
            VISIBLE_S,
            stop,
        )

    def start_vmalert(self, rule_files: Sequence[Path]) -> None:
        """Start the sink and vmalert over ``rule_files``; return once it answers
        ``/health``.

        Raises:
            RuntimeError: it exited or did not become ready within ``START_S``.
        """
        self.sink = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
        threading.Thread(target=self.sink.serve_forever, daemon=True).start()
        self.vmalert_port = free_port()
        self._spawn(
            "vmalert",
            [
                self.vmalert_binary,
                f"-httpListenAddr=127.0.0.1:{self.vmalert_port}",
                *(f"-rule={path}" for path in rule_files),
                f"-datasource.url={self.url}",
                f"-remoteWrite.url={self.url}",
                f"-remoteRead.url={self.url}",
                f"-notifier.url=http://127.0.0.1:{self.sink.server_port}",
                *VMALERT_FLAGS,
            ],
            f"{self.vmalert_url}/health",
        )

    def stop(self) -> None:
        """Terminate vmalert, then the server (SIGTERM, SIGKILL after 10 s), then the sink;
        idempotent and safe to call from two threads."""
        with self._stopping:
            self._stop()

    def _stop(self) -> None:
        for name in ("vmalert", "victoria-metrics"):
            process = self.processes.pop(name, None)
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10)
        if self.sink is not None:
            self.sink.shutdown()
            self.sink.server_close()
            self.sink = None
        self.session.close()

    # -- HTTP API ----------------------------------------------------------------------------

    def _get(self, url: str, **params: str) -> Any:
        body = self.session.get(url, params=params, timeout=API_S).json()
        assert body.get("status") == "success", f"{url} {params}: {body}"
        return body["data"]

    def api(self, path: str, **params: str) -> Any:
        """GET VictoriaMetrics' ``/api/v1/<path>`` and return ``data``.

        Raises:
            AssertionError: the API answered with an error.
        """
        return self._get(f"{self.url}/api/v1/{path}", **params)

    def query(self, expr: str) -> list[dict[str, Any]]:
        """Instant query; returns the result vector (empty list for no data)."""
        data = self.api("query", query=expr)
        result = data["result"]
        return result if data["resultType"] in ("vector", "matrix") else [result]

    def alerts(self, service: str) -> list[dict[str, Any]]:
        """Pending and firing alerts of ``service`` (by its ``service`` label), from vmalert."""
        alerts = self._get(f"{self.vmalert_url}/api/v1/alerts")["alerts"] or []  # null: none
        return [a for a in alerts if a["labels"].get("service") == service]

    def alert_states(self, service: str) -> dict[str, set[str]]:
        """``{alertname: {state, …}}`` of ``service``'s active alerts."""
        states: dict[str, set[str]] = {}
        for alert in self.alerts(service):
            states.setdefault(alert["labels"]["alertname"], set()).add(alert["state"])
        return states
