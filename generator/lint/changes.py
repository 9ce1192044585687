"""Diff mode: which lines of which files a change touched, from ``git diff`` or a diff file.

``obsgen lint --changed-only`` keeps only the findings on rules whose lines (or the comment
lines directly above them) the change touched, on rules reading a series recorded by a touched
rule, and on touched lines of files without rules in them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from generator.errors import Diagnostic, ObsgenError

_FILE = re.compile(r"^\+\+\+ (?:b/)?(?P<path>.+?)\t?$")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(?P<start>\d+)(?:,(?P<count>\d+))? @@")


@dataclass(frozen=True)
class Changes:
    """Changed lines per file.

    Attributes:
        lines: resolved file path -> the 1-based new-side lines the change added or changed,
            and the lines on either side of a deletion.
        removed: the text of every deleted line (a rule reading a record whose recording
            rule was deleted is reported although its own lines did not change).
    """

    lines: Mapping[str, frozenset[int]]
    removed: str = ""

    def removed_name(self, name: str) -> bool:
        """True when a deleted line held ``name`` (a removed or renamed recording rule)."""
        return (
            re.search(rf"(?<![A-Za-z0-9_:]){re.escape(name)}(?![A-Za-z0-9_:])", self.removed)
            is not None
        )

    def touches(self, path: str, first: int, last: int) -> bool:
        """True when some changed line of ``path`` lies in ``first..last`` (1-based)."""
        changed = self.lines.get(_key(path))
        return bool(changed) and any(first <= line <= last for line in changed or ())

    def touches_file(self, path: str) -> bool:
        """True when the change touched ``path`` at all."""
        return bool(self.lines.get(_key(path)))


def _key(path: str | Path) -> str:
    return str(Path(path).resolve())


def parse_diff(text: str, root: Path) -> Changes:
    """Read a unified diff (``git diff -U0``, ``diff -u``); paths are relative to ``root``.

    A hunk that deletes lines marks the lines on both sides of the deletion.
    """
    lines: dict[str, set[int]] = {}
    removed: list[str] = []
    current: set[int] | None = None
    for line in text.splitlines():
        if line.startswith("-") and not line.startswith("---"):
            removed.append(line[1:])
            continue
        header = _FILE.match(line)
        if header:
            path = header.group("path")
            current = None if path == "/dev/null" else lines.setdefault(_key(root / path), set())
            continue
        hunk = _HUNK.match(line)
        if hunk and current is not None:
            start = int(hunk.group("start"))
            count = 1 if hunk.group("count") is None else int(hunk.group("count"))
            if count == 0:
                current.update((start, start + 1))
            else:
                current.update(range(start, start + count))
    return Changes({path: frozenset(found) for path, found in lines.items()}, "\n".join(removed))


def _git(args: list[str], cwd: Path) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ObsgenError([Diagnostic("--changed-only", "", f"cannot run git: {err}")]) from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "git failed"
        raise ObsgenError([Diagnostic("--changed-only", "", f"git {args[0]}: {message}")])
    return done.stdout


def from_git(base: str, cwd: Path) -> Changes:
    """What changed between ``base`` (a commit, branch or tag) and the working tree, new
    untracked files included (every line of them).

    Raises:
        ObsgenError: git is missing, ``cwd`` is not in a repository, or ``base`` is unknown
            (exit 2).
    """
    root = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    _git(["rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"], root)
    changes = parse_diff(_git(["diff", "-U0", "--no-color", base, "--"], root), root)
    lines = dict(changes.lines)
    for name in _git(["ls-files", "--others", "--exclude-standard"], root).splitlines():
        path = root / name
        if path.is_file():
            try:
                count = len(path.read_bytes().splitlines())
            except OSError:
                continue
            lines[_key(path)] = frozenset(range(1, count + 2))
    return Changes(lines, changes.removed)


def read_diff(path: str, cwd: Path) -> Changes:
    """A diff file (``-`` for standard input), its paths relative to ``cwd``.

    Raises:
        ObsgenError: the file cannot be read (exit 2).
    """
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise ObsgenError([Diagnostic(path, "", f"cannot read the diff: {err}")]) from None
    return parse_diff(text, cwd)
