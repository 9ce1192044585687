"""A real Alertmanager on 127.0.0.1 and a webhook receiver recording what it delivers.

:class:`AlertmanagerServer` runs the ``alertmanager`` on ``PATH`` (the pinned 0.35:
tests/toolchain.py) with a free port, clustering off (``--cluster.listen-address=``), a
temporary data folder and any feature flags (``utf8-strict-mode``). :class:`WebhookRecorder` is
an HTTP server on a free port that stores every JSON body POSTed to it with the path it came
to, so a test can read which receiver got which notification.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests

from generator.promql import Matcher
from tests.e2e.e2e_clock import API_S, START_S
from tests.e2e.e2e_prometheus import free_port


def find_alertmanager() -> str | None:
    """Path of the Alertmanager server binary on ``PATH`` (``alertmanager``; Debian's is
    ``prometheus-alertmanager``), or None."""
    for name in ("alertmanager", "prometheus-alertmanager"):
        found = shutil.which(name)
        if found:
            return found
    return None


class AlertmanagerServer:
    """A running Alertmanager; :meth:`start` then :meth:`stop` (idempotent).

    Args:
        binary: the server binary.
        workdir: a private temporary folder (config, data, log) the caller removes.
    """

    def __init__(self, binary: str, workdir: Path) -> None:
        self.binary = binary
        self.workdir = workdir
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.session = requests.Session()

    @property
    def url(self) -> str:
        """Base URL, ``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        """The server's log so far."""
        path = self.workdir / "alertmanager.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start(self, config_text: str, features: Sequence[str] = ()) -> None:
        """Write ``config_text`` as the configuration and start with the feature flags
        ``features`` (``utf8-strict-mode``); return once ready.

        Raises:
            RuntimeError: the server exited or did not become ready within ``START_S``.
        """
        config = self.workdir / "alertmanager.yml"
        config.write_text(config_text, encoding="utf-8")
        for _attempt in range(3):  # the free port may be taken between probe and bind
            self.port = free_port()
            log = (self.workdir / "alertmanager.log").open("wb")
            self.process = subprocess.Popen(
                [
                    self.binary,
                    f"--config.file={config}",
                    f"--storage.path={self.workdir / 'am-data'}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                    "--cluster.listen-address=",
                    "--log.level=warn",
                    *([f"--enable-feature={','.join(features)}"] if features else []),
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
        raise RuntimeError(f"alertmanager did not become ready:\n{self.log()[-3000:]}")

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

    def post_alerts(self, alerts: Sequence[dict[str, Any]]) -> None:
        """POST ``alerts`` (``{labels, annotations?, startsAt?}``) to ``/api/v2/alerts``."""
        response = self.session.post(f"{self.url}/api/v2/alerts", json=list(alerts), timeout=API_S)
        assert response.status_code == 200, response.text

    def alerts(self, **filters: str) -> list[dict[str, Any]]:
        """``GET /api/v2/alerts`` (all states), optionally filtered by label equality (values
        quoted and escaped: any value reads back as itself)."""
        params = {"filter": [Matcher(k, "=", v).render() for k, v in filters.items()]}
        response = self.session.get(f"{self.url}/api/v2/alerts", params=params, timeout=API_S)
        assert response.status_code == 200, response.text
        result: list[dict[str, Any]] = response.json()
        return result

    def silences(self) -> list[dict[str, Any]]:
        """``GET /api/v2/silences``."""
        response = self.session.get(f"{self.url}/api/v2/silences", timeout=API_S)
        assert response.status_code == 200, response.text
        result: list[dict[str, Any]] = response.json()
        return result


@dataclass(frozen=True)
class Notification:
    """One webhook delivery: the path it was POSTed to, when, and its JSON body."""

    path: str
    received_at: float
    body: dict[str, Any]

    @property
    def receiver(self) -> str:
        """The Alertmanager receiver that sent it."""
        return str(self.body["receiver"])

    @property
    def status(self) -> str:
        """``firing`` or ``resolved`` (of the group)."""
        return str(self.body["status"])

    @property
    def group_labels(self) -> dict[str, str]:
        """The group's labels (the route's ``group_by`` values)."""
        return dict(self.body.get("groupLabels", {}))

    @property
    def alerts(self) -> list[dict[str, Any]]:
        """The alerts of the notification."""
        return list(self.body.get("alerts", []))


class WebhookRecorder:
    """Records every JSON POST; :meth:`start` / :meth:`stop`; :meth:`url` for a path."""

    def __init__(self) -> None:
        self.notifications: list[Notification] = []
        self._lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with recorder._lock:
                    recorder.notifications.append(Notification(self.path, time.time(), body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self._server.server_address[1])

    def url(self, path: str) -> str:
        """``http://127.0.0.1:<port>/<path>``."""
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving; idempotent."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(5)
        self._server.server_close()

    def received(self, service: str | None = None) -> list[Notification]:
        """Notifications so far (of ``service``'s groups when given), in arrival order."""
        with self._lock:
            found = list(self.notifications)
        if service is None:
            return found
        return [n for n in found if n.group_labels.get("service") == service]
