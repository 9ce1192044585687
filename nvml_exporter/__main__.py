"""``nvml-exporter``: command line, logging and signal handling.

Every flag has an environment variable; a flag given on the command line wins::

    --listen-address  NVML_EXPORTER_LISTEN_ADDRESS  [host]:port    default ":9445" (all IPv4)
    --gpu-uuids       NVML_EXPORTER_GPU_UUIDS       comma-separated GPU UUIDs; default all
    --log-level       NVML_EXPORTER_LOG_LEVEL       debug|info|warning|error; default info
    --backend         NVML_EXPORTER_BACKEND         nvml|fake; default nvml (fake: demos, tests)

SIGTERM and SIGINT stop the exporter cleanly (``nvmlShutdown``) and exit 0.
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


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser; defaults come from the ``NVML_EXPORTER_*`` environment."""
    env = os.environ.get
    parser = argparse.ArgumentParser(
        prog="nvml-exporter",
        description="Prometheus exporter of NVML GPU metrics, run as a sidecar of a model pod.",
    )
    parser.add_argument(
        "--listen-address",
        type=parse_listen_address,
        default=parse_listen_address(env("NVML_EXPORTER_LISTEN_ADDRESS", f":{DEFAULT_PORT}")),
        help=f"[host]:port to serve on (env NVML_EXPORTER_LISTEN_ADDRESS; default :{DEFAULT_PORT})",
    )
    parser.add_argument(
        "--gpu-uuids",
        type=parse_gpu_uuids,
        default=parse_gpu_uuids(env("NVML_EXPORTER_GPU_UUIDS", "")),
        help="comma-separated UUIDs of the GPUs to report (env NVML_EXPORTER_GPU_UUIDS; "
        "default: every GPU this process sees)",
    )
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default=env("NVML_EXPORTER_LOG_LEVEL", "info").lower(),
        help="log level (env NVML_EXPORTER_LOG_LEVEL; default info)",
    )
    parser.add_argument(
        "--backend",
        choices=("nvml", "fake"),
        default=env("NVML_EXPORTER_BACKEND", "nvml"),
        help="nvml reads the GPUs; fake serves the scripted 8-GPU fake for demos and tests "
        "(env NVML_EXPORTER_BACKEND; default nvml)",
    )
    return parser


def make_backend(name: str) -> NvmlBackend:
    """Return the backend called ``name`` (``nvml`` or ``fake``)."""
    if name == "fake":
        from nvml_exporter.fake import default_fake

        return default_fake()
    return PynvmlBackend()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the exporter until SIGTERM or SIGINT; return the exit status (0, or 1 on bind errors)."""
    try:
        args = build_parser().parse_args(argv)
    except argparse.ArgumentTypeError as exc:  # a bad environment default
        print(f"nvml-exporter: error: {exc}", file=sys.stderr)
        return 2
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
    exporter = Exporter(make_backend(args.backend), host=host, port=port, gpu_uuids=args.gpu_uuids)
    try:
        exporter.start()
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", host, port, exc)
        return 1
    shown_host = f"[{host}]" if ":" in host else (host or "0.0.0.0")
    log.info("listening on http://%s:%d/metrics", shown_host, exporter.port)
    stop.wait()
    exporter.stop()
    log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
