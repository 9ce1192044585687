"""``nvml-exporter``: command line, logging and signal handling.

More: docs/exporter.md, "Command line".
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType
from typing import Any

from nvml_exporter.httpd import HttpLimits
from nvml_exporter.nvml import NvmlBackend, PynvmlBackend
from nvml_exporter.server import DEFAULT_PORT, Exporter

log = logging.getLogger("nvml_exporter")

LOG_LEVELS = ("debug", "info", "warning", "error")


def parse_listen_address(value: str) -> tuple[str, int]:
    """Split ``[host]:port`` into ``(host, port)``.

    Accepts ``:9445`` (all IPv4 interfaces), ``127.0.0.1:9445``, ``[::]:9445`` and
    ``[::1]:0`` (port 0 picks a free port).

    Raises:
        argparse.ArgumentTypeError: the value is not ``[host]:port`` with a port 0-65535.
    """
    host, sep, port_text = value.rpartition(":")
    if not sep or not port_text.isdigit() or int(port_text) > 65535:
        raise argparse.ArgumentTypeError(f"{value!r}: expected [host]:port, e.g. ':{DEFAULT_PORT}'")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise argparse.ArgumentTypeError(f"{value!r}: write IPv6 addresses as [addr]:port")
    return host, int(port_text)


def parse_gpu_uuids(value: str) -> tuple[str, ...]:
    """Split a comma-separated UUID list, dropping blanks: ``"GPU-a, GPU-b"`` -> two UUIDs."""
    return tuple(part.strip() for part in value.split(",") if part.strip())


def parse_seconds(value: str) -> float:
    """A positive, finite number of seconds: ``"10"`` -> 10.0, ``"0.5"`` -> 0.5.

    Raises:
        argparse.ArgumentTypeError: not a number, or not > 0, or infinite.
    """
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: expected seconds, e.g. 10") from None
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r}: expected seconds > 0, e.g. 10")
    return seconds


def parse_connections(value: str) -> int:
    """A connection count from 1 to 100000: ``"512"`` -> 512.

    Raises:
        argparse.ArgumentTypeError: not an integer in that range.
    """
    if not value.strip().isdigit() or not 1 <= int(value) <= 100_000:
        raise argparse.ArgumentTypeError(f"{value!r}: expected a whole number 1-100000")
    return int(value)


def parse_log_level(value: str) -> str:
    """Lower-case a log level name: ``"DEBUG"`` -> ``"debug"`` (choices are checked after)."""
    return value.strip().lower()


# Flag destination -> (environment variable, built-in default as it would be typed).
ENVIRONMENT: dict[str, tuple[str, str]] = {
    "listen_address": ("NVML_EXPORTER_LISTEN_ADDRESS", f":{DEFAULT_PORT}"),
    "gpu_uuids": ("NVML_EXPORTER_GPU_UUIDS", ""),
    "log_level": ("NVML_EXPORTER_LOG_LEVEL", "info"),
    "backend": ("NVML_EXPORTER_BACKEND", "nvml"),
    "header_timeout": ("NVML_EXPORTER_HEADER_TIMEOUT", str(HttpLimits.header_timeout_s)),
    "idle_timeout": ("NVML_EXPORTER_IDLE_TIMEOUT", str(HttpLimits.idle_timeout_s)),
    "max_connections": ("NVML_EXPORTER_MAX_CONNECTIONS", str(HttpLimits.max_connections)),
}


class _EnvironmentParser(argparse.ArgumentParser):
    """An argument parser that fills flags not given from ``NVML_EXPORTER_*`` variables.

    Each value (from the environment, else the built-in default) goes through the flag's own
    ``type`` and ``choices``, so ``NVML_EXPORTER_BACKEND=gpu`` fails like ``--backend gpu``.
    """

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        for action in self._actions:
            if action.dest in ENVIRONMENT and getattr(parsed, action.dest) is None:
                setattr(parsed, action.dest, self._from_environment(action))
        return parsed, extras

    def _from_environment(self, action: argparse.Action) -> Any:
        variable, default = ENVIRONMENT[action.dest]
        text = os.environ.get(variable)
        source = f"environment variable {variable}={text!r}"
        if text is None:
            text, source = default, f"default of {action.option_strings[0]}"
        try:
            value = action.type(text) if callable(action.type) else text
        except (argparse.ArgumentTypeError, ValueError) as exc:
            self.error(f"{source}: {exc}")
        if action.choices is not None and value not in action.choices:
            choices = ", ".join(map(str, action.choices))
            self.error(f"{source}: invalid choice {value!r} (choose from {choices})")
        return value


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser; flags not given come from the ``NVML_EXPORTER_*`` environment.

    ``parse_args`` exits 2 with a usage message (``SystemExit``) on a bad flag or a bad
    environment value alike.
    """
    parser = _EnvironmentParser(
        prog="nvml-exporter",
        description="Prometheus exporter of NVML GPU metrics, run as a sidecar of a model pod.",
    )
    parser.add_argument(
        "--listen-address",
        type=parse_listen_address,
        help=f"[host]:port to serve on (env NVML_EXPORTER_LISTEN_ADDRESS; default :{DEFAULT_PORT})",
    )
    parser.add_argument(
        "--gpu-uuids",
        type=parse_gpu_uuids,
        help="comma-separated UUIDs of the GPUs to report (env NVML_EXPORTER_GPU_UUIDS; "
        "default: every GPU this process sees)",
    )
    parser.add_argument(
        "--log-level",
        type=parse_log_level,
        choices=LOG_LEVELS,
        help="log level (env NVML_EXPORTER_LOG_LEVEL; default info)",
    )
    parser.add_argument(
        "--backend",
        choices=("nvml", "fake"),
        help="nvml reads the GPUs; fake serves the scripted 8-GPU fake for demos and tests "
        "(env NVML_EXPORTER_BACKEND; default nvml)",
    )
    parser.add_argument(
        "--header-timeout",
        type=parse_seconds,
        help="seconds a client has to send a whole request, from its connection or its first "
        f"byte (env NVML_EXPORTER_HEADER_TIMEOUT; default {HttpLimits.header_timeout_s:g})",
    )
    parser.add_argument(
        "--idle-timeout",
        type=parse_seconds,
        help="seconds a keep-alive connection may wait for its next request "
        f"(env NVML_EXPORTER_IDLE_TIMEOUT; default {HttpLimits.idle_timeout_s:g})",
    )
    parser.add_argument(
        "--max-connections",
        type=parse_connections,
        help="HTTP connections open at once; more wait for a slot, and idle keep-alive "
        "connections are closed to make room (env NVML_EXPORTER_MAX_CONNECTIONS; "
        f"default {HttpLimits.max_connections})",
    )
    return parser


def make_backend(name: str) -> NvmlBackend:
    """Return the backend called ``name`` (``nvml`` or ``fake``)."""
    if name == "fake":
        from nvml_exporter.fake import default_fake

        return default_fake()
    return PynvmlBackend()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the exporter until SIGTERM or SIGINT; return the exit status (0, or 1 on bind errors).

    Raises:
        SystemExit: status 2 on a bad flag or ``NVML_EXPORTER_*`` value (usage on stderr).
    """
    args = build_parser().parse_args(argv)  # exits 2 on a bad flag or environment value
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("received %s, shutting down", signal.Signals(signum).name)
        stop.set()

    # Installed before anything starts, so an early SIGTERM still shuts down cleanly.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    host, port = args.listen_address
    limits = HttpLimits(
        header_timeout_s=args.header_timeout,
        idle_timeout_s=args.idle_timeout,
        max_connections=args.max_connections,
    )
    exporter = Exporter(
        make_backend(args.backend),
        host=host,
        port=port,
        gpu_uuids=args.gpu_uuids,
        http_limits=limits,
    )
    try:
        exporter.start()
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", host, port, exc)
        return 1
    shown_host = f"[{host}]" if ":" in host else (host or "0.0.0.0")
    log.info("listening on http://%s:%d/metrics", shown_host, exporter.port)
    # Poll rather than block: CPython runs a signal handler only in the main thread, and a
    # signal the kernel gives to another thread would wait for the main thread's next bytecode.
    while not stop.wait(0.5):
        pass
    exporter.stop()
    log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
