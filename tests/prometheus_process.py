"""A real Prometheus 3 (tests/toolchain.py) on 127.0.0.1 with a configuration of the test's own:
scrape configs with any option (``scrape_protocols``, ``tls_config``…) and an optional web
configuration (``--web.config.file``: TLS, client certificates, basic auth).

Readiness is read from the server's log ("Server is ready to receive web requests."), so a
server that refuses anonymous or plain-HTTP requests is waited for the same way.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests import toolchain

READY_LINE = "Server is ready to receive web requests."
START_TIMEOUT_S = 60.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrometheusProcess:
    """A running ``prometheus`` 3 process; :meth:`start`, then :meth:`stop` (idempotent).

    Args:
        workdir: a private folder (config, TSDB, log) the caller removes.
        config: the ``prometheus.yml`` document, or a function of the port the server
            will listen on (to scrape itself) that gives it.
        web_config: the ``--web.config.file`` document, or None for plain HTTP.
    """

    def __init__(
        self,
        workdir: Path,
        config: dict[str, Any] | Callable[[int], dict[str, Any]],
        web_config: dict[str, Any] | None = None,
    ) -> None:
        self.workdir = workdir
        self.config = config
        self.web_config = web_config
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Base URL: ``https://127.0.0.1:<port>`` with a TLS web config, else ``http://…``."""
        tls = bool(self.web_config and self.web_config.get("tls_server_config"))
        return f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"

    def log(self) -> str:
        path = self.workdir / "prometheus.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start(self) -> PrometheusProcess:
        """Write the configuration, start the server and return once its log says ready.

        Raises:
            RuntimeError: it exited, or was not ready within :data:`START_TIMEOUT_S`.
        """
        config_path = self.workdir / "prometheus.yml"
        flags = []
        if self.web_config is not None:
            web_path = self.workdir / "web.yml"
            web_path.write_text(yaml.safe_dump(self.web_config), encoding="utf-8")
            flags.append(f"--web.config.file={web_path}")
        for _attempt in range(3):  # the free port may be taken between probe and bind
            self.port = free_port()
            config = self.config(self.port) if callable(self.config) else self.config
            config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
            with (self.workdir / "prometheus.log").open("wb") as log:
                self.process = subprocess.Popen(
                    [
                        toolchain.binary("prometheus3"),
                        f"--config.file={config_path}",
                        f"--storage.tsdb.path={self.workdir / 'tsdb'}",
                        f"--web.listen-address=127.0.0.1:{self.port}",
                        *flags,
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )
            deadline = time.monotonic() + START_TIMEOUT_S
            while time.monotonic() < deadline and self.process.poll() is None:
                if READY_LINE in self.log():
                    return self
                time.sleep(0.05)
            if self.process.poll() is None or "address already in use" not in self.log():
                break
        self.stop()
        raise RuntimeError(f"prometheus did not become ready:\n{self.log()[-3000:]}")

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
