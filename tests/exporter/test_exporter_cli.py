"""``nvml-exporter`` command line: flags, environment, and the process under SIGTERM."""

from __future__ import annotations

import argparse
import ctypes.util
import http.client
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from nvml_exporter.__main__ import ENVIRONMENT, build_parser, parse_listen_address
from nvml_exporter.server import DEFAULT_PORT

ENVIRONMENT_NAMES = [
    variable.removeprefix("NVML_EXPORTER_") for variable, _ in ENVIRONMENT.values()
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(":9445", ("", 9445), id="all-interfaces"),
        pytest.param("127.0.0.1:0", ("127.0.0.1", 0), id="ipv4-ephemeral"),
        pytest.param("[::1]:9445", ("::1", 9445), id="ipv6-bracketed"),
        pytest.param("localhost:8080", ("localhost", 8080), id="hostname"),
    ],
)
def test_listen_address_is_parsed(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen_address(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("9445", id="no-colon"),
        pytest.param("host:", id="no-port"),
        pytest.param("host:70000", id="port-out-of-range"),
        pytest.param("::1:9445", id="ipv6-without-brackets"),
        pytest.param("host:http", id="port-name"),
    ],
)
def test_bad_listen_address_is_rejected(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected|IPv6"):
        parse_listen_address(text)


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENVIRONMENT_NAMES:
        monkeypatch.delenv(f"NVML_EXPORTER_{var}", raising=False)
    args = build_parser().parse_args([])
    assert args.listen_address == ("", DEFAULT_PORT)
    assert DEFAULT_PORT not in (9400, 9835)  # dcgm-exporter, nvidia_gpu_exporter
    assert args.gpu_uuids == ()
    assert args.log_level == "info"
    assert args.backend == "nvml"
    assert (args.header_timeout, args.idle_timeout, args.max_connections) == (10.0, 120.0, 512)


def test_http_limits_from_flags_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVML_EXPORTER_HEADER_TIMEOUT", "2.5")
    monkeypatch.setenv("NVML_EXPORTER_MAX_CONNECTIONS", "64")
    args = build_parser().parse_args(["--idle-timeout", "30"])
    assert (args.header_timeout, args.idle_timeout, args.max_connections) == (2.5, 30.0, 64)


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--header-timeout", "0"),
        ("--header-timeout", "-1"),
        ("--idle-timeout", "inf"),
        ("--idle-timeout", "soon"),
        ("--max-connections", "0"),
        ("--max-connections", "1.5"),
    ],
)
def test_bad_http_limits_are_rejected(flag: str, value: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([flag, value])
    assert exit_info.value.code == 2


def test_environment_sets_defaults_and_flags_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVML_EXPORTER_LISTEN_ADDRESS", "127.0.0.1:9999")
    monkeypatch.setenv("NVML_EXPORTER_GPU_UUIDS", "GPU-a, GPU-b,,")
    monkeypatch.setenv("NVML_EXPORTER_LOG_LEVEL", "DEBUG")
    args = build_parser().parse_args([])
    assert args.listen_address == ("127.0.0.1", 9999)
    assert args.gpu_uuids == ("GPU-a", "GPU-b")
    assert args.log_level == "debug"
    args = build_parser().parse_args(["--listen-address", ":1234", "--gpu-uuids", "GPU-c"])
    assert args.listen_address == ("", 1234)
    assert args.gpu_uuids == ("GPU-c",)


def _clear_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENVIRONMENT_NAMES:
        monkeypatch.delenv(f"NVML_EXPORTER_{var}", raising=False)


BAD_VALUES = [
    pytest.param("--log-level", "NVML_EXPORTER_LOG_LEVEL", "loud", id="unknown log level"),
    pytest.param("--backend", "NVML_EXPORTER_BACKEND", "gpu", id="unknown backend"),
    pytest.param("--backend", "NVML_EXPORTER_BACKEND", "FAKE", id="backend in upper case"),
    pytest.param("--listen-address", "NVML_EXPORTER_LISTEN_ADDRESS", "9445", id="port only"),
    pytest.param(
        "--listen-address", "NVML_EXPORTER_LISTEN_ADDRESS", "h:70000", id="port out of range"
    ),
]


@pytest.mark.parametrize(("flag", "variable", "value"), BAD_VALUES)
def test_a_bad_environment_value_is_rejected_like_its_flag(
    flag: str,
    variable: str,
    value: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _clear_environment(monkeypatch)
    with pytest.raises(SystemExit) as by_flag:
        build_parser().parse_args([flag, value])
    capsys.readouterr()
    monkeypatch.setenv(variable, value)
    with pytest.raises(SystemExit) as by_env:
        build_parser().parse_args([])
    err = capsys.readouterr().err
    assert (by_flag.value.code, by_env.value.code) == (2, 2)
    assert f"nvml-exporter: error: environment variable {variable}={value!r}: " in err
    assert err.startswith("usage: nvml-exporter")


@pytest.mark.parametrize(
    ("flag", "variable", "value", "dest", "expected"),
    [
        pytest.param(
            "--log-level",
            "NVML_EXPORTER_LOG_LEVEL",
            "WARNING",
            "log_level",
            "warning",
            id="log level in upper case",
        ),
        pytest.param(
            "--backend", "NVML_EXPORTER_BACKEND", "fake", "backend", "fake", id="fake backend"
        ),
    ],
)
def test_a_good_value_means_the_same_as_flag_and_as_environment(
    flag: str,
    variable: str,
    value: str,
    dest: str,
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _clear_environment(monkeypatch)
    assert getattr(build_parser().parse_args([flag, value]), dest) == expected
    monkeypatch.setenv(variable, value)
    assert getattr(build_parser().parse_args([]), dest) == expected


def test_an_unused_environment_value_is_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear_environment(monkeypatch)
    monkeypatch.setenv("NVML_EXPORTER_BACKEND", "gpu")
    assert build_parser().parse_args(["--backend", "fake"]).backend == "fake"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        pytest.param("NVML_EXPORTER_LOG_LEVEL", "loud", id="unknown log level"),
        pytest.param("NVML_EXPORTER_BACKEND", "gpu", id="unknown backend"),
    ],
)
def test_the_process_exits_2_without_a_traceback_on_a_bad_environment_value(
    variable: str, value: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NVML_EXPORTER_")}
    env[variable] = value
    done = subprocess.run(
        [sys.executable, "-m", "nvml_exporter", "--listen-address", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"environment variable {variable}={value!r}: invalid choice" in done.stderr


class Process:
    """The exporter as a subprocess; its stderr is read by a thread into ``lines``."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nvml_exporter", "--listen-address", "127.0.0.1:0", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def port(self) -> int | None:
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)/metrics", self.log)
        return int(match.group(1)) if match else None

    def get(self, path: str) -> tuple[int, str]:
        port = self.port()
        assert port is not None
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            return resp.status, resp.read().decode()
        finally:
            conn.close()

    def finish(self) -> int:
        """SIGTERM, then wait; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        finally:
            self._reader.join(5)


@pytest.fixture
def run() -> Iterator:
    procs: list[Process] = []

    def start(*args: str) -> Process:
        proc = Process(*args)
        procs.append(proc)
        return proc

    yield start
    for p in procs:
        if p.proc.poll() is None:
            p.proc.kill()
            p.proc.wait(10)


def test_sigterm_shuts_nvml_down_and_exits_0(run, wait_for) -> None:
    proc = run("--backend", "fake")
    wait_for(lambda: proc.port() or proc.proc.poll() is not None, what="the listen line")
    assert proc.port(), proc.log
    wait_for(lambda: proc.get("/readyz")[0] == 200, what="/readyz 200")
    status, body = proc.get("/metrics")
    assert status == 200
    assert "gpu_exporter_nvml_up 1.0" in body
    assert proc.finish() == 0, proc.log
    assert "received SIGTERM" in proc.log
    assert "NVML shut down" in proc.log
    assert "Traceback" not in proc.log


@pytest.mark.skipif(
    ctypes.util.find_library("nvidia-ml") is not None, reason="this machine has an NVIDIA driver"
)
def test_real_backend_without_a_gpu_serves_nvml_up_0(run, wait_for) -> None:
    proc = run("--backend", "nvml")
    wait_for(lambda: proc.port() or proc.proc.poll() is not None, what="the listen line")
    assert proc.port(), proc.log
    status, body = proc.get("/metrics")
    assert status == 200
    assert "gpu_exporter_nvml_up 0.0" in body
    assert proc.get("/readyz")[0] == 503
    assert proc.get("/healthz")[0] == 200
    assert proc.finish() == 0, proc.log
    assert "NVML shut down" not in proc.log  # never initialised, nothing to shut down


def test_port_in_use_exits_1(run, wait_for) -> None:
    first = run("--backend", "fake")
    wait_for(lambda: first.port() or first.proc.poll() is not None, what="the listen line")
    port = first.port()
    assert port, first.log
    second = subprocess.run(
        [sys.executable, "-m", "nvml_exporter", "--listen-address", f"127.0.0.1:{port}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert second.returncode == 1
    assert "cannot listen" in second.stderr
