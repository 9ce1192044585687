"""``obsgen check [SPEC…]``: validate specs (load + resolve) and ``alertmanager/receivers.yaml``
without writing anything."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.errors import Diagnostic, Level, ObsgenError
from generator.plan import ServicePlan
from generator.project_config import load_project_config
from generator.receivers import RECEIVERS_FILE, load_receivers
from generator.render import load_plans
from generator.slow_page import slow_page_warnings
from generator.spec import find_spec_files
from generator.units import format_duration_ms

UNSEEN_RETENTION_MS = 10 * 86_400_000
"""The shortest retention a Prometheus has unless told otherwise, in ms: kube-prometheus-stack's
default ``prometheus.prometheusSpec.retention: 10d`` (a bare Prometheus keeps 15d)."""


def retention_warnings(plan: ServicePlan) -> list[Diagnostic]:
    """One warning when an SLO window is longer than :data:`UNSEEN_RETENTION_MS` and the spec
    declares no ``prometheus.retention`` (a declared one is checked when the plan resolves):
    the server may drop data the SLO needs, and only ``obsgen verify`` sees its retention."""
    long = [(i, s) for i, s in enumerate(plan.slos) if s.window_ms > UNSEEN_RETENTION_MS]
    if plan.retention_ms is not None or not long:
        return []
    index, longest = max(long, key=lambda item: item[1].window_ms)
    names = ", ".join(repr(s.name) for _, s in long)
    return [
        Diagnostic(
            plan.source,
            f"spec.slos[{index}].window",
            f"SLO {names} cover{'s' if len(long) == 1 else ''} up to "
            f"{format_duration_ms(longest.window_ms)}, longer than the "
            f"{format_duration_ms(UNSEEN_RETENTION_MS)} kube-prometheus-stack keeps by default, "
            "and spec.prometheus.retention is not declared: a Prometheus keeping less never "
            "covers the window. Declare the server's retention (check then refuses a longer "
            "window), or confirm it with `obsgen verify --prometheus-url URL` (its retention "
            "row reads the server's)",
            Level.WARNING,
        )
    ]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the check options."""
    parser.add_argument("specs", nargs="*", help="spec files or folders (default: specs/)")


def run(args: argparse.Namespace) -> int:
    """Exit 0 when ``obsgen.yaml``, every spec and ``alertmanager/receivers.yaml`` (when
    there are) are valid (warnings, on stderr, do not fail), 2 (via ObsgenError) otherwise,
    with the problems of all of them in one pass."""
    problems: list[Diagnostic] = []
    plans: list[ServicePlan] = []
    receivers = None
    try:
        load_project_config(Path("."))
    except ObsgenError as err:
        problems.extend(err.diagnostics)
    try:
        plans = load_plans(find_spec_files(args.specs, Path(".")), Path("."))
    except ObsgenError as err:
        problems.extend(err.diagnostics)
    try:
        receivers = load_receivers(Path("."))
    except ObsgenError as err:
        problems.extend(err.diagnostics)
    if problems:
        raise ObsgenError(problems)
    for plan in plans:
        for warning in (*plan.warnings, *retention_warnings(plan), *slow_page_warnings(plan)):
            print(warning, file=sys.stderr)
        print(
            f"{plan.source}: ok ({plan.name}: {len(plan.slos) + len(plan.goodput)} SLOs, {len(plan.alerts)} alert families)"
        )
    if receivers is not None:
        print(f"{RECEIVERS_FILE}: ok ({len(receivers.teams)} teams)")
    return 0
