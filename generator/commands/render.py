"""``obsgen render [--check] [SPEC…]``: render specs into the repository's output folders."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from generator.cache import OutputCache
from generator.errors import Diagnostic, ObsgenError, summarise
from generator.progress import Progress
from generator.render import Bundle, render_bundle
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
        "--quiet", "-q", action="store_true", help="no progress line (it shows only on a terminal)"
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="build every service and run every changed promtool proof, ignoring what earlier "
        "renders recorded (see docs/ci.md: the cache lives in $OBSGEN_CACHE_DIR)",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=None,
        metavar="N",
        help="worker processes for building many services (default: one per core)",
    )


def run(args: argparse.Namespace) -> int:
    """Render; with ``--check`` compare instead of writing. Exit 0, 1 (drift/promtool), 2 (bad spec)."""
    root = Path(args.out)
    progress = Progress(enabled=False if args.quiet else None)
    cache = None if args.no_cache else OutputCache(root)
    warnings: list[Diagnostic] = []
    spool = tempfile.TemporaryDirectory(prefix="obsgen-spool-")
    try:
        bundle = render_bundle(
            root,
            args.specs,
            run_promtool=not args.skip_promtool,
            dashboards_via=args.dashboards_via,
            warn=warnings.append,
            cache=cache,
            progress=progress,
            jobs=args.jobs,
            spool_to=Path(spool.name),
        )
        return _finish(args, root, bundle, cache)
    finally:
        spool.cleanup()
        progress.clear()
        for line in summarise(warnings):
            print(line, file=sys.stderr)
        if cache is not None:
            cache.save()  # proofs that passed stay recorded even when another one failed


def _finish(args: argparse.Namespace, root: Path, bundle: Bundle, cache: OutputCache | None) -> int:
    """Compare (``--check``) or write the bundle; record what was written in ``cache``."""
    # Files reused in place are on disk unchanged: nothing to compare or write.
    outputs, stale = bundle.outputs.to_write(), bundle.stale
    if args.check:
        drift = differences(root, outputs, stale)
        for line in drift:
            print(f"out of date: {line}", file=sys.stderr)
        if drift:
            print("run `make render` and commit the result", file=sys.stderr)
            return 1
        print(f"{len(bundle.outputs)} files up to date")
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
    if cache is not None:
        cache.remember(bundle.keys, bundle.services)
        if not bundle.partial:
            cache.forget_others(bundle.services)
        cache.save()
    print(f"rendered {len(bundle.outputs)} files, {len(changed)} changed")
    for rel in changed:
        print(f"  {rel}")
    return 0
