"""``obsgen verify`` against a real HTTP server on 127.0.0.1 that echoes every request header
back in its 401, 403 and 500 bodies (as some proxies and gateways do): no credential is
printed — bearer token, basic-auth password, nor the value of an extra ``--header`` whose name
says it is one (``X-Api-Key``, ``X-Auth-Token``); a tenant header stays readable."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.cli import main

TOKEN = "tok-9f8e7d6c5b4a"
PASSWORD = "pw-1a2b3c4d5e6f"
API_KEY = "key-0a1b2c3d4e5f"
AUTH_TOKEN = "auth-7g8h9i0j"


class _Echo(BaseHTTPRequestHandler):
    """Answers every GET with the status in the path's first segment's server setting, the
    request's headers in the body (text for 401, Prometheus' JSON error for 403 and 500)."""

    status = 401

    def do_GET(self) -> None:
        said = "\n".join(f"{name}: {value}" for name, value in self.headers.items())
        if self.status == 401:
            body = f"unauthorized; you sent:\n{said}".encode()
            kind = "text/plain"
        else:
            error = {"status": "error", "errorType": "x", "error": f"refused: {said}"}
            body = json.dumps(error).encode()
            kind = "application/json"
        self.send_response(self.status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(params=[401, 403, 500])
def echo(request: pytest.FixtureRequest) -> Iterator[str]:
    handler = type("Echo", (_Echo,), {"status": request.param})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def spec(tmp_path: Path) -> str:
    data = {
        "apiVersion": "obsgen/v1alpha1",
        "kind": "ModelService",
        "metadata": {"name": "svc", "team": "t"},
        "spec": {
            "server": "vllm",
            "selector": {"namespace": "ns", "job": "svc"},
            "deployment": {"name": "svc", "container": "server"},
        },
    }
    path = tmp_path / "svc.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    (tmp_path / "token").write_text(TOKEN)
    (tmp_path / "password").write_text(PASSWORD)
    return str(path)


@pytest.mark.parametrize(
    "credentials",
    [
        ["--bearer-token-file", "token"],
        ["--basic-auth-user", "admin", "--basic-auth-password-file", "password"],
        [],
    ],
    ids=["bearer", "basic", "url-or-none"],
)
def test_no_credential_is_printed_when_the_server_echoes_the_request(
    echo: str,
    spec: str,
    credentials: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in list(os.environ):
        if name.startswith(("PROMETHEUS_", "ALERTMANAGER_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(Path(spec).parent)
    url = echo if credentials else echo.replace("http://", f"http://admin:{PASSWORD}@")
    headers = [
        *("--header", f"X-Api-Key: {API_KEY}"),
        *("--header", f"X-Auth-Token: {AUTH_TOKEN}"),
        *("--header", "X-Scope-OrgID: tenant-a"),
    ]
    args = ["verify", spec, "--prometheus-url", url, "--timeout", "5", "--deadline", "10"]
    code = main([*args, *credentials, *headers])
    out, err = capsys.readouterr()
    printed = out + err
    assert code != 0
    assert "answered HTTP" in printed  # the server's own words are shown …
    for secret in (TOKEN, PASSWORD, API_KEY, AUTH_TOKEN):
        assert secret not in printed  # … without any credential
    assert "Traceback" not in printed
