"""VictoriaMetrics single-node + vmalert for the bench scripts (Debian's ``victoria-metrics``).

:class:`VictoriaMetrics` runs the server on 127.0.0.1:<ephemeral port> over a data folder the
caller owns, imports a Prometheus TSDB folder with ``vmctl prometheus`` (the documented
migration path), and answers instant queries. :class:`VMAlert` runs ``vmalert`` over rule files,
reading from and writing recording results back to that server, and reports each group's
evaluation time from its own ``vmalert_iteration_duration_seconds`` summary. Both are context
managers that terminate their process on exit. Nothing here is a test.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _common import ServerProcess, http_get


def binary(name: str) -> str:
    """Path of ``name`` (``victoria-metrics``, ``vmalert``, ``vmctl``).

    Raises:
        RuntimeError: not installed (the message says how to install it).
    """
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} not found on PATH (run `make victoriametrics`)")
    return found


class VictoriaMetrics(ServerProcess):
    """The single-node server over ``data_dir``, scraping per ``scrape_config`` (a Prometheus
    ``scrape_configs`` file) when given. Its flags are the defaults but for the retention (10
    years, so imported history is kept)."""

    name = "victoria-metrics"

    def __init__(self, data_dir: Path, log: Path, scrape_config: Path | None = None) -> None:
        super().__init__(log)
        self.data_dir = data_dir
        self.scrape_config = scrape_config

    def args(self) -> list[str]:
        """Command line."""
        args = [
            binary("victoria-metrics"),
            f"-httpListenAddr=127.0.0.1:{self.port}",
            f"-storageDataPath={self.data_dir}",
            "-retentionPeriod=10y",
            "-loggerLevel=WARN",
        ]
        if self.scrape_config is not None:
            args.append(f"-promscrape.config={self.scrape_config}")
        return args

    def import_prometheus(self, tsdb: Path) -> None:
        """Import every block of the Prometheus TSDB folder ``tsdb`` (``vmctl prometheus``),
        then drop the query caches so queries see the imported history.

        Raises:
            RuntimeError: vmctl failed (with its output).
        """
        # vmctl 1.79 fails when its output is not a terminal (its progress bar pool), whatever
        # --vm-disable-progress-bar says; a pseudo-terminal stands in for one.
        code, output = _run_on_terminal(
            [
                binary("vmctl"),
                "prometheus",
                "-s",
                f"--prom-snapshot={tsdb}",
                f"--vm-addr={self.url}",
                "--vm-disable-progress-bar",
            ]
        )
        if code != 0:
            raise RuntimeError(f"vmctl prometheus failed:\n{output}")
        http_get(f"{self.url}/internal/force_flush")
        http_get(f"{self.url}/internal/resetRollupResultCache")

    def api(self, path: str, **params: str) -> Any:
        """GET ``/api/v1/<path>`` and return its ``data``; raises ``RuntimeError`` on errors."""
        query = urllib.parse.urlencode(params)
        body = json.loads(http_get(f"{self.url}/api/v1/{path}?{query}", timeout=120))
        if body.get("status") != "success":
            raise RuntimeError(f"{path}: {body}")
        return body["data"]


def _run_on_terminal(args: list[str]) -> tuple[int, str]:
    """Run ``args`` on a pseudo-terminal (stdin, stdout, stderr); return exit code and output."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(args, stdin=follower, stdout=follower, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return proc.wait(), b"".join(chunks).decode(errors="replace")


class _Sink(BaseHTTPRequestHandler):
    """Accepts vmalert's notifications and drops them (vmalert needs a notifier)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


_ITERATION = re.compile(
    r'^vmalert_iteration_duration_seconds_(sum|count)\{group="([^"]*)", ?file="([^"]*)"\} (\S+)$',
    re.M,
)


class VMAlert(ServerProcess):
    """``vmalert`` evaluating ``rule_files`` every ``interval_s`` against ``server`` (datasource,
    remote write and remote read), its notifications dropped by a local sink."""

    name = "vmalert"

    def __init__(
        self, server: VictoriaMetrics, rule_files: Sequence[Path], interval_s: int, log: Path
    ) -> None:
        super().__init__(log)
        self.server = server
        self.rule_files = list(rule_files)
        self.interval_s = interval_s
        self.sink = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
        threading.Thread(target=self.sink.serve_forever, daemon=True).start()

    def args(self) -> list[str]:
        """Command line."""
        return [
            binary("vmalert"),
            f"-httpListenAddr=127.0.0.1:{self.port}",
            *(f"-rule={path}" for path in self.rule_files),
            f"-datasource.url={self.server.url}",
            f"-remoteWrite.url={self.server.url}",
            f"-remoteRead.url={self.server.url}",
            f"-notifier.url=http://127.0.0.1:{self.sink.server_port}",
            f"-evaluationInterval={self.interval_s}s",
            "-loggerLevel=WARN",
        ]

    def stop(self) -> None:
        """Terminate vmalert, then the sink."""
        super().stop()
        self.sink.shutdown()
        self.sink.server_close()

    def iterations(self) -> dict[str, tuple[float, float]]:
        """Per group, ``(sum of seconds, count)`` of its evaluations so far."""
        found: dict[str, list[float]] = {}
        for kind, group, _file, value in _ITERATION.findall(
            http_get(f"{self.url}/metrics").decode()
        ):
            pair = found.setdefault(group, [0.0, 0.0])
            pair[0 if kind == "sum" else 1] = float(value)
        return {g: (s, c) for g, (s, c) in found.items()}

    def collect_durations(self, samples: int, timeout_s: float) -> dict[str, list[float]]:
        """Per group, the seconds of each evaluation seen (the first, cold one dropped).

        Polls ``/metrics`` every second: when a group's count grew by exactly one since the
        last poll, the growth of its sum is that evaluation's time (a poll that missed an
        evaluation is skipped). Stops when every group has ``samples`` values or after
        ``timeout_s``.
        """
        last = self.iterations()
        seen: dict[str, list[float]] = {g: [] for g in last}
        start = time.monotonic()
        while time.monotonic() - start < timeout_s:
            time.sleep(1)
            now = self.iterations()
            for group, (total, count) in now.items():
                before = last.get(group, (0.0, 0.0))
                if count == before[1] + 1:
                    seen.setdefault(group, []).append(total - before[0])
            last = now
            if seen and all(len(v) > samples for v in seen.values()):
                break
        return {g: v[1:] for g, v in seen.items()}

    def alerts(self) -> list[dict[str, Any]]:
        """Active (pending and firing) alerts."""
        body = json.loads(http_get(f"{self.url}/api/v1/alerts"))
        return list(body["data"]["alerts"] or [])
