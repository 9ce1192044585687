"""Helpers shared by the bench scripts: markdown tables, the command line, a local Prometheus.

Nothing here is a test. Prometheus always listens on 127.0.0.1 at an ephemeral port and keeps
its data in a directory the caller owns (normally a temp dir).
"""

from __future__ import annotations

import json
import os
import platform
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

REPO = Path(__file__).resolve().parents[1]


def export_paths(revision: str, into: Path, *paths: str) -> Path:
    """``paths`` (folders of the repository) as of git ``revision``, exported under ``into``
    (created); returns ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    archive = into / "export.tar"
    subprocess.run(
        ["git", "archive", "--format=tar", "-o", str(archive), revision, *paths],
        cwd=REPO,
        check=True,
    )
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into


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


class ServerProcess:
    """A server process on 127.0.0.1:<ephemeral port>, ready once ``ready_path`` answers.

    Subclasses give :attr:`name`, :attr:`ready_path` and :meth:`args`. Use as a context
    manager; the process is terminated (then killed) on exit.
    """

    name = ""
    ready_path = "/health"

    def __init__(self, log: Path) -> None:
        self.log_path = log
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:41234``."""
        return f"http://127.0.0.1:{self.port}"

    def args(self) -> list[str]:
        """The command line, with ``self.port`` already chosen."""
        raise NotImplementedError

    def start(self, ready_timeout: float = 180) -> None:
        """Start the process and wait until :attr:`ready_path` answers (a Prometheus start
        replays its blocks and WAL first).

        Raises:
            RuntimeError: the binary is missing, or the process exits early or is not ready in
                time (with the log's tail).
        """
        for _attempt in range(3):  # the free port may be taken between probe and bind
            self.port = free_port()
            with self.log_path.open("ab") as log:
                self.proc = subprocess.Popen(
                    self.args(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                )
            deadline = time.monotonic() + ready_timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    http_get(f"{self.url}{self.ready_path}", timeout=2)
                    return
                except (urllib.error.URLError, OSError):
                    time.sleep(0.3)
            self.stop()
        tail = self.log_path.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"{self.name} did not become ready; log tail:\n{tail}")

    def stop(self) -> None:
        """Terminate the process (SIGTERM, then SIGKILL after 60 s): a TSDB closes cleanly."""
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

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Prometheus(ServerProcess):
    """A real ``prometheus`` process over ``data_dir``. ``config`` is the path of its
    configuration file, which the caller may rewrite and apply with :meth:`reload`.
    ``binary``: the server to run (None: ``prometheus`` on ``PATH``).
    """

    name = "prometheus"
    ready_path = "/-/ready"

    def __init__(
        self,
        config: Path,
        data_dir: Path,
        log: Path,
        retention: str = "3650d",
        binary: str | None = None,
    ):
        super().__init__(log)
        self.config = config
        self.data_dir = data_dir
        self.retention = retention
        self.binary = binary

    def args(self) -> list[str]:
        """The command line (raises ``RuntimeError`` when prometheus is not installed)."""
        binary = self.binary or shutil.which("prometheus")
        if binary is None:
            raise RuntimeError("prometheus not found on PATH (run `make prometheus`)")
        return [
            binary,
            f"--config.file={self.config}",
            f"--storage.tsdb.path={self.data_dir}",
            f"--storage.tsdb.retention.time={self.retention}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--web.enable-lifecycle",
            "--log.level=warn",
        ]

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


# A fixed promtool workload (20 recording rules over 4 series, 241 evaluations): its CPU time
# says how fast this machine runs promtool, whatever obsgen's own files are at the time.
_REFERENCE_RULES = "groups:\n- name: reference\n  rules:\n" + "".join(
    f'  - record: ref:x{i}:rate5m\n    expr: sum by (a) (rate(x{{b=~"[0-9]+"}}[5m])) * {i}\n'
    for i in range(20)
)
_REFERENCE_TEST = (
    "rule_files: [reference.rules.yaml]\nevaluation_interval: 1m\ntests:\n- interval: 1m\n"
    "  input_series:\n"
    + "".join(
        f'  - series: \'x{{a="{i % 2}",b="{i}"}}\'\n    values: 0+{i + 1}x240\n' for i in range(4)
    )
    + "  promql_expr_test:\n  - expr: ref:x1:rate5m\n    eval_time: 4h\n    exp_samples:\n"
    "    - labels: 'ref:x1:rate5m{a=\"0\"}'\n      value: 0.06666666666666667\n"
    "    - labels: 'ref:x1:rate5m{a=\"1\"}'\n      value: 0.1\n"
)


def machine_speed() -> str:
    """How fast this machine is, in CPU seconds of two fixed workloads (best of 3): a Python
    loop of 10^7 additions, and ``promtool test rules`` of a fixed 20-rule file over 241
    steps. Figures measured on different machines compare after scaling by these."""

    def loop() -> float:
        start = time.process_time()
        total = 0
        for i in range(10_000_000):
            total += i
        return time.process_time() - start

    python = min(loop() for _ in range(3))
    promtool = shutil.which("promtool")
    if promtool is None:
        return f"Python loop {python:.2f} s CPU; no promtool"
    best = float("inf")
    with tempfile.TemporaryDirectory(prefix="obsgen-bench-speed-") as tmp:
        folder = Path(tmp)
        (folder / "reference.rules.yaml").write_text(_REFERENCE_RULES)
        (folder / "reference.test.yaml").write_text(_REFERENCE_TEST)
        for _ in range(3):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(
                [promtool, "test", "rules", "reference.test.yaml"],
                cwd=folder,
                check=True,
                capture_output=True,
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            best = min(best, used)
    return f"Python loop of 10^7 additions {python:.2f} s CPU; promtool reference test {best:.2f} s CPU"
