"""The ``obsgen`` command line: ``render [--check] | check | lint | explain | verify``.

Each subcommand lives in its own module exposing ``configure(parser)`` and ``run(args) -> int``;
this module only wires them up and turns :class:`~generator.errors.ObsgenError` into
messages and exit codes (2: bad input or usage, 1: checks failed, 0: success).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Protocol, cast

from generator import __version__
from generator.errors import ObsgenError

# subcommand -> (module, one-line help). Modules import lazily so `render` stays light.
COMMANDS: dict[str, tuple[str, str]] = {
    "render": ("generator.commands.render", "render specs into rules, tests, dashboards, overlays"),
    "check": ("generator.commands.check", "validate specs without writing anything"),
    "explain": ("generator.commands.explain", "print the burn-rate tier table of a spec"),
    "lint": ("generator.lint.command", "lint Prometheus rule files (plain, PrometheusRule, Helm)"),
    "verify": ("generator.commands.verify", "check a spec against a live Prometheus server"),
}


class Command(Protocol):
    """What a subcommand module provides."""

    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _load(name: str) -> Command:
    return cast(Command, importlib.import_module(COMMANDS[name][0]))


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    """Build the parser; only the chosen subcommand's module is imported."""
    parser = argparse.ArgumentParser(
        prog="obsgen", description="Observability bundles for model-serving services."
    )
    parser.add_argument("--version", action="version", version=f"obsgen {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = next((a for a in argv if a in COMMANDS), None)
    for name, (_, help_text) in COMMANDS.items():
        sub_parser = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            _load(name).configure(sub_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``obsgen`` console script; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(args_list)
    args = parser.parse_args(args_list)
    try:
        return _load(args.command).run(args)
    except ObsgenError as err:
        for diagnostic in err.diagnostics:
            print(diagnostic, file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
