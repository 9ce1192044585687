"""VictoriaMetrics single-node + vmalert for the end-to-end suite (Debian's ``victoria-metrics``).

:class:`VictoriaMetricsStack` runs, on 127.0.0.1 with free ports and a temporary data folder:

* ``victoria-metrics`` scraping the same targets as the suite's Prometheus (its own
  ``-promscrape.config``, 1 s interval), so both engines see the same faults at the same time;
* ``vmalert`` evaluating the same rule files every second, reading from VictoriaMetrics
  (``-datasource.url``) and writing recording-rule results and the ``ALERTS`` series back to it
  (``-remoteWrite.url``), restoring alert state from it (``-remoteRead.url``);
* a notification sink: vmalert refuses to start with alerting rules and no ``-notifier.url``.

The evaluation and remote-write intervals are scaled to the suite's one-second world, as the
Prometheus config is: ``-evaluationInterval=1s`` and ``-remoteWrite.flushInterval=1s`` (default
5 s: a recorded series reaches the next rule that reads it only after the flush).
``-search.latencyOffset`` keeps the invariant the production defaults keep (30 s against a 5 s
flush): it must exceed the time from a rule's evaluation until every sample it recorded is
searchable, so that a query sees the records of one evaluation all or not at all. vmalert
remote-writes each record, timestamped at the start of its group's evaluation, when its rule
has run (up to one evaluation interval), then after up to one ``-remoteWrite.flushInterval``;
VictoriaMetrics 1.79 makes ingested rows searchable on a 1 s ticker (up to
:data:`INGESTION_LAG_S`). With a shorter offset a rule can read the newest
``events="total"`` sample of ``service:slo_outcomes:increase1s`` without its twin. While obsgen
recorded good events, that unpaired total was a large bad share while the windows held few
samples, and a healthy service paged (it did, with the 1 s offset this suite once used); with
bad events recorded an unpaired total lowers the ratio and an unpaired bad one is 0 when healthy. :data:`LATENCY_OFFSET_S` = 1 s +
1 s + 3 s + 1 s of margin. Measured here (12 healthy services for 60 s, VictoriaMetrics'
export API polled every 50 ms): records were searchable 0.4–1.5 s after their timestamp at a
load average of 1–3 and at most 3.3 s at 9 (2 cores); a recorded SLO error ratio above 0
whose good and total records all paired up — a read of one without the other — occurred 77
and 6 times in two runs with a 1 s offset, never in four with 5 s or 6 s (a fifth, at a load
average of 8, had records that differed already: see below). The price: every
query near "now", vmalert's included, reads the data of :data:`LATENCY_OFFSET_S` ago, so each
alert is that much later than on Prometheus, and so is each level of recording rules under it
(``e2e_scenarios.LATE_S``).

What no offset pins: VictoriaMetrics shifts each query to *its own* arrival time minus the
offset, so two rules of one evaluation can read scrapes one apart when a scrape lands between
their queries (the good and total increments, recorded by two rules until they became one,
differed so for 0–3 of 12 services a minute here, more under load). vmalert's
``-datasource.lookback`` would pin one query instant per evaluation, but vmalert 1.79 stamps
each record with that earlier instant too (measured: records 7 s behind the clock with a 6 s
lookback), which removes the offset's margin and brings the unpaired reads back; it is not
used. docs/scale-out.md gives the production values and what both effects cost.

The query side (:meth:`query`) is VictoriaMetrics' Prometheus-compatible API; the alert side
(:meth:`alerts`) is vmalert's ``/api/v1/alerts``, which has Prometheus's shape.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests
import yaml

from tests.e2e.e2e_prometheus import SCRAPE_INTERVAL_S, ScrapeJob, config, free_port

EVALUATION_INTERVAL_S = 1
"""vmalert's ``-evaluationInterval``, seconds (the rule files' groups say 1s too)."""
FLUSH_INTERVAL_S = 1
"""vmalert's ``-remoteWrite.flushInterval``, seconds."""
INGESTION_LAG_S = 3
"""Seconds until VictoriaMetrics 1.79 makes a written row searchable, at most: rows are made
searchable on a 1 s ticker once they are more than a second old."""
LATENCY_OFFSET_S = EVALUATION_INTERVAL_S + FLUSH_INTERVAL_S + INGESTION_LAG_S + 1
"""VictoriaMetrics' ``-search.latencyOffset``, seconds: longer than a record takes from its
evaluation to being searchable (rule run, flush, ingestion), with 1 s of margin (see the module
docstring)."""
VM_FLAGS = (f"-search.latencyOffset={LATENCY_OFFSET_S}s", "-loggerLevel=WARN")
"""Server flags besides addresses and paths (see the module docstring)."""
VMALERT_FLAGS = (
    f"-evaluationInterval={EVALUATION_INTERVAL_S}s",
    f"-remoteWrite.flushInterval={FLUSH_INTERVAL_S}s",
    "-loggerLevel=WARN",
)
"""vmalert flags besides addresses and rule files (see the module docstring)."""


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
        """Start ``args`` as ``name`` and wait until ``health_url`` answers 200 (30 s)."""
        for _attempt in range(3):  # the free port may be taken between probe and bind
            with (self.workdir / f"{name}.log").open("wb") as log:
                process = subprocess.Popen(
                    args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                )
            self.processes[name] = process
            deadline = time.monotonic() + 30
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
        """Start VictoriaMetrics scraping ``jobs`` (none: a bare server), then, when there are
        ``rule_files``, the sink and vmalert over them; return once each answers ``/health``.

        Raises:
            RuntimeError: a process exited or did not become ready within 30 s.
        """
        scrape_flags = []
        if jobs:
            scrape = {k: v for k, v in config(jobs, ()).items() if k != "rule_files"}
            interval = f"{SCRAPE_INTERVAL_S}s"
            scrape["global"] = {"scrape_interval": interval, "scrape_timeout": interval}
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
        if not rule_files:
            return
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
        body = self.session.get(url, params=params, timeout=5).json()
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
