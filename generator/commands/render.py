"""``obsgen render [--check] [SPEC…]``: render specs into the repository's output folders."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.errors import Diagnostic, ObsgenError
from generator.project_config import (
    CONFIG_FILE,
    DASHBOARDS_VIA,
    RenderConfig,
    config_path,
    load_project_config,
    recorded_text,
)
from generator.render import render
from generator.writer import differences, output_lock, write_all


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the render options."""
    parser.add_argument(
        "specs",
        nargs="*",
        help="spec files or folders, relative to the working directory (default: specs/)",
    )
    parser.add_argument(
        "--out",
        default=".",
        help="repository root to write into, where obsgen.yaml is read (default: .); "
        "specs are still found relative to the working directory",
    )
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
        choices=DASHBOARDS_VIA,
        default=None,
        help="install dashboards as sidecar ConfigMaps (manifests/, default) or inline under "
        "grafana.dashboards in helm/values-*.yaml; default: render.dashboardsVia of "
        "obsgen.yaml. A render records a new choice there (docs/config.md)",
    )
    parser.add_argument(
        "--mimir-rules",
        action="store_true",
        help="also write mimir/<service>.yaml: the rule files in the namespace layout "
        "`mimirtool rules load|sync` reads (namespace obsgen-<service>); pass it to "
        "`render --check` too; see docs/scale-out.md",
    )


def _settings(root: Path, flag: str | None, check: bool) -> tuple[RenderConfig, str | None]:
    """The render settings, and the text of a new obsgen.yaml to record (or None).

    Raises:
        ObsgenError: ``--dashboards-via`` contradicts an existing obsgen.yaml (exit 2).
    """
    config = load_project_config(root).render
    if flag is None or flag == config.dashboards_via:
        return config, None
    wanted = config.model_copy(update={"dashboards_via": flag})
    if check:
        return wanted, None
    if config_path(root).exists():
        raise ObsgenError(
            [
                Diagnostic(
                    CONFIG_FILE,
                    "render.dashboardsVia",
                    f"is {config.dashboards_via!r} but --dashboards-via {flag} was given; set "
                    f"render.dashboardsVia: {flag} in {CONFIG_FILE} so that every render and "
                    "`render --check` install dashboards the same way",
                )
            ]
        )
    return wanted, recorded_text(wanted)


def run(args: argparse.Namespace) -> int:
    """Render; with ``--check`` compare instead of writing. Exit 0, 1 (drift/promtool/cannot
    write), 2 (bad spec, output folder outside the root, another render holds the root).

    The whole render holds the output root's lock (:func:`generator.writer.output_lock`;
    shared for ``--check``), so the stale files it lists and the files it compares are the
    ones it writes over.
    """
    root = Path(args.out)
    with output_lock(root, shared=args.check):
        return _render(args, root)


def _render(args: argparse.Namespace, root: Path) -> int:
    settings, record = _settings(root, args.dashboards_via, args.check)
    outputs, stale = render(
        root,
        args.specs,
        run_promtool=not args.skip_promtool,
        dashboards_via=settings.dashboards_via,
        warn=lambda warning: print(warning, file=sys.stderr),
        fleet_name=settings.fleet_name,
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
    if record is not None:
        outputs = {**outputs, CONFIG_FILE: record}
    changed = write_all(root, outputs, stale)
    print(f"rendered {len(outputs)} files, {len(changed)} changed")
    for rel in changed:
        print(f"  {rel}")
    if record is not None:
        print(f"recorded render.dashboardsVia: {settings.dashboards_via} in {CONFIG_FILE}")
    return 0
