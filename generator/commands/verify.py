"""``obsgen verify SPEC… --prometheus-url URL [--alertmanager-url URL]``: check specs and the
installed bundle against a live Prometheus (and Alertmanager).

Prints one table row per check (:mod:`generator.verify`, :mod:`generator.verify_bundle`) and
exits 0 when nothing is missing or wrong, 1 when something is, 2 when a spec or an option is
invalid, or a server cannot be reached or refuses the credentials. Credentials and TLS of each
server: :mod:`generator.transport`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from generator.errors import printable
from generator.prometheus_api import DEADLINE_S, MAX_RESPONSE_BYTES, PrometheusAPI
from generator.render import find_specs, load_plans
from generator.transport import load_transport, transport_options, warnings_of
from generator.verify import Row, format_table, verify_plan
from generator.verify_bundle import (
    AlertmanagerAPI,
    check_external_labels,
    check_retention,
    check_routing,
    check_rules,
    external_labels,
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
        "--alertmanager-url",
        default=os.environ.get("ALERTMANAGER_URL"),
        help="base URL of the Alertmanager the Prometheus sends to, e.g. http://127.0.0.1:9093 "
        "(env ALERTMANAGER_URL): check that each alert reaches its team's receiver",
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
    transport_options(parser, "Prometheus")
    transport_options(parser, "Alertmanager", "alertmanager-")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError(f"{text} is out of range; expected 0 < seconds ≤ 86400")
    return value


def run(args: argparse.Namespace) -> int:
    """Verify every spec and its installed bundle; exit 1 when something is missing or wrong."""
    url, transport = load_transport(args, args.prometheus_url, "Prometheus", "--prometheus-url")
    am_url, am_transport = (None, None)
    if args.alertmanager_url:
        am_url, am_transport = load_transport(
            args, args.alertmanager_url, "Alertmanager", "--alertmanager-url", "alertmanager-"
        )
    plans = load_plans(find_specs(args.specs, Path(".")), Path("."))
    for warning in warnings_of(transport, url) + (
        warnings_of(am_transport, am_url) if am_transport and am_url else []
    ):
        print(warning, file=sys.stderr)
    limits = {
        "timeout_s": args.timeout,
        "deadline_s": args.deadline,
        "max_bytes": args.max_response_bytes,
    }
    api = PrometheusAPI(url, **limits, transport=transport)
    version = api.version()
    labels = external_labels(api)
    routing = None
    if am_url and am_transport:
        alertmanager = AlertmanagerAPI(am_url, **limits, transport=am_transport)
        routing = (alertmanager, alertmanager.config_text())
    rows: list[Row] = []
    for plan in plans:
        rows.extend(verify_plan(plan, api))
        rows.extend(check_rules(plan, api))
        rows.extend(check_retention(plan, api))
        rows.extend(check_external_labels(plan, labels, api))
        if routing is not None:
            rows.extend(check_routing(plan, routing[1], labels, routing[0].url))
    shown = f"{printable(api.url)}{_unverified(api)}"
    print(f"Prometheus {version or '(version unknown)'} at {shown}")
    if routing is not None:
        print(f"Alertmanager at {printable(routing[0].url)}{_unverified(routing[0])}")
    print(format_table(rows))
    failed = [r for r in rows if r.status.failed]
    warned = [r for r in rows if r.status.value == "warning"]
    print(f"\n{len(rows)} checks: {len(failed)} failed, {len(warned)} warnings")
    return 1 if failed else 0


def _unverified(api: PrometheusAPI) -> str:
    """A mark on the header line of a server whose certificate was not verified."""
    if not api.transport.insecure:
        return ""
    return f" (certificate NOT verified: {api.transport.option('insecure-skip-verify')})"
