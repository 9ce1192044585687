"""``obsgen verify SPEC… --prometheus-url URL``: check specs against a live Prometheus.

Prints one table row per check (see :mod:`generator.verify`) and exits 0 when nothing is
missing or wrong, 1 when something is, 2 when a spec is invalid or the server cannot be
reached.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from generator.errors import printable
from generator.render import find_specs, load_plans
from generator.verify import (
    DEADLINE_S,
    MAX_RESPONSE_BYTES,
    PrometheusAPI,
    format_table,
    verify_plan,
)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the verify options."""
    parser.add_argument("specs", nargs="+", help="spec files or folders")
    parser.add_argument(
        "--prometheus-url",
        default=os.environ.get("PROMETHEUS_URL"),
        required="PROMETHEUS_URL" not in os.environ,
        help="base URL of the Prometheus to ask, e.g. http://127.0.0.1:9090 (env PROMETHEUS_URL)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=10.0,
        help="seconds each API request may take, headers and body (default 10)",
    )
    parser.add_argument(
        "--deadline",
        type=_seconds,
        default=DEADLINE_S,
        help=f"seconds all requests together may take (default {DEADLINE_S:g})",
    )
    parser.add_argument(
        "--max-response-bytes",
        type=int,
        default=MAX_RESPONSE_BYTES,
        help=f"largest API response accepted, in bytes (default {MAX_RESPONSE_BYTES})",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError(f"{text} is out of range; expected 0 < seconds ≤ 86400")
    return value


def run(args: argparse.Namespace) -> int:
    """Verify every spec; exit 1 when a series, bucket or window is missing or wrong."""
    plans = load_plans(find_specs(args.specs, Path(".")), Path("."))
    api = PrometheusAPI(
        args.prometheus_url,
        timeout_s=args.timeout,
        deadline_s=args.deadline,
        max_bytes=args.max_response_bytes,
    )
    version = api.version()
    rows = [row for plan in plans for row in verify_plan(plan, api)]
    print(f"Prometheus {version or '(version unknown)'} at {printable(api.url)}")
    print(format_table(rows))
    failed = [r for r in rows if r.status.failed]
    warned = [r for r in rows if r.status.value == "warning"]
    print(f"\n{len(rows)} checks: {len(failed)} failed, {len(warned)} warnings")
    return 1 if failed else 0
