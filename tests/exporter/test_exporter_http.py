"""The exporter's HTTP layer against slow, idle, hostile and impatient clients (issue 15, case 8).

Real sockets on 127.0.0.1 (ephemeral ports), the exporter in process over the fake backend,
small timeouts so that nothing waits long; one test runs the CLI as a subprocess at every
``--log-level``.
"""

from __future__ import annotations

import contextlib
import gzip
import http.client
import logging
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nvml_exporter.fake import FakeNvml
from nvml_exporter.httpd import HttpLimits, gzip_acceptable
from nvml_exporter.server import Exporter

TIMEOUT = "X-Prometheus-Scrape-Timeout-Seconds"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def serve(fake: FakeNvml, wait_for) -> Iterator:
    started: list[Exporter] = []

    def start(**limits: float) -> Exporter:
        exporter = Exporter(
            fake,
            host="127.0.0.1",
            port=0,
            init_backoff=(0.01, 0.05),
            http_limits=HttpLimits(**limits),
        )
        exporter.start()
        started.append(exporter)
        wait_for(lambda: exporter.ready, what="NVML init")
        return exporter

    yield start
    fake.release()
    for exporter in started:
        exporter.stop()


def connect(exporter: Exporter) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", exporter.port), timeout=10)
    return sock


def closed_by_server(sock: socket.socket, within_s: float) -> bool:
    """Whether the server closes ``sock`` within ``within_s`` seconds (EOF or reset)."""
    sock.settimeout(within_s)
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def get(exporter: Exporter, path: str, headers: dict[str, str] | None = None, timeout: float = 30):
    conn = http.client.HTTPConnection("127.0.0.1", exporter.port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def reset(sock: socket.socket) -> None:
    """Close with a TCP reset (SO_LINGER 0), as a client that gives up abruptly."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


# --- Accept-Encoding ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "gzipped"),
    [
        (None, False),
        ("", False),
        ("gzip", True),
        ("GZIP", True),
        ("x-gzip", True),
        ("gzip;q=0", False),
        ("gzip; q=0.0", False),
        ("gzip;q=0, identity", False),
        ("gzip;q=0.5", True),
        ("br, gzip;q=0.001", True),
        ("identity;q=1, gzip;q=0.5", False),
        ("gzip;q=0.5, *", False),  # "*" covers identity, at q=1
        ("gzip;q=1, identity;q=0.5", True),
        ("*", True),
        ("*;q=0", False),
        ("*;q=0, identity", False),
        ("deflate, br", False),
        ("gzip;q=abc", False),  # malformed q: element ignored
        ("gzip;q=2", False),
        ("identity;q=0, gzip;q=0", False),  # nothing acceptable: sent plain
        ("gzip, deflate, br", True),  # what Prometheus and browsers send
    ],
)
def test_accept_encoding_q_values(header: str | None, gzipped: bool) -> None:
    assert gzip_acceptable(header) is gzipped


def test_gzip_q_0_is_honoured_by_the_server(serve) -> None:
    exporter = serve()
    status, headers, body = get(exporter, "/metrics", {"Accept-Encoding": "gzip;q=0, identity"})
    assert status == 200
    assert "Content-Encoding" not in headers
    assert b"gpu_device_up" in body
    status, headers, body = get(exporter, "/metrics", {"Accept-Encoding": "identity;q=0.1, gzip"})
    assert headers["Content-Encoding"] == "gzip"
    assert b"gpu_device_up" in gzip.decompress(body)


# --- header, idle and write timeouts ---------------------------------------------------------


def test_half_sent_request_is_closed_after_the_header_timeout(serve) -> None:
    exporter = serve(header_timeout_s=0.3)
    sock = connect(exporter)
    sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # headers never finished
    start = time.monotonic()
    assert closed_by_server(sock, within_s=5)
    assert 0.25 <= time.monotonic() - start < 5
    sock.close()


def test_a_client_dripping_bytes_is_cut_off_at_the_header_timeout(serve) -> None:
    exporter = serve(header_timeout_s=0.5)
    sock = connect(exporter)
    start = time.monotonic()
    sock.settimeout(0.05)
    closed = False
    for byte in b"GET /metrics HTTP/1.1\r\nX-Slow: " + b"a" * 200:  # one byte every 20 ms
        try:
            sock.sendall(bytes([byte]))
            if sock.recv(1) == b"":
                closed = True
                break
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
    assert closed, "a client sending a byte every 20 ms was never cut off"
    assert time.monotonic() - start < 3
    sock.close()


def test_connected_but_silent_client_is_closed_after_the_header_timeout(serve) -> None:
    exporter = serve(header_timeout_s=0.3)
    sock = connect(exporter)
    assert closed_by_server(sock, within_s=5)
    sock.close()


def test_idle_keep_alive_connection_is_closed_after_the_idle_timeout(serve) -> None:
    exporter = serve(idle_timeout_s=0.3, header_timeout_s=5)
    conn = http.client.HTTPConnection("127.0.0.1", exporter.port, timeout=10)
    conn.request("GET", "/healthz")
    assert conn.getresponse().read() == b"ok\n"
    conn.request("GET", "/healthz")  # keep-alive: same connection, well within the timeout
    assert conn.getresponse().status == 200
    assert conn.sock is not None
    assert closed_by_server(conn.sock, within_s=5)
    conn.close()


def test_a_client_that_never_reads_is_dropped_after_the_write_timeout(
    serve, wait_for, caplog: pytest.LogCaptureFixture
) -> None:
    exporter = serve(write_timeout_s=0.3, idle_timeout_s=60)
    assert exporter.http is not None
    caplog.set_level(logging.DEBUG, logger="nvml_exporter.httpd")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", exporter.port))
    wait_for(lambda: exporter.http.open_connections == 1, what="the connection")
    request = b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n"
    with contextlib.suppress(OSError):  # pipelined scrapes, never read: the server's writes stall
        sock.settimeout(5)
        for _ in range(2000):
            sock.sendall(request)
    wait_for(lambda: exporter.http.open_connections == 0, timeout=20, what="the drop")
    assert any("response write timeout" in r.getMessage() for r in caplog.records)
    reset(sock)


# --- connection cap ----------------------------------------------------------------------------


def test_connections_over_the_cap_wait_for_a_slot(serve) -> None:
    exporter = serve(max_connections=3, header_timeout_s=1.0)
    holders = [connect(exporter) for _ in range(3)]
    for sock in holders:
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")  # unfinished: holding a slot
    waiting = connect(exporter)  # accepted by the kernel, not yet served
    waiting.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    waiting.settimeout(0.3)
    with pytest.raises(TimeoutError):
        waiting.recv(1024)  # the three slots are taken
    waiting.settimeout(10)
    assert waiting.recv(1024).startswith(b"HTTP/1.1 200")  # served once the holders time out
    for sock in [*holders, waiting]:
        sock.close()


def test_idle_keep_alive_connections_make_room_for_a_new_client(serve) -> None:
    exporter = serve(max_connections=3, idle_timeout_s=60)
    idle = []
    for _ in range(3):
        conn = http.client.HTTPConnection("127.0.0.1", exporter.port, timeout=10)
        conn.request("GET", "/healthz")
        conn.getresponse().read()
        idle.append(conn)
    start = time.monotonic()
    status, _, _ = get(exporter, "/metrics", timeout=10)
    assert status == 200
    assert time.monotonic() - start < 5  # not after the 60 s idle timeout
    for conn in idle:
        conn.close()


def test_1000_half_sent_requests_do_not_make_1000_threads(serve, wait_for) -> None:
    """Issue 15, case 8: every half-sent request used to hold a thread forever."""
    exporter = serve(header_timeout_s=0.5, max_connections=256)
    threads_before = threading.active_count()
    socks = []
    for _ in range(1000):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", exporter.port))
        socks.append(sock)
    time.sleep(0.2)
    for sock in socks:
        with contextlib.suppress(OSError):  # BlockingIOError: not connected yet
            sock.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    assert threading.active_count() <= threads_before + 2  # no thread per connection
    assert exporter.http is not None
    assert exporter.http.open_connections <= 256
    status, _, body = get(exporter, "/metrics", timeout=30)  # served once slots free up
    assert status == 200 and b"gpu_device_up" in body
    wait_for(lambda: exporter.http.open_connections == 0, timeout=30, what="every slot freed")
    assert threading.active_count() <= threads_before + 2
    for sock in socks:
        sock.close()


def test_liveness_answers_while_every_worker_waits_on_a_hung_call(
    fake: FakeNvml, serve, wait_for
) -> None:
    exporter = serve(workers=2)
    fake.hang("device_memory_info_v2", 0)
    results: list[int] = []
    scrapers = [
        threading.Thread(
            target=lambda: results.append(get(exporter, "/metrics", {TIMEOUT: "3"})[0])
        )
        for _ in range(2)
    ]
    for t in scrapers:
        t.start()
    wait_for(fake.hanging.is_set, what="the collection to hang")
    start = time.monotonic()
    assert get(exporter, "/healthz", timeout=5)[0] == 200
    assert time.monotonic() - start < 1
    for t in scrapers:
        t.join(30)
    assert results == [200, 200]


# --- protocol errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"NONSENSE\r\n\r\n", b"400"),
        (b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n", b"431"),
        (b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi", b"405"),
        (b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", b"404"),
    ],
    ids=["garbage", "huge-header", "post", "unknown-path"],
)
def test_bad_requests_get_a_4xx(serve, request_bytes: bytes, status: bytes) -> None:
    exporter = serve()
    sock = connect(exporter)
    sock.sendall(request_bytes)
    assert sock.recv(1024).split(b" ")[1] == status
    sock.close()


def test_head_gets_headers_without_a_body(serve) -> None:
    exporter = serve()
    conn = http.client.HTTPConnection("127.0.0.1", exporter.port, timeout=10)
    conn.request("HEAD", "/metrics")
    resp = conn.getresponse()
    assert resp.status == 200
    assert int(resp.getheader("Content-Length") or 0) > 0
    assert resp.read() == b""
    conn.close()


# --- clients that hang up early ----------------------------------------------------------------


def test_early_hang_up_is_one_debug_line_and_no_traceback(
    fake: FakeNvml, serve, wait_for, caplog: pytest.LogCaptureFixture, capfd
) -> None:
    exporter = serve()
    fake.hang("device_memory_info_v2", 0)
    caplog.set_level(logging.DEBUG)
    sock = connect(exporter)
    sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + f"{TIMEOUT}: 0.4\r\n\r\n".encode())
    wait_for(fake.hanging.is_set, what="the scrape to wait on NVML")
    reset(sock)  # Prometheus gives up at its scrape timeout
    assert exporter.http is not None
    wait_for(lambda: exporter.http.open_connections == 0, what="the connection to end")
    ended = [r for r in caplog.records if "connection from 127.0.0.1" in r.getMessage()]
    assert len(ended) == 1
    assert ended[0].levelno == logging.DEBUG
    assert all(r.exc_info is None for r in caplog.records)
    assert all(r.levelno < logging.ERROR for r in caplog.records)
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("level", ["debug", "info", "warning", "error"])
def test_early_hang_ups_print_no_traceback_at_any_log_level(level: str) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nvml_exporter",
            "--backend",
            "fake",
            "--listen-address",
            "127.0.0.1:0",
            "--log-level",
            level,
        ],
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stderr is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr or []), daemon=True)
    reader.start()
    try:
        port = _port_of(proc.pid)
        assert port
        for _ in range(30):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            reset(sock)
        for close in (reset, socket.socket.close):  # half-sent, then gone
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            close(sock)
        if level == "debug":  # one debug line for each of the two, whatever the 30 did
            deadline = time.monotonic() + 15
            while "".join(lines).count("ended: ") < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
        status = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        status.request("GET", "/healthz")
        assert status.getresponse().status == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        reader.join(10)
    err = "".join(lines)
    assert proc.returncode == 0
    assert "Traceback" not in err
    assert " ERROR " not in err and " WARNING " not in err
    if level == "debug":
        assert "ConnectionResetError" in err
        assert "closed before finishing its request" in err


def _port_of(pid: int) -> int:
    """The TCP port process ``pid`` listens on (from /proc/net/tcp), waiting up to 15 s."""
    inodes_deadline = time.monotonic() + 15
    while time.monotonic() < inodes_deadline:
        inodes = set()
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                return int(fields[1].split(":")[1], 16)
        time.sleep(0.05)
    return 0
