"""``obsgen render [--check] [SPEC…]``: render specs into the repository's output folders."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.errors import Diagnostic, ObsgenError
from generator.render import render
from generator.writer import differences, write_all


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the render options."""
    parser.add_argument("specs", nargs="*", help="spec files or folders (default: specs/)")
    parser.add_argument("--out", default=".", help="repository root to write into (default: .)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="render in memory and exit 1 listing files that differ from what is on disk",
    )
    parser.add_argument(
        "--skip-promtool", action="store_true", help="do not run promtool (not for CI)"
    )
    parser.add_argument(
        "--dashboards-via",
        choices=("configmaps", "values"),
        default="configmaps",
        help="install dashboards as sidecar ConfigMaps (manifests/, default) or inline under "
        "grafana.dashboards in helm/values-*.yaml; see docs/install.md",
    )
    parser.add_argument(
        "--mimir-rules",
        action="store_true",
        help="also write mimir/<service>.yaml: the rule files in the namespace layout "
        "`mimirtool rules load|sync` reads (namespace obsgen-<service>); pass it to "
        "`render --check` too; see docs/scale-out.md",
    )


def run(args: argparse.Namespace) -> int:
    """Render; with ``--check`` compare instead of writing. Exit 0, 1 (drift/promtool), 2 (bad spec)."""
    root = Path(args.out)
    outputs, stale = render(
        root,
        args.specs,
        run_promtool=not args.skip_promtool,
        dashboards_via=args.dashboards_via,
        warn=lambda warning: print(warning, file=sys.stderr),
        mimir=args.mimir_rules,
    )
    if args.check:
        drift = differences(root, outputs, stale)
        for line in drift:
            print(f"out of date: {line}", file=sys.stderr)
        if drift:
            print("run `make render` and commit the result", file=sys.stderr)
            return 1
        print(f"{len(outputs)} files up to date")
        return 0
    try:
        changed = write_all(root, outputs, stale)
    except OSError as err:
        where = err.filename if isinstance(err.filename, str) else str(root)
        raise ObsgenError(
            [
                Diagnostic(
                    where, "", f"cannot write: {err.strerror or err}; earlier outputs are intact"
                )
            ],
            exit_code=1,
        ) from None
    print(f"rendered {len(outputs)} files, {len(changed)} changed")
    for rel in changed:
        print(f"  {rel}")
    return 0
