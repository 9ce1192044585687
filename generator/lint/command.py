"""``obsgen lint PATH…``: lint Prometheus rule files in CI.

Exit codes: 0 clean (or only findings below ``--fail-on``), 1 findings at or above
``--fail-on`` (default ``warning``), 2 usage errors (at once) or unreadable input (after
every other file was linted and all findings were printed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.errors import Diagnostic, ObsgenError
from generator.lint.changes import from_git, read_diff, unmatched
from generator.lint.checks import all_checks
from generator.lint.config import CONFIG_NAME, load_config
from generator.lint.engine import lint_paths
from generator.lint.loader import collect_paths
from generator.lint.model import Severity
from generator.lint.output import FORMATS, render
from generator.lint.promql import parse_duration
from generator.lint.versions import TARGETS, parse_target


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``obsgen lint``'s arguments to ``parser``."""
    parser.add_argument("paths", nargs="*", metavar="PATH", help="rule files or folders to lint")
    parser.add_argument(
        "--format", choices=FORMATS, default="text", help="output format (default: text)"
    )
    parser.add_argument(
        "--fail-on",
        choices=("error", "warning", "info", "never"),
        default="warning",
        help="exit 1 when a finding is at or above this severity (default: warning)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help=f"config file (default: ./{CONFIG_NAME} if present)",
    )
    parser.add_argument(
        "--scrape-interval", metavar="DURATION", help="override the config's scrapeInterval"
    )
    parser.add_argument(
        "--prometheus-version",
        choices=TARGETS,
        help="the Prometheus the rules are for (default: the config's prometheusVersion, "
        "else both: what works on either)",
    )
    parser.add_argument(
        "--no-promtool", action="store_true", help="skip the promtool check rules step"
    )
    parser.add_argument(
        "--changed-only",
        action="store_true",
        help="report only findings on rules changed since --base (git diff, untracked files "
        "included) or in --diff; every file is still read",
    )
    parser.add_argument(
        "--base",
        metavar="REF",
        default="HEAD",
        help="git ref --changed-only compares with (default: HEAD)",
    )
    parser.add_argument(
        "--diff",
        metavar="FILE",
        help="a unified diff (`-`: standard input) naming the changed lines; implies --changed-only",
    )
    parser.add_argument("--list-checks", action="store_true", help="print every check and exit")


def _list_checks() -> str:
    rows = [f"{c.id:32} {c.severity.value:8} {c.family:11} {c.summary}" for c in all_checks()]
    return "\n".join(rows) + "\n"


def run(args: argparse.Namespace) -> int:
    """Lint ``args.paths`` and print the findings; returns the exit code.

    Returns 2 after printing the findings when some input file could not be read.

    Raises:
        ObsgenError: no path given, a path missing, bad config or scrape interval, or
            promtool missing (exit 2).
    """
    checks = all_checks()
    if args.list_checks:
        sys.stdout.write(_list_checks())
        return 0
    if not args.paths:
        raise ObsgenError([Diagnostic("obsgen lint", "", "give at least one rule file or folder")])
    config, _ = load_config(args.config, {c.id for c in checks})
    if args.scrape_interval:
        try:
            config = config.with_scrape_interval(parse_duration(args.scrape_interval))
        except ValueError as err:
            raise ObsgenError([Diagnostic("--scrape-interval", "", str(err))]) from None
    if args.prometheus_version:
        config = config.with_versions(parse_target(args.prometheus_version))
    changes = None
    if args.diff:
        changes = read_diff(args.diff, Path.cwd())
    elif args.changed_only:
        changes = from_git(args.base, Path.cwd(), args.paths)
    report = lint_paths(args.paths, config, promtool=not args.no_promtool, changes=changes)
    if changes is not None:
        linted = [(str(path), shown, named) for path, shown, named in collect_paths(args.paths)]
        source = args.diff if args.diff else f"--changed-only (git diff {args.base})"
        for warning in unmatched(changes, linted, source):
            print(warning, file=sys.stderr)
    sys.stdout.write(render(report, args.format))
    if report.unreadable:
        return 2
    threshold = None if args.fail_on == "never" else Severity.parse(args.fail_on)
    return 1 if report.fails(threshold) else 0
