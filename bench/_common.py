"""Helpers shared by the bench scripts: markdown tables, the command line, a local Prometheus.

Nothing here is a test. Prometheus always listens on 127.0.0.1 at an ephemeral port and keeps
its data in a directory the caller owns (normally a temp dir).
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub markdown table; cells are ``str()``-ed, ``|`` escaped."""

    def cell(value: object) -> str:
        return str(value).replace("|", "\\|")

    lines = [
        "| " + " | ".join(map(cell, headers)) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows]
    return "\n".join(lines)


def command_line() -> str:
    """The command that is running, as a user would type it from the repository root."""
    script = Path(sys.argv[0]).resolve()
    try:
        shown = script.relative_to(REPO).as_posix()
    except ValueError:
        shown = str(script)
    return shlex.join([".venv/bin/python", shown, *sys.argv[1:]])


def machine() -> str:
    """One line describing this machine: CPU count, memory (GiB), OS, Python."""
    mem_gib = 0.0
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    mem_gib = int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPUs, {mem_gib:.0f} GiB RAM, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}"
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def http_get(url: str, timeout: float = 30) -> bytes:
    """GET ``url`` and return the body; raises ``urllib.error.URLError`` on failure."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        body: bytes = response.read()
        return body


class Prometheus:
    """A real ``prometheus`` process on 127.0.0.1:<ephemeral port> over ``data_dir``.

    Use as a context manager; the process is terminated (then killed) on exit. ``config`` is the
    path of its configuration file, which the caller may rewrite and apply with :meth:`reload`.
    """

    def __init__(self, config: Path, data_dir: Path, log: Path, retention: str = "3650d"):
        self.config = config
        self.data_dir = data_dir
        self.log_path = log
        self.retention = retention
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:41234``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, ready_timeout: float = 180) -> None:
        """Start the server and wait until ``/-/ready`` answers (startup replays blocks/WAL).

        Raises:
            RuntimeError: prometheus is not installed, exits early, or is not ready in time.
        """
        binary = shutil.which("prometheus")
        if binary is None:
            raise RuntimeError("prometheus not found on PATH (run `make prometheus`)")
        for _attempt in range(3):
            self.port = free_port()
            log = self.log_path.open("ab")
            self.proc = subprocess.Popen(
                [
                    binary,
                    f"--config.file={self.config}",
                    f"--storage.tsdb.path={self.data_dir}",
                    f"--storage.tsdb.retention.time={self.retention}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                    "--web.enable-lifecycle",
                    "--log.level=warn",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            log.close()
            deadline = time.monotonic() + ready_timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    http_get(f"{self.url}/-/ready", timeout=2)
                    return
                except (urllib.error.URLError, OSError):
                    time.sleep(0.3)
            self.stop()
        tail = self.log_path.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"prometheus did not become ready; log tail:\n{tail}")

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 60 s); the TSDB is closed cleanly."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def reload(self) -> None:
        """Apply a rewritten configuration (``POST /-/reload``)."""
        request = urllib.request.Request(f"{self.url}/-/reload", method="POST")
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()

    def api(self, path: str, **params: str) -> Any:
        """GET ``/api/v1/<path>`` and return its ``data``; raises ``RuntimeError`` on errors."""
        query = urllib.parse.urlencode(params)
        body = json.loads(http_get(f"{self.url}/api/v1/{path}?{query}", timeout=120))
        if body.get("status") != "success":
            raise RuntimeError(f"{path}: {body}")
        return body["data"]

    def metrics_text(self) -> str:
        """Prometheus's own ``/metrics`` page."""
        return http_get(f"{self.url}/metrics").decode()

    def __enter__(self) -> Prometheus:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
