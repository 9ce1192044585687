"""Diagnostics: errors and warnings as values, reported per file and field path.

Every user-facing problem is a :class:`Diagnostic` that names the file, the field path
as the user wrote it (``spec.slos[1].threshold``) and what was expected. Commands collect
all diagnostics, print them, and exit once at the end — never with a traceback.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

# Exit code of an unexpected exception (a bug in obsgen): sysexits.h EX_SOFTWARE.
EXIT_INTERNAL_ERROR = 70


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
        # File names, keys and server answers are untrusted: no control characters reach the
        # terminal (a message may span lines: promtool's test failures do).
        return f"{printable(where)}: {prefix}{printable(self.message, keep_newlines=True)}"


def printable(text: str, keep_newlines: bool = False) -> str:
    """``text`` with control and other non-printable characters escaped (``\\x1b``), so that
    untrusted text (a file name, a key, a server's answer) cannot move the cursor or recolour
    the terminal it is printed to. ``keep_newlines`` keeps ``\\n`` for multi-line messages."""
    if text.isprintable():
        return text
    return "".join(
        c
        if c.isprintable() or (keep_newlines and c == "\n")
        else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


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

    def __reduce__(self) -> tuple[type[ObsgenError], tuple[list[Diagnostic], int]]:
        # Pickled with its diagnostics, so a worker process can raise it to the parent.
        return ObsgenError, (self.diagnostics, self.exit_code)


def capped_list(items: Sequence[str], named: int = 3) -> str:
    """``items`` joined with ", ", the first ``named`` of them and then how many more, so a
    message about 1,000 specs stays one short line: ``specs/a.yaml, specs/b.yaml,
    specs/c.yaml and 997 more`` (all of them when there are at most ``named``; ``""`` when
    there are none). The items are shown in the order given: sort them first.
    """
    listed = ", ".join(items[:named])
    return f"{listed} and {len(items) - named:,} more" if len(items) > named else listed


def summarise(diagnostics: Iterable[Diagnostic], named: int = 3) -> list[str]:
    """Lines to print for ``diagnostics``: one per diagnostic, except that the same problem
    (field path, message and level) in several files is printed once, with how many files
    and the first ``named`` of them: ``metadata.runbookBaseUrl: warning: not set: … (in
    1,000 specs: specs/a.yaml, specs/b.yaml, specs/c.yaml and 997 more)``. Order: first
    occurrence.
    """
    groups: dict[tuple[str, str, Level], list[str]] = {}
    for d in diagnostics:
        groups.setdefault((d.path, d.message, d.level), []).append(d.file)
    lines = []
    for (path, message, level), files in groups.items():
        if len(files) == 1:
            lines.append(str(Diagnostic(files[0], path, message, level)))
            continue
        prefix = "" if level is Level.ERROR else "warning: "
        where = f"{path}: " if path else ""
        listed = capped_list(files, named)
        lines.append(f"{where}{prefix}{message} (in {len(files):,} specs: {listed})")
    return lines


@contextlib.contextmanager
def processing(file: str) -> Iterator[None]:
    """Work on input ``file``: an unexpected exception raised inside is tagged with it, so the
    CLI's last-resort handler can name the input (:func:`input_of`)."""
    try:
        yield
    except ObsgenError:
        raise
    except Exception as err:
        if input_of(err) is None:
            with contextlib.suppress(AttributeError):  # a few builtins refuse new attributes
                err.obsgen_input = file  # type: ignore[attr-defined]
        raise


def input_of(err: BaseException) -> str | None:
    """The input an unexpected exception was raised on (see :func:`processing`), or None."""
    found = getattr(err, "obsgen_input", None)
    return found if isinstance(found, str) else None
