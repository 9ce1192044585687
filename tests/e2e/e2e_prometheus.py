"""A real Prometheus server for the end-to-end suite, and bounded polling of its HTTP API.

:class:`PrometheusServer` runs the ``prometheus`` on ``PATH`` (the pinned Prometheus 3:
tests/toolchain.py) on 127.0.0.1 with a free port, a temporary TSDB, the clock of
``e2e_clock`` (scrape, timeout, evaluation, ``rule_query_offset``) and the rule files it is
given, at start or once its targets are up (:meth:`PrometheusServer.load_rules`).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import requests
import yaml

from tests.e2e.e2e_clock import (
    API_S,
    EVALUATION_INTERVAL_S,
    POLL_S,
    RULE_QUERY_OFFSET_S,
    SCRAPE_INTERVAL_S,
    SCRAPE_TIMEOUT_S,
    START_S,
    TARGETS_UP_S,
)

T = TypeVar("T")


def find_prometheus() -> str | None:
    """Path of the ``prometheus`` binary on PATH (the pinned Prometheus 3 first: tests/toolchain.py),
    or None."""
    return shutil.which("prometheus")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ScrapeJob:
    """One static scrape job: ``job_name`` becomes the ``job`` label; ``labels`` are target
    labels (``namespace``, ``pod``, ``container``, as Kubernetes discovery would add)."""

    name: str
    port: int
    labels: Mapping[str, str] = field(default_factory=dict)
    honor_labels: bool = False


def seconds(value: float) -> str:
    """A Prometheus duration of ``value`` seconds, in whole milliseconds (``1500ms``)."""
    return f"{round(value * 1000)}ms"


def config(
    jobs: Sequence[ScrapeJob], rule_files: Sequence[Path], alertmanager: str | None = None
) -> dict[str, Any]:
    """The ``prometheus.yml`` document: the suite's clock (``e2e_clock``), one job per target,
    alerts sent to the Alertmanager at ``alertmanager`` (``host:port``) when given."""
    alerting = (
        {"alerting": {"alertmanagers": [{"static_configs": [{"targets": [alertmanager]}]}]}}
        if alertmanager
        else {}
    )
    return {
        "global": {
            "scrape_interval": seconds(SCRAPE_INTERVAL_S),
            "scrape_timeout": seconds(SCRAPE_TIMEOUT_S),
            "evaluation_interval": seconds(EVALUATION_INTERVAL_S),
            "rule_query_offset": seconds(RULE_QUERY_OFFSET_S),
        },
        **alerting,
        "rule_files": [str(p) for p in rule_files],
        "scrape_configs": [
            {
                "job_name": job.name,
                "honor_labels": job.honor_labels,
                "static_configs": [
                    {"targets": [f"127.0.0.1:{job.port}"], "labels": dict(job.labels)}
                ],
            }
            for job in jobs
        ],
    }


class PrometheusServer:
    """A running ``prometheus`` process; use :meth:`start` then :meth:`stop` (idempotent).

    Args:
        binary: path of the ``prometheus`` binary.
        workdir: a private temporary folder (config, TSDB, log) the caller removes.
    """

    name = "prometheus"

    def __init__(self, binary: str, workdir: Path) -> None:
        self.binary = binary
        self.workdir = workdir
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.session = requests.Session()
        self.jobs: list[ScrapeJob] = []
        self.alertmanager: str | None = None

    @property
    def url(self) -> str:
        """Base URL, ``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        """The server's log so far (for failure messages)."""
        path = self.workdir / "prometheus.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start(
        self,
        jobs: Sequence[ScrapeJob],
        rule_files: Sequence[Path],
        alertmanager: str | None = None,
        flags: Sequence[str] = (),
    ) -> None:
        """Write the config and start the server; return once it is ready. Alerts go to the
        Alertmanager at ``alertmanager`` (``host:port``) when given; ``flags`` are more
        command-line flags (``--storage.tsdb.retention.time=10d``).

        Raises:
            RuntimeError: the server exited or did not become ready within ``START_S``.
        """
        self.jobs, self.alertmanager = list(jobs), alertmanager
        self._write_config(rule_files)
        for _attempt in range(3):  # the free port may be taken between probe and bind
            self.port = free_port()
            log = (self.workdir / "prometheus.log").open("wb")
            self.process = subprocess.Popen(
                [
                    self.binary,
                    f"--config.file={self.workdir / 'prometheus.yml'}",
                    f"--storage.tsdb.path={self.workdir / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                    "--web.enable-lifecycle",
                    "--log.level=warn",
                    *flags,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            log.close()
            deadline = time.monotonic() + START_S
            while time.monotonic() < deadline and self.process.poll() is None:
                try:
                    if self.session.get(f"{self.url}/-/ready", timeout=1).status_code == 200:
                        return
                except requests.RequestException:
                    pass
                time.sleep(0.1)
            if self.process.poll() is None:
                break
            if "address already in use" not in self.log():
                break
        self.stop()
        raise RuntimeError(f"prometheus did not become ready:\n{self.log()[-3000:]}")

    def _write_config(self, rule_files: Sequence[Path]) -> None:
        (self.workdir / "prometheus.yml").write_text(
            yaml.safe_dump(config(self.jobs, rule_files, self.alertmanager)), encoding="utf-8"
        )

    def wait_targets_up(self, stop: Callable[[], bool] = lambda: False) -> None:
        """Wait until every target has been scraped and answered (``up == 1``).

        Raises:
            AssertionError: some target not up within ``TARGETS_UP_S``.
        """
        wanted = {job.name for job in self.jobs}
        wait_for(
            f"every target of {self.name} up",
            lambda: {r["metric"]["job"] for r in self.query("up == 1")},
            lambda up: up >= wanted,
            TARGETS_UP_S,
            stop,
        )

    def load_rules(self, rule_files: Sequence[Path]) -> None:
        """Evaluate ``rule_files`` from now on (the config rewritten, then reloaded); return
        once every group of theirs is loaded.

        Raises:
            AssertionError: the reload failed, or a group is not listed within
                ``TARGETS_UP_S``.
        """
        self._write_config(rule_files)
        reloaded = self.session.post(f"{self.url}/-/reload", timeout=START_S)
        assert reloaded.status_code == 200, f"reload: {reloaded.text}\n{self.log()[-3000:]}"
        groups = {
            g["name"]
            for path in rule_files
            for g in yaml.safe_load(path.read_text(encoding="utf-8"))["groups"]
        }
        wait_for(
            "every rule group loaded",
            lambda: {g["name"] for g in self.api("rules")["groups"]},
            lambda loaded: loaded >= groups,
            TARGETS_UP_S,
        )

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 10 s); idempotent."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None
        self.session.close()

    # -- HTTP API ----------------------------------------------------------------------------

    def api(self, path: str, **params: str) -> Any:
        """GET ``/api/v1/<path>`` and return ``data``.

        Raises:
            AssertionError: the API answered with an error.
        """
        response = self.session.get(f"{self.url}/api/v1/{path}", params=params, timeout=API_S)
        body = response.json()
        assert body.get("status") == "success", f"{path} {params}: {body}"
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """Instant query; returns the result vector (empty list for no data)."""
        data = self.api("query", query=expr)
        result = data["result"]
        return result if data["resultType"] in ("vector", "matrix") else [result]

    def alerts(self, service: str) -> list[dict[str, Any]]:
        """Pending and firing alerts of ``service`` (by its ``service`` label)."""
        return [a for a in self.api("alerts")["alerts"] if a["labels"].get("service") == service]

    def alert_states(self, service: str) -> dict[str, set[str]]:
        """``{alertname: {state, …}}`` of ``service``'s active alerts."""
        states: dict[str, set[str]] = {}
        for alert in self.alerts(service):
            states.setdefault(alert["labels"]["alertname"], set()).add(alert["state"])
        return states


def wait_for(
    what: str,
    probe: Callable[[], T],
    done: Callable[[T], bool],
    timeout_s: float,
    stop: Callable[[], bool] = lambda: False,
) -> T:
    """Poll ``probe`` every :data:`POLL_S` s until ``done(result)``; return that result.

    Raises:
        AssertionError: not done within ``timeout_s`` seconds (or ``stop()`` became true);
            the message names ``what`` and the last result seen.
    """
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while True:
        last = probe()
        if done(last):
            return last
        if time.monotonic() > deadline or stop():
            raise AssertionError(
                f"timed out after {timeout_s:.0f}s waiting for {what}; last: {last}"
            )
        time.sleep(POLL_S)


def hold(
    what: str,
    probe: Callable[[], T],
    ok: Callable[[T], bool],
    seconds: float,
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """Poll ``probe`` every :data:`POLL_S` s for ``seconds`` (or until ``stop()``); each
    result must be ``ok``.

    Raises:
        AssertionError: at the first result that is not; the message names ``what`` and it.
    """
    deadline = time.monotonic() + seconds
    while True:
        last = probe()
        if not ok(last):
            raise AssertionError(f"{what} did not hold: {last}")
        if time.monotonic() > deadline or stop():
            return
        time.sleep(POLL_S)
