"""Diagnostics: errors and warnings as values, reported per file and field path.

Every user-facing problem is a :class:`Diagnostic` that names the file, the field path
as the user wrote it (``spec.slos[1].threshold``) and what was expected. Commands collect
all diagnostics, print them, and exit once at the end — never with a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Level(StrEnum):
    """Severity of a diagnostic."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One problem found in an input or an output.

    Attributes:
        file: path of the file the problem is in, as given on the command line.
        path: dotted field path inside the file (``spec.alerts.queueDepth.max``), or ``""``.
        message: what is wrong, one line.
        level: :class:`Level`; only errors make a command fail.
    """

    file: str
    path: str
    message: str
    level: Level = Level.ERROR

    def __str__(self) -> str:
        where = f"{self.file}: {self.path}" if self.path else self.file
        prefix = "" if self.level is Level.ERROR else "warning: "
        return f"{where}: {prefix}{self.message}"


class ObsgenError(Exception):
    """Raised with one or more diagnostics; the CLI prints them and exits non-zero.

    Attributes:
        diagnostics: the problems, sorted by file and path.
        exit_code: 2 for bad input or usage, 1 for failed checks on outputs.
    """

    def __init__(self, diagnostics: Iterable[Diagnostic], exit_code: int = 2) -> None:
        self.diagnostics = sorted(diagnostics)
        self.exit_code = exit_code
        super().__init__("\n".join(str(d) for d in self.diagnostics))
