"""Diff mode: which lines of which files a change touched, from ``git diff`` or a diff file.

``obsgen lint --changed-only`` keeps only the findings on rules whose lines (or the comment
lines directly above them) the change touched, on rules reading a series recorded by a touched
rule, and on touched lines of files without rules in them. Paths are read however git writes
them (C-quoted, any prefix, renames); memory grows with the diff's bytes, never with the line
counts its hunk headers claim. How each is read: docs/lint.md, "Diff mode".
"""

from __future__ import annotations

import bisect
import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import threading
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, BinaryIO

from generator.errors import Diagnostic, Level, ObsgenError

# Largest diff read (bytes), from a file, standard input or git: far above a real change to
# rule files (the linter reads at most 8 MiB per file), far below what exhausts memory.
MAX_DIFF_BYTES = 64 * 1024 * 1024
GIT_TIMEOUT_S = 60.0
# Most files one diff may name: each costs a path resolution (about 0.1 ms), so 64 MiB of
# one-line file sections would take minutes; far above a change to rule files.
MAX_DIFF_FILES = 50_000


class TooManyFiles(Exception):
    """A diff names more than :data:`MAX_DIFF_FILES` files."""


# Through the end of any file: a whole new file counts as changed.
WHOLE_FILE = (1, sys.maxsize)
# Prefixes git puts on diff paths: a/ b/ by default, c/ i/ w/ o/ with diff.mnemonicPrefix
# (commit, index, work tree, object).
GIT_PREFIXES = ("a/", "b/", "c/", "i/", "w/", "o/")
# How obsgen runs git: its own prefixes and raw (unquoted) paths, whatever the user's config
# says, no external diff driver or text conversion, renames found.
GIT_DIFF = (
    "-c",
    "core.quotePath=false",
    "-c",
    "diff.noprefix=false",
    "-c",
    "diff.mnemonicPrefix=false",
    "-c",
    "diff.relative=false",
    "diff",
    "-U0",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--find-renames",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
# Terminal colour and erase escapes git writes with color.diff=always (ECMA-48 SGR and EL);
# YAML allows no raw ESC, so no rule file's line holds one.
_COLOUR = re.compile(rb"\x1b\[[0-9;]*[mK]")
_ESCAPES = {
    "a": 7,
    "b": 8,
    "t": 9,
    "n": 10,
    "v": 11,
    "f": 12,
    "r": 13,
    '"': 34,
    "\\": 92,
}

Range = tuple[int, int]


def _key(path: str | Path) -> str:
    return str(Path(path).resolve())


class LineRanges:
    """Sorted, disjoint, inclusive 1-based line ranges, kept in two ``array('q')`` (16 bytes a
    range): what a diff marks, with memory bounded by the diff's bytes, never by the counts
    its hunk headers claim."""

    __slots__ = ("firsts", "lasts")

    def __init__(self, ranges: Iterable[Range] = ()) -> None:
        self.firsts = array("q")
        self.lasts = array("q")
        for first, last in ranges:
            self.add(first, last)

    def add(self, first: int, last: int) -> None:
        """Add ``first..last``; joined to the last range when it overlaps or adjoins it.
        Line numbers beyond ``sys.maxsize`` (a hunk header may claim any) are cut to it."""
        first, last = min(first, sys.maxsize), min(last, sys.maxsize)
        if self.lasts and self.firsts[-1] <= first <= self.lasts[-1] + 1:
            self.lasts[-1] = max(self.lasts[-1], last)
        else:
            self.firsts.append(first)
            self.lasts.append(last)

    def merged(self) -> LineRanges:
        """The same lines as sorted, disjoint ranges (a copy only when out of order)."""
        count = len(self.firsts)
        if all(self.lasts[i] + 1 < self.firsts[i + 1] for i in range(count - 1)):
            return self
        return LineRanges(sorted(zip(self.firsts, self.lasts, strict=True)))

    def touches(self, first: int, last: int) -> bool:
        """True when a range meets ``first..last``."""
        # The last range starting at or before ``last`` is the only one that can reach back.
        index = bisect.bisect_right(self.firsts, last) - 1
        return index >= 0 and self.lasts[index] >= first

    def __bool__(self) -> bool:
        return bool(self.firsts)

    def __iter__(self) -> Iterator[Range]:
        return zip(self.firsts, self.lasts, strict=True)

    def __repr__(self) -> str:
        return f"LineRanges({list(self)})"


@dataclass(frozen=True)
class Changes:
    """Changed lines per file.

    Attributes:
        lines: resolved file path -> the 1-based new-side lines the change added or changed,
            and the lines on either side of a deletion (a whole new file is
            :data:`WHOLE_FILE`).
        removed: the text of every deleted line (a rule reading a record whose recording
            rule was deleted is reported although its own lines did not change).
        named: resolved file path -> the path as the diff names it (without its prefix), for
            every file a diff header names on the new side, changed lines or not (a rename, a
            mode change); a deleted file by its old path.
        deleted: resolved paths of the files the change deleted.
        notes: what did not read as a unified diff should (a hunk cut short), one line each.
    """

    lines: Mapping[str, LineRanges]
    removed: str = ""
    named: Mapping[str, str] = field(default_factory=dict)
    deleted: frozenset[str] = frozenset()
    notes: tuple[str, ...] = ()

    def removed_name(self, name: str) -> bool:
        """True when a deleted line held ``name`` (a removed or renamed recording rule)."""
        return (
            re.search(rf"(?<![A-Za-z0-9_:]){re.escape(name)}(?![A-Za-z0-9_:])", self.removed)
            is not None
        )

    def touches(self, path: str, first: int, last: int) -> bool:
        """True when some changed line of ``path`` lies in ``first..last`` (1-based)."""
        ranges = self.lines.get(_key(path))
        return ranges is not None and ranges.touches(first, last)

    def touches_file(self, path: str) -> bool:
        """True when the change touched ``path`` at all."""
        return bool(self.lines.get(_key(path)))

    def names(self, path: str) -> bool:
        """True when a diff header names ``path`` (changed lines or not)."""
        return _key(path) in self.named


def unquote(text: str) -> str:
    """A path as git writes it: ``"b/r\\303\\251 x.yaml"`` (C-quoted: ``\\ooo`` octal bytes and
    ``\\t \\n \\" \\\\`` …) decoded, bytes read as UTF-8 (others kept as surrogate escapes, as
    Python names files); an unquoted path as it is, cut at a tab (GNU diff's timestamp, git's
    mark of a name holding a space). Text after a quoted path's closing quote is dropped.
    """
    if not text.startswith('"'):
        return text.split("\t", 1)[0]
    out = bytearray()
    i = 1
    while i < len(text):
        char = text[i]
        if char == '"':
            break
        if char != "\\" or i + 1 >= len(text):
            out += char.encode("utf-8", "surrogateescape")
            i += 1
            continue
        nxt = text[i + 1]
        octal = re.match(r"[0-7]{1,3}", text[i + 1 : i + 4])
        if octal:
            out.append(int(octal.group(0), 8) & 0xFF)
            i += 1 + len(octal.group(0))
        else:
            out.append(_ESCAPES.get(nxt, ord(nxt) if ord(nxt) < 128 else 63))
            i += 2
    return out.decode("utf-8", "surrogateescape")


def _git_names(rest: str) -> tuple[str, str] | None:
    """The two names of a ``diff --git A B`` line (``rest`` is ``A B``) when they name one
    path: both quoted, or unquoted halves of one length that are equal (no prefixes) or equal
    after their first folder (``a/x b/x``, ``c/x w/x``). None for a rename: its ``rename
    to`` line names the path."""
    if rest.startswith('"'):
        end = _closing_quote(rest)
        if end is None or rest[end + 1 : end + 2] != " ":
            return None
        return unquote(rest[: end + 1]), unquote(rest[end + 2 :])
    middle = len(rest) // 2
    if len(rest) % 2 == 0 or rest[middle] != " ":
        return None
    old, new = rest[:middle], rest[middle + 1 :]
    if old == new or ("/" in old and old.split("/", 1)[1] == new.split("/", 1)[1]):
        return old, new
    return None


def _closing_quote(text: str) -> int | None:
    i = 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i
        i += 1
    return None


def _common_suffix(one: str, two: str) -> str:
    size = 0
    while size < min(len(one), len(two)) and one[-1 - size] == two[-1 - size]:
        size += 1
    return one[len(one) - size :]


def _candidates(old: str | None, new: str) -> list[str]:
    """Repository paths a new-side diff name may stand for, most likely first."""
    found: list[str] = []
    if old is not None and old != new:
        common = _common_suffix(old, new)
        if common.startswith("/"):
            found.append(common[1:])
        elif common:
            found.append(common)
            if "/" in common:
                found.append(common.split("/", 1)[1])
    if old == new:
        found.append(new)
    if new.startswith(GIT_PREFIXES):
        found.append(new[2:])
    found.append(new)
    if "/" in new:
        found.append(new.split("/", 1)[1])
    return [c for i, c in enumerate(found) if c and c not in found[:i]]


Numbered = Iterator[tuple[int, bytes]]


class _Reader:
    """Reads a unified diff line by line (bytes); see :func:`parse_diff`."""

    def __init__(self, root: Path, prefixes: tuple[str, str] | None) -> None:
        self.root = root
        self.prefixes = prefixes
        self.lines: dict[str, LineRanges] = {}
        self.named: dict[str, str] = {}
        self.deleted: set[str] = set()
        self.removed = bytearray()
        self.notes: list[str] = []
        self.old: str | None = None  # the file section's old-side name, as written
        self.old_seen = False
        self.renamed: str | None = None  # the section's "rename to" / "copy to" path
        self.current: LineRanges | None = None
        self.keys: dict[str, str] = {}  # path as named → its key (a header names it twice)

    def path_of(self, name: str, old: str | None) -> str:
        """The repository path of new-side ``name`` (``old``: the old side's name, None for
        a new file), prefixes stripped: exactly ours when obsgen ran git, else the first
        candidate that is a file under the root (:func:`_candidates`)."""
        if self.prefixes is not None:
            return name.removeprefix(self.prefixes[1])
        options = _candidates(old, name)
        return next((c for c in options if (self.root / c).is_file()), options[0])

    def name(self, path: str) -> LineRanges:
        key = self.keys.get(path)
        if key is None:
            if len(self.keys) >= MAX_DIFF_FILES:
                raise TooManyFiles
            key = self.keys[path] = _key(self.root / path)
        self.named.setdefault(key, path)
        return self.lines.setdefault(key, LineRanges())

    def header(self, text: str) -> None:
        """A line outside hunks: a file header, a git extended header, or noise."""
        if text.startswith("diff --git "):
            self.old, self.old_seen, self.renamed, self.current = None, False, None, None
            names = _git_names(text[len("diff --git ") :])
            if names is not None:
                self.old = names[0]
                self.current = self.name(self.path_of(names[1], names[0]))
        elif text.startswith(("rename to ", "copy to ")):
            self.renamed = unquote(text.split(" to ", 1)[1])
            self.current = self.name(self.renamed)
        elif text.startswith("--- "):
            name = unquote(text[4:])
            self.old, self.old_seen = (None if name == "/dev/null" else name), True
        elif text.startswith("+++ "):
            name = unquote(text[4:])
            if name != "/dev/null":
                old = self.old if self.old_seen else name
                self.current = self.name(self.renamed or self.path_of(name, old))
                return
            self.current = None
            if self.old is not None:
                gone = self.path_of(self.old, self.old)
                if self.prefixes is not None:
                    gone = self.old.removeprefix(self.prefixes[0])
                key = _key(self.root / gone)
                self.deleted.add(key)
                self.named.setdefault(key, gone)
                self.lines.pop(key, None)

    def hunk(self, match: re.Match[bytes], at: int, lines: Numbered) -> tuple[int, bytes] | None:
        """Read the lines of the hunk whose header is ``match`` (diff line ``at``) by its
        counts; returns the numbered line that ended it early, to read as a header."""
        old_left = 1 if match.group(2) is None else int(match.group(2))
        new_left = 1 if match.group(4) is None else int(match.group(4))
        new_line = int(match.group(3)) + (1 if new_left == 0 else 0)  # "+N,0": after line N
        marks = self.current if self.current is not None else LineRanges()
        deleting = False  # in a run of deleted lines no added line has replaced yet
        for number, raw in lines:
            if old_left <= 0 and new_left <= 0:
                self._deleted_around(marks, deleting, new_line)
                return number, raw
            kind = raw[:1]
            if kind == b"+" and new_left > 0:
                marks.add(new_line, new_line)
                new_line += 1
                new_left -= 1
                deleting = False
            elif kind == b"-" and old_left > 0:
                self.removed += raw[1:].rstrip(b"\r") + b"\n"
                old_left -= 1
                deleting = True
            elif (kind == b" " or raw in (b"", b"\r")) and old_left > 0 and new_left > 0:
                self._deleted_around(marks, deleting, new_line)
                deleting = False
                new_line += 1
                old_left -= 1
                new_left -= 1
            elif kind != b"\\":  # not "\ No newline at end of file": the hunk ended early
                self._cut_short(at, marks, deleting, new_line, new_left)
                return number, raw
        if old_left > 0 or new_left > 0:
            self._cut_short(at, marks, deleting, new_line, new_left)
        else:
            self._deleted_around(marks, deleting, new_line)
        return None

    @staticmethod
    def _deleted_around(marks: LineRanges, deleting: bool, new_line: int) -> None:
        """After a run of deleted lines that nothing replaced: the lines on both sides."""
        if deleting:
            marks.add(max(1, new_line - 1), new_line)

    def _cut_short(
        self, at: int, marks: LineRanges, deleting: bool, new_line: int, new_left: int
    ) -> None:
        """A hunk whose lines end before its header's counts do: the new-side lines it still
        claims count as changed (one range, however many it claims)."""
        self._deleted_around(marks, deleting, new_line)
        if new_left > 0:
            marks.add(new_line, new_line + new_left - 1)
        self.notes.append(
            f"line {at}: the hunk ends before the lines its header counts ({new_left:,} new "
            "lines missing); they count as changed"
        )


def _numbered(data: bytes | bytearray) -> Numbered:
    """``data``'s lines, split at ``\\n`` only and without it, numbered from 1 (lazily: no
    list of them is made)."""
    for number, raw in enumerate(io.BytesIO(data), 1):
        yield number, raw[:-1] if raw.endswith(b"\n") else raw


def parse_diff(
    data: bytes | bytearray | str, root: Path, prefixes: tuple[str, str] | None = None
) -> Changes:
    """Read a unified diff (``git diff`` in any configuration, ``diff -u``); paths are
    relative to ``root``.

    ``prefixes``: the (old, new) path prefixes when known (obsgen ran git with them); None
    reads them from the diff: an old and a new name differ by their prefixes (``a/ b/``,
    ``c/ w/``, ``i/ w/``, none with ``diff.noprefix``, any ``--dst-prefix``), and a name that
    cannot be compared (a new file) is the first of its readings that is a file under the
    root. Hunk lines are read by the header's counts, so an added line ``++x`` (``+++x`` in
    the diff) is a line, not a file header. A deletion nothing replaces marks the lines on
    both sides of it.

    Raises:
        TooManyFiles: the diff names more than :data:`MAX_DIFF_FILES` files.
    """
    reader = _Reader(root, prefixes)
    raw_data = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    if b"\x1b[" in raw_data:  # saved with colour forced (color.ui=always): escapes, not text
        raw_data = _COLOUR.sub(b"", raw_data)
    lines = _numbered(raw_data)
    pending: tuple[int, bytes] | None = None
    while True:
        item = pending or next(lines, None)
        pending = None
        if item is None:
            break
        number, raw = item
        match = _HUNK.match(raw)
        if match:
            pending = reader.hunk(match, number, lines)
        else:
            reader.header(raw.decode("utf-8", "surrogateescape").rstrip("\r"))
    return Changes(
        {key: found.merged() for key, found in reader.lines.items()},
        reader.removed.decode("utf-8", "surrogateescape"),
        reader.named,
        frozenset(reader.deleted),
        tuple(reader.notes),
    )


def _read_at_most(stream: IO[bytes] | BinaryIO, limit: int) -> bytearray:
    """Up to ``limit + 1`` bytes of ``stream``, read 1 MiB at a time (one ``read(limit)``
    would allocate the whole limit, however short the input)."""
    data = bytearray()
    while len(data) <= limit:
        chunk = stream.read(min(1 << 20, limit + 1 - len(data)))
        if not chunk:
            break
        data += chunk
    return data


def _git(args: Sequence[str], cwd: Path, what: str = "--changed-only") -> bytearray:
    """git's standard output for ``args`` (at most :data:`MAX_DIFF_BYTES`).

    Raises:
        ObsgenError: git is missing, fails, prints more than the limit or runs longer than
            :data:`GIT_TIMEOUT_S` (exit 2).
    """
    with tempfile.TemporaryFile() as errors:
        try:
            proc = subprocess.Popen(
                ["git", *args],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
            )
        except OSError as err:
            raise ObsgenError([Diagnostic(what, "", f"cannot run git: {err}")]) from None
        timed_out = threading.Event()

        def stop() -> None:
            timed_out.set()
            with contextlib.suppress(OSError):
                proc.kill()

        timer = threading.Timer(GIT_TIMEOUT_S, stop)
        timer.start()
        try:
            assert proc.stdout is not None
            out = _read_at_most(proc.stdout, MAX_DIFF_BYTES)
            if len(out) > MAX_DIFF_BYTES:
                proc.kill()
            proc.stdout.close()
            code = proc.wait()
        finally:
            timer.cancel()
        errors.seek(0)
        stderr = errors.read(64 * 1024).decode("utf-8", "replace").strip()
    command = next((a for a in args if not a.startswith("-") and "=" not in a), "")
    if len(out) > MAX_DIFF_BYTES:
        raise ObsgenError(
            [
                Diagnostic(
                    what,
                    "",
                    f"git {command} printed more than {MAX_DIFF_BYTES // (1024 * 1024)} MiB; "
                    "lint fewer paths at once, or pass a smaller --diff",
                )
            ]
        )
    if timed_out.is_set():
        raise ObsgenError(
            [Diagnostic(what, "", f"git {command} did not finish within {GIT_TIMEOUT_S:g} s")]
        )
    if code != 0:
        message = stderr.splitlines()[-1] if stderr else "git failed"
        raise ObsgenError([Diagnostic(what, "", f"git {command}: {message}")])
    return out


def _in_repository(paths: Sequence[str], cwd: Path, root: Path) -> list[str]:
    """``paths`` (relative to ``cwd``) that lie in the repository at ``root``, relative to it."""
    inside = []
    for given in paths:
        for absolute in (Path(os.path.abspath(cwd / given)), (cwd / given).resolve()):
            if absolute.is_relative_to(root):
                inside.append(absolute.relative_to(root).as_posix())
                break
    return inside


def _renamed_into(inside: Sequence[str], base: str, root: Path) -> list[str]:
    """Old paths of the files renamed or copied since ``base`` into ``inside`` (repository
    paths: files or folders), from ``git diff --name-status -z`` (names only: small)."""
    names = ("-c", "diff.relative=false", "diff", "--name-status", "-z", "--no-ext-diff")
    out = _git([*names, "--find-renames", base, "--"], root)
    fields = [os.fsdecode(bytes(f)) for f in out.split(b"\0")]
    sources: list[str] = []
    i = 0
    while i < len(fields) - 1:
        status = fields[i]
        if status[:1] in ("R", "C") and i + 2 < len(fields):
            old, new = fields[i + 1], fields[i + 2]
            if any(
                p in (".", "") or new == p or new.startswith(p.rstrip("/") + "/") for p in inside
            ):
                sources.append(old)
            i += 3
        else:
            i += 2
    return sources


def from_git(base: str, cwd: Path, paths: Sequence[str] = ()) -> Changes:
    """What changed between ``base`` (a commit, branch or tag) and the working tree, new
    untracked files included (every line of them); only under ``paths`` (relative to
    ``cwd``; those outside the repository changed nothing) when given. git runs with
    obsgen's own prefixes and unquoted paths (:data:`GIT_DIFF`), whatever the user's
    configuration says, and lists untracked files NUL-separated (never quoted).

    Raises:
        ObsgenError: git is missing, ``cwd`` is not in a repository, ``base`` is unknown or
            starts with ``-``, or the diff is larger than :data:`MAX_DIFF_BYTES` (exit 2).
    """
    if base.startswith("-"):  # git would read it as an option (diff --output=FILE writes)
        raise ObsgenError(
            [
                Diagnostic(
                    "--base", "", f"{base!r} is not a git ref; expected a commit, branch or tag"
                )
            ]
        )
    top = _git(["rev-parse", "--show-toplevel"], cwd)
    root = Path(os.fsdecode(bytes(top.rstrip(b"\n"))))
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"], root)
    except ObsgenError:
        raise ObsgenError(
            [
                Diagnostic(
                    "--base",
                    "",
                    f"{base!r} names no commit of this repository, so --changed-only has nothing "
                    "to compare with; expected a commit, branch or tag (a shallow CI clone may "
                    "need `git fetch` of it; a repository without commits has no HEAD yet)",
                )
            ]
        ) from None
    spec = ["--"]
    if paths:
        inside = _in_repository(paths, cwd, root)
        if not inside:
            return Changes({})
        spec.extend(inside)
        # A rename pairs only when its old path is diffed too: add the old path of every
        # file renamed (or copied) into the linted paths.
        spec.extend(_renamed_into(inside, base, root))
    # Pathspecs are taken literally: a file named "*.yaml" is not a glob.
    diff = _git(["--literal-pathspecs", *GIT_DIFF, base, *spec], root)
    try:
        changes = parse_diff(diff, root, ("a/", "b/"))
    except TooManyFiles:
        raise ObsgenError(
            [
                Diagnostic(
                    "--changed-only",
                    "",
                    f"git diff names more than {MAX_DIFF_FILES:,} files; lint fewer paths at once",
                )
            ]
        ) from None
    lines = dict(changes.lines)
    named = dict(changes.named)
    others = ["ls-files", "-z", "--others", "--exclude-standard", "--full-name", *spec]
    for raw in _git(["--literal-pathspecs", *others], root).split(b"\0"):
        if not raw:
            continue
        name = os.fsdecode(bytes(raw))
        path = root / name
        if path.is_file():
            lines[_key(path)] = LineRanges([WHOLE_FILE])
            named.setdefault(_key(path), name)
    return Changes(lines, changes.removed, named, changes.deleted, changes.notes)


def read_diff(path: str, cwd: Path) -> Changes:
    """A diff file (``-`` for standard input), its paths relative to ``cwd``; at most
    :data:`MAX_DIFF_BYTES` are read.

    Raises:
        ObsgenError: the file cannot be read or is larger than the limit (exit 2).
    """
    try:
        if path == "-":
            data = _read_at_most(sys.stdin.buffer, MAX_DIFF_BYTES)
        else:
            with open(path, "rb") as handle:
                data = _read_at_most(handle, MAX_DIFF_BYTES)
    except OSError as err:
        raise ObsgenError([Diagnostic(path, "", f"cannot read the diff: {err}")]) from None
    if len(data) > MAX_DIFF_BYTES:
        raise ObsgenError(
            [
                Diagnostic(
                    path,
                    "",
                    f"larger than {MAX_DIFF_BYTES // (1024 * 1024)} MiB; expected a diff of the "
                    "changed rule files (git diff -U0 <base> -- <rule folders>)",
                )
            ]
        )
    try:
        return parse_diff(data, cwd)
    except TooManyFiles:
        raise ObsgenError(
            [
                Diagnostic(
                    path,
                    "",
                    f"names more than {MAX_DIFF_FILES:,} files; expected a diff of the changed "
                    "rule files (git diff -U0 <base> -- <rule folders>)",
                )
            ]
        ) from None


def unmatched(
    changes: Changes, linted: Sequence[tuple[str, str, bool]], source: str
) -> list[Diagnostic]:
    """Warnings where a diff and the linted files miss each other: a linted file named on the
    command line that no diff header names, files found in folders none of which a header
    names, a header naming no file under the root, and the diff's own notes (``source``
    names the diff: the file, or how git was run).

    ``linted``: ``(path, display, named explicitly)`` of every linted file.
    """
    found: list[Diagnostic] = []

    def warn(file: str, message: str) -> None:
        found.append(Diagnostic(file, "", message, Level.WARNING))

    for path, display, explicit in linted:
        if explicit and not changes.names(path):
            warn(
                display,
                f"no header of {source} names this file, so none of its findings is reported "
                "(unchanged, outside the repository, ignored by git, or named otherwise there)",
            )
    in_folders = [path for path, _, explicit in linted if not explicit]
    if in_folders and changes.named and not any(changes.names(p) for p in in_folders):
        names = sorted(changes.named.values())
        shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
        warn(
            source,
            f"names none of the {len(in_folders)} files linted in folders (it names {shown}), "
            "so no finding in them is reported",
        )
    for key, name in sorted(changes.named.items(), key=lambda item: item[1]):
        if key not in changes.deleted and not os.path.isfile(key):
            warn(
                source,
                f"names {name!r}, which is not a file ({key}), so its changes match no linted "
                "file; a diff's paths are read from the working directory, after their prefix",
            )
    for note in changes.notes:
        warn(source, note)
    return found
