"""Bounds on what ``obsgen lint`` reads: file type and size, YAML shape, PromQL size.

Why each bound exists: docs/lint.md, "Bounded input".
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import yaml

# Largest file read (bytes). The biggest real rule file in the corpus is ~0.2 MiB; a Grafana
# dashboard export rarely exceeds 2 MiB.
MAX_FILE_BYTES = 8 * 1024 * 1024
# Deepest YAML/JSON nesting of collections. Rule files nest ~6 levels, Helm values ~20.
MAX_NESTING = 100
# Most YAML nodes once every alias is expanded (what a consumer walking the data sees).
MAX_NODES = 1_000_000
# Longest YAML integer (characters). Python refuses to convert more than 4,300 digits.
MAX_INT_CHARS = 64
# Longest PromQL expression (characters) and deepest expression tree (see
# :func:`expression_nesting`). The longest expression in the corpus is ~1,500 characters
# and ~40 deep.
MAX_EXPR_CHARS = 32 * 1024
MAX_EXPR_NESTING = 256

_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_INT_TAG = "tag:yaml.org,2002:int"


class Refused(Exception):
    """Input that the linter will not read, with why.

    Attributes:
        line: 1-based line where the problem was seen; 0 for the whole file.
        message: one line, naming the limit and its value.
    """

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_text(path: Path, regular_only: bool) -> str:
    """Read ``path`` as UTF-8, at most :data:`MAX_FILE_BYTES`.

    Args:
        path: the file (symlinks are followed).
        regular_only: refuse anything but a regular file without opening it (files found
            by walking a folder: opening a FIFO there would block forever). A file named
            on the command line may be a pipe (``<(…)``) and is read up to the limit.

    Raises:
        Refused: not a regular file (when ``regular_only``), too large, or not UTF-8.
        OSError: the file cannot be opened or read.
    """
    info = os.stat(path)
    if regular_only and not stat.S_ISREG(info.st_mode):
        raise Refused(f"{_kind(info.st_mode)}, not a regular file: skipped")
    if stat.S_ISREG(info.st_mode) and info.st_size > MAX_FILE_BYTES:
        raise Refused(_too_large(info.st_size))
    with open(path, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise Refused(_too_large(None))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Refused(f"not UTF-8 ({err.reason} at byte {err.start})") from None


def _too_large(size: int | None) -> str:
    what = f"{size} bytes" if size is not None else "more bytes than that"
    return f"file is larger than the {MAX_FILE_BYTES // (1024 * 1024)} MiB limit ({what})"


def _is_int(value: str, resolver: yaml.resolver.Resolver) -> bool:
    tag: str = resolver.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
    return tag == _INT_TAG


def check_yaml(text: str) -> None:
    """Scan the YAML event stream of ``text`` and refuse what would cost unbounded work.

    Reads events only (no tree is built), so it is itself bounded: nesting deeper than
    :data:`MAX_NESTING`, more than :data:`MAX_NODES` nodes once aliases are expanded
    (counted with each anchor's expanded size, without expanding anything), and plain
    integers longer than :data:`MAX_INT_CHARS` characters are refused. Syntax errors are
    left to the real loader, which reports them with their line.

    Raises:
        Refused: with the line of the event that crossed the limit.
    """
    resolver = yaml.resolver.Resolver()
    anchors: dict[str, int] = {}
    # One entry per open collection: its anchor and its expanded node count so far.
    open_anchors: list[str | None] = []
    counts: list[int] = []
    total = 0
    try:
        for event in yaml.parse(text, Loader=_SafeLoader):
            line = event.start_mark.line + 1 if event.start_mark else 0
            if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
                open_anchors.append(event.anchor)
                counts.append(1)
                if len(counts) > MAX_NESTING:
                    raise Refused(f"YAML nests deeper than {MAX_NESTING} levels", line)
                continue
            if isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                anchor, size = open_anchors.pop(), counts.pop()
                if anchor:
                    anchors[anchor] = size
            elif isinstance(event, yaml.ScalarEvent):
                size = 1
                if (
                    len(event.value) > MAX_INT_CHARS
                    and event.implicit[0]
                    and _is_int(event.value, resolver)
                ):
                    raise Refused(
                        f"an integer of {len(event.value)} characters (limit {MAX_INT_CHARS})",
                        line,
                    )
                if event.anchor:
                    anchors[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                size = anchors.get(event.anchor or "", 1)
            else:
                continue
            if counts:
                counts[-1] += size
            else:
                total += size
            if total + sum(counts) > MAX_NODES:
                raise Refused(
                    f"YAML expands to more than {MAX_NODES:,} nodes through aliases "
                    "(an alias bomb?)",
                    line,
                )
    except yaml.YAMLError:
        return  # the loader reports syntax errors with their line


def check_json_nesting(text: str) -> None:
    """Refuse JSON nested deeper than :data:`MAX_NESTING` (Python's decoder recurses).

    Raises:
        Refused: with the line where the limit was crossed.
    """
    depth = 0
    in_string = escaped = False
    line = 1
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_NESTING:
                raise Refused(f"JSON nests deeper than {MAX_NESTING} levels", line)
        elif char in "]}":
            depth -= 1
        elif char == "\n":
            line += 1


_TOKEN = re.compile(
    r"""
    (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<comment>\#[^\n]*)
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
  | (?P<op>==|!=|<=|>=|=~|!~|[-+*/%^<>])
  | (?P<word>[A-Za-z_:][A-Za-z0-9_:.]*)
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_WORD_OPERATORS = frozenset({"and", "or", "unless", "atan2"})


def _tokens(expr: str) -> Iterator[tuple[str, str]]:
    for match in _TOKEN.finditer(expr):
        kind = match.lastgroup or "other"
        yield kind, match.group(kind)


def expression_nesting(expr: str) -> int:
    """An upper bound of the depth of ``expr``'s syntax tree, from its text alone.

    The deepest bracket nesting plus the number of operators outside string literals: each
    binary or unary operator adds at most one level, each bracket pair one more. Computed
    without parsing, so it is safe to run before the parser on any input.
    """
    depth = deepest = operators = 0
    for kind, text in _tokens(expr):
        if kind == "open":
            depth += 1
            deepest = max(deepest, depth)
        elif kind == "close":
            depth = max(depth - 1, 0)
        elif (kind == "op" and text not in ("=~", "!~")) or (
            kind == "word" and text.lower() in _WORD_OPERATORS
        ):
            operators += 1
    return deepest + operators


def check_expression(expr: str) -> None:
    """Refuse a PromQL expression too long or too deeply nested to analyse safely.

    Raises:
        Refused: over :data:`MAX_EXPR_CHARS` characters or :data:`MAX_EXPR_NESTING` levels.
    """
    if len(expr) > MAX_EXPR_CHARS:
        raise Refused(
            f"expression of {len(expr):,} characters is longer than the {MAX_EXPR_CHARS:,} "
            "obsgen lint reads; obsgen checks skipped for this rule"
        )
    nesting = expression_nesting(expr)
    if nesting > MAX_EXPR_NESTING:
        raise Refused(
            f"expression nests up to {nesting} levels (operators and brackets), more than "
            f"the {MAX_EXPR_NESTING} obsgen lint reads; split it with recording rules; "
            "obsgen checks skipped for this rule"
        )
