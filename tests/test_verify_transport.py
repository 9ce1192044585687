"""``obsgen verify`` against hostile servers (issue 15, case 7): one overall deadline, a
response-size cap, no control characters echoed, a clear error for any unexpected JSON.

The servers are real HTTP servers on 127.0.0.1 (ephemeral ports) that drip bytes, send huge
bodies, odd JSON shapes and terminal escape sequences.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from generator.cli import main

REPO = Path(__file__).resolve().parent.parent
SPEC = str(REPO / "specs" / "o1-preview.yaml")

Route = Callable[[BaseHTTPRequestHandler, threading.Event], None]


def _json(body: Any, status: int = 200) -> Route:
    def send(handler: BaseHTTPRequestHandler, _: threading.Event) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    return send


def _vector(*samples: Any) -> Route:
    return _json({"status": "success", "data": {"resultType": "vector", "result": list(samples)}})


HEALTHY: dict[str, Route] = {
    "/api/v1/status/buildinfo": _json({"status": "success", "data": {"version": "2.42.0"}}),
    "/api/v1/targets": _json({"status": "success", "data": {"activeTargets": []}}),
    "/api/v1/query": _vector(),
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    routes: dict[str, Route]
    stopping: threading.Event


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        route = self.server.routes.get(self.path.split("?")[0])
        if route is None:
            self.send_error(404)
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            route(self, self.server.stopping)  # a client that gives up, as it should

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[Callable[[dict[str, Route]], str]]:
    """Start a server with routes over :data:`HEALTHY`; returns its base URL."""
    started: list[_Server] = []

    def start(routes: dict[str, Route]) -> str:
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.routes = {**HEALTHY, **routes}
        httpd.stopping = threading.Event()
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        started.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    yield start
    for httpd in started:
        httpd.stopping.set()
        httpd.shutdown()
        httpd.server_close()


def _verify(url: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, float]:
    capsys.readouterr()
    started = time.monotonic()
    code = main(["verify", SPEC, "--prometheus-url", url, *extra])
    elapsed = time.monotonic() - started
    captured = capsys.readouterr()
    return code, captured.out + captured.err, elapsed


def _drip_body(handler: BaseHTTPRequestHandler, stopping: threading.Event) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.end_headers()
    handler.wfile.write(b'{"status": "success", "data": ')
    while not stopping.wait(0.05):
        handler.wfile.write(b" ")
        handler.wfile.flush()


def _drip_headers(handler: BaseHTTPRequestHandler, stopping: threading.Event) -> None:
    handler.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
    while not stopping.wait(0.05):
        handler.wfile.write(b"a")
        handler.wfile.flush()


@pytest.mark.parametrize("drip", [_drip_body, _drip_headers], ids=["body", "headers"])
def test_a_server_that_drips_bytes_is_cut_off_at_the_timeout(
    server: Callable[[dict[str, Route]], str], capsys: pytest.CaptureFixture[str], drip: Route
) -> None:
    url = server({"/api/v1/status/buildinfo": drip})
    code, out, elapsed = _verify(url, capsys, "--timeout", "1")
    assert code == 2, out
    assert f"no complete answer within 1s from {url}/api/v1/status/buildinfo" in out
    assert elapsed < 6, elapsed  # not 60 s of dripping (the rest: loading the spec)
    assert "Traceback" not in out


def test_one_deadline_bounds_the_whole_run(
    server: Callable[[dict[str, Route]], str], capsys: pytest.CaptureFixture[str]
) -> None:
    def slow(handler: BaseHTTPRequestHandler, stopping: threading.Event) -> None:
        stopping.wait(0.4)  # each answer is within --timeout, but there are many
        HEALTHY["/api/v1/query"](handler, stopping)

    url = server({"/api/v1/query": slow})
    code, out, elapsed = _verify(url, capsys, "--timeout", "5", "--deadline", "1.5")
    assert code == 2, out
    assert "the run's deadline of 1.5s passed" in out
    assert elapsed < 6, elapsed


def test_a_huge_body_is_refused_without_reading_it(
    server: Callable[[dict[str, Route]], str], capsys: pytest.CaptureFixture[str]
) -> None:
    def declared(handler: BaseHTTPRequestHandler, stopping: threading.Event) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(300 << 20))
        handler.end_headers()
        handler.wfile.write(b"{" * 1024)
        stopping.wait(5)

    def streamed(handler: BaseHTTPRequestHandler, stopping: threading.Event) -> None:
        handler.send_response(200)
        handler.end_headers()  # no length: read until the connection closes
        chunk = b'{"status": "success", "data": [' + b"1," * (1 << 16)
        for _ in range(300 << 20 >> 17):  # 300 MB if nobody stops reading
            if stopping.is_set():
                return
            handler.wfile.write(chunk)

    for route in (declared, streamed):
        url = server({"/api/v1/query": route})
        code, out, elapsed = _verify(url, capsys, "--max-response-bytes", "1000000")
        assert code == 2, out
        assert "answered with more than 1000000 bytes" in out
        assert elapsed < 5


ESCAPE = "\x1b[2J\x1b[31mowned\x07"


@pytest.mark.parametrize(
    ("routes", "expected"),
    [
        pytest.param(
            {"/api/v1/query": _json({"status": "error", "error": ESCAPE}, status=400)},
            "answered HTTP 400: \\x1b[2J\\x1b[31mowned\\x07",
            id="an error message with escape sequences",
        ),
        pytest.param(
            {"/api/v1/query": _vector({"metric": {"le": ESCAPE}, "value": [0, "1"]})},
            "\\x1b[2J\\x1b[31mowned\\x07",
            id="a label value with escape sequences",
        ),
        pytest.param(
            {"/api/v1/status/buildinfo": _json({"status": "success", "data": {"version": ESCAPE}})},
            "Prometheus \\x1b[2J\\x1b[31mowned\\x07 at",
            id="a version with escape sequences",
        ),
    ],
)
def test_control_characters_from_the_server_are_escaped(
    server: Callable[[dict[str, Route]], str],
    capsys: pytest.CaptureFixture[str],
    routes: dict[str, Route],
    expected: str,
) -> None:
    code, out, _ = _verify(server(routes), capsys)
    assert code in (1, 2), out
    assert expected in out
    assert "\x1b" not in out and "\x07" not in out


@pytest.mark.parametrize(
    ("routes", "expected"),
    [
        pytest.param(
            {"/api/v1/query": _vector(1, 2)},
            "data.result[0]: expected a sample object (got 1)",
            id="samples that are numbers",
        ),
        pytest.param(
            {"/api/v1/query": _json({"status": "success", "data": {"result": {"a": 1}}})},
            "data.result: expected a list of samples (got {'a': 1})",
            id="a result that is a mapping",
        ),
        pytest.param(
            {"/api/v1/query": _vector({"metric": {}, "value": ["x"]})},
            "data.result[0].value: expected [time, \"<finite number>\"] (got ['x'])",
            id="a value without a timestamp",
        ),
        pytest.param(
            {"/api/v1/query": _vector({"metric": {}, "value": [0, "NaN"]})},
            'data.result[0].value: expected [time, "<finite number>"]',
            id="a NaN count",
        ),
        pytest.param(
            {"/api/v1/query": _vector({"metric": {"le": 5}, "value": [0, "1"]})},
            "data.result[0].metric: expected a map of label texts (got {'le': 5})",
            id="a label value that is a number",
        ),
        pytest.param(
            {"/api/v1/query": _json({"status": "success", "data": 7})},
            "data.result: expected a list of samples (got None)",
            id="data that is a number",
        ),
        pytest.param(
            {"/api/v1/targets": _json({"status": "success", "data": {"activeTargets": [1]}})},
            "data.activeTargets[0]: expected a target object (got 1)",
            id="a target that is a number",
        ),
        pytest.param(
            {
                "/api/v1/targets": _json(
                    {"status": "success", "data": {"activeTargets": [{"labels": ["job"]}]}}
                )
            },
            "data.activeTargets[0].labels: expected a map of label texts (got ['job'])",
            id="target labels that are a list",
        ),
        pytest.param(
            {"/api/v1/query": _json([1, 2, 3])},
            "answered HTTP 200: [1, 2, 3]",
            id="a body that is a list",
        ),
    ],
)
def test_unexpected_json_is_a_clear_error(
    server: Callable[[dict[str, Route]], str],
    capsys: pytest.CaptureFixture[str],
    routes: dict[str, Route],
    expected: str,
) -> None:
    code, out, _ = _verify(server(routes), capsys)
    assert code == 2, out
    assert expected in out, out
    assert "Traceback" not in out and "internal error" not in out


def test_deeply_nested_json_is_a_clear_error(
    server: Callable[[dict[str, Route]], str], capsys: pytest.CaptureFixture[str]
) -> None:
    def deep(handler: BaseHTTPRequestHandler, _: threading.Event) -> None:
        body = b"[" * 200_000 + b"]" * 200_000
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    code, out, _ = _verify(server({"/api/v1/query": deep}), capsys)
    assert code == 2, out
    assert "answered HTTP 200 without Prometheus API JSON" in out
