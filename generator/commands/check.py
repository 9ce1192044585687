"""``obsgen check [SPEC…]``: validate specs (load + resolve) without writing anything."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.render import load_plans
from generator.spec import find_spec_files


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the check options."""
    parser.add_argument("specs", nargs="*", help="spec files or folders (default: specs/)")


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every spec is valid (warnings, on stderr, do not fail), 2 (via ObsgenError)
    otherwise."""
    plans = load_plans(find_spec_files(args.specs, Path(".")), Path("."))
    for plan in plans:
        for warning in plan.warnings:
            print(warning, file=sys.stderr)
        print(
            f"{plan.source}: ok ({plan.name}: {len(plan.slos)} SLOs, {len(plan.alerts)} alert families)"
        )
    return 0
