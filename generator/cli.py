"""The ``obsgen`` command line: ``render [--check] | check | lint | explain | verify``.

Subcommands live in generator/commands/; exit codes: docs/limits.md, "The command line and
its exit codes".
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Protocol, cast

from generator import __version__
from generator.errors import EXIT_INTERNAL_ERROR, ObsgenError, capped_list, input_of, printable

# subcommand -> (module, one-line help). Modules import lazily so `render` stays light.
COMMANDS: dict[str, tuple[str, str]] = {
    "render": ("generator.commands.render", "render specs into rules, tests, dashboards, overlays"),
    "check": ("generator.commands.check", "validate specs without writing anything"),
    "explain": ("generator.commands.explain", "print the burn-rate tier table of a spec"),
    "lint": ("generator.lint.command", "lint Prometheus rule files (plain, PrometheusRule, Helm)"),
    "verify": ("generator.commands.verify", "check a spec against a live Prometheus server"),
}

DEBUG_ENV = "OBSGEN_DEBUG"
DEBUG_HELP = f"print the full traceback of an unexpected error (or set {DEBUG_ENV}=1)"


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
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    # --debug is accepted after the subcommand too; SUPPRESS keeps the top-level value.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = next((a for a in argv if a in COMMANDS), None)
    for name, (_, help_text) in COMMANDS.items():
        sub_parser = sub.add_parser(name, help=help_text, description=help_text, parents=[common])
        if name == chosen:
            _load(name).configure(sub_parser)
    return parser


def _debug_wanted(argv: Sequence[str]) -> bool:
    return "--debug" in argv or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _inputs(args: argparse.Namespace | None) -> str:
    """The inputs a command was given, for the internal-error line."""
    if args is None:
        return ""
    given = [str(p) for p in (getattr(args, "specs", None) or getattr(args, "paths", None) or [])]
    return capped_list(given) if given else ("specs/" if hasattr(args, "specs") else "")


def internal_error_line(err: BaseException, command: str, inputs: str) -> str:
    """The one line printed for an unexpected exception: what failed, on which input, and what
    to do (report it; ``--debug`` for the traceback)."""
    where = input_of(err) or inputs
    detail = printable(str(err))
    detail = detail if len(detail) <= 200 else detail[:199] + "…"
    return (
        f"obsgen {command}: internal error{f' on {printable(where)}' if where else ''}: "
        f"{type(err).__name__}{f': {detail}' if detail else ''}. This is a bug in obsgen: "
        f"please report it with this line and the input; run again with --debug "
        f"(or {DEBUG_ENV}=1) for the traceback"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``obsgen`` console script; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    args: argparse.Namespace | None = None
    try:
        parser = build_parser(args_list)
        args = parser.parse_args(args_list)
        code = _load(args.command).run(args)
        sys.stdout.flush()  # here, so that a reader that left is handled below
        return code
    except ObsgenError as err:
        for diagnostic in err.diagnostics:
            print(diagnostic, file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `obsgen explain … | head`: the reader left; nothing more to say, and nowhere to say it.
        # Point stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as err:  # the last resort: anything else is a bug in obsgen
        command = getattr(args, "command", None) or "(starting)"
        if _debug_wanted(args_list):
            traceback.print_exc()
        print(internal_error_line(err, command, _inputs(args)), file=sys.stderr)
        return EXIT_INTERNAL_ERROR
