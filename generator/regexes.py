"""Label-matcher regexes as Prometheus reads them (Go ``regexp``, RE2 syntax, fully anchored).

What is refused, and how examples are drawn: docs/rules.md, "Label-matcher regexes".
"""

from __future__ import annotations

import functools
import random
import re
import warnings
from collections.abc import Sequence

import re2
import rstr

MAX_DRAWS = 200  # rstr draws tried before a pattern counts as having no printable example


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every syntax error to stderr itself
    return options


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> re2._Regexp:
    """The anchored RE2 program of ``pattern``.

    Raises:
        ValueError: not RE2 syntax.
    """
    try:
        re2.compile(pattern, _options())  # the error, if any, about the pattern as written
    except re2.error as err:
        message = err.args[0] if err.args else err
        text = message.decode() if isinstance(message, bytes) else str(message)
        raise ValueError(text) from None
    return re2.compile(f"^(?:{pattern})$", _options())


def fullmatch(pattern: str, text: str) -> bool:
    """Whether ``text`` matches ``pattern`` as a Prometheus ``=~`` matcher does (anchored).

    Raises:
        ValueError: ``pattern`` is not RE2 syntax.
    """
    return _compiled(pattern).search(text) is not None


def _printable(value: str) -> bool:
    return value.isprintable() and value.isascii() and "{{" not in value and "$" not in value


def example(pattern: str, candidates: Sequence[str] = ()) -> str:
    """A printable ASCII value that ``pattern`` matches: the first of ``candidates`` that does,
    else one drawn from the pattern (deterministic for a pattern).

    Raises:
        ValueError: no printable example found, or the pattern is not usable.
    """
    for value in candidates:
        if fullmatch(pattern, value):
            return value
    draw = rstr.Rstr(random.Random(pattern))
    for _ in range(MAX_DRAWS):
        try:
            value = draw.xeger(pattern)
        except (ValueError, re.error, IndexError, OverflowError):
            break  # rstr cannot expand this pattern
        if _printable(value) and fullmatch(pattern, value):
            return value
    raise ValueError(f"no printable example value matches {pattern!r}")


def non_matching(pattern: str, candidates: Sequence[str]) -> str | None:
    """The first of ``candidates`` that ``pattern`` does not match, or None."""
    return next((value for value in candidates if not fullmatch(pattern, value)), None)


def _go_unsupported(pattern: str) -> str | None:
    """A construct RE2 C++ accepts but the Go regexp of Prometheus 2.x does not, or None."""
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            if pattern[i + 1 : i + 2] == "C":
                return "\\C (any byte)"
            i += 2
            continue
        if pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!"):
            return "(?<name>…) (Go before 1.22; write (?P<name>…))"
        i += 1
    return None


def problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be a label-matcher regex of a spec (a phrase that follows the
    pattern: ``is not a valid RE2 …``), or None when it can."""
    try:
        _compiled(pattern)
    except ValueError as err:
        return f"is not a valid RE2 regular expression (the syntax Prometheus uses): {err}"
    unsupported = _go_unsupported(pattern)
    if unsupported:
        return f"uses {unsupported}, which the Go regexp of Prometheus does not support"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "possible nested set": RE2 and Python read it apart
        try:
            re.compile(pattern)
        except (re.error, FutureWarning) as err:
            return (
                f"cannot be read by obsgen's test generator (Python regex syntax: {err}); "
                "write it without this construct"
            )
    try:
        example(pattern)
    except ValueError:
        return "matches no printable ASCII value obsgen can find for its generated tests"
    return None
