"""Which bucket bounds (``le``) or summary quantiles a label matcher selects, by meaning.

How a regex on le is evaluated, for Prometheus 2 and 3: docs/lint.md, "Which bounds a matcher
selects".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2

from generator.lint.names import parse_go_float
from generator.lint.regex import literal_set
from generator.lint.versions import VERSIONS
from generator.promql import le_spellings, prometheus3_le, quote, regex_escape

# Default buckets of the Go client (DefBuckets) and of client_python.
_CLIENT_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
)  # fmt: skip
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf", re.IGNORECASE)


@lru_cache(maxsize=1)
def _standard_bounds() -> frozenset[float]:
    bounds = {float(b) for b in _CLIENT_BUCKETS} | {float("inf")}
    for exponent in range(-4, 8):
        for mantissa in (1, 2, 2.5, 5):
            bounds.add(float(f"{mantissa}e{exponent}"))
    try:
        from generator.presets import PRESETS

        for entries in PRESETS.values():
            for preset in entries:
                for histogram in _preset_histograms(preset):
                    bounds.update(float(b) for b in histogram)
    except (ImportError, AttributeError):  # presets are an optional source of candidates
        pass
    return frozenset(bounds)


def _preset_histograms(preset: Any) -> Iterable[Iterable[float]]:
    for value in vars(preset).values():
        buckets = getattr(value, "buckets", None)
        if isinstance(buckets, tuple | list) and all(isinstance(b, int | float) for b in buckets):
            yield buckets


def spellings(bound: float, version: str) -> frozenset[str]:
    """How ``version`` ("2" or "3") may store ``bound`` as a label value."""
    if bound in (float("inf"), float("-inf")):
        return frozenset({prometheus3_le(bound)})
    if version == "3":
        return frozenset({prometheus3_le(bound)})
    return frozenset(le_spellings(bound))


def matcher_for(bounds: Iterable[float], versions: tuple[str, ...], label: str = "le") -> str:
    """The matcher that selects exactly ``bounds`` in every spelling ``versions`` may store:
    ``le="1.0"`` for one bound on Prometheus 3, else an anchored regex
    (``le=~"^(?:1|1\\.0)$"``, obsgen's own form, docs/contracts.md, rule 1)."""
    wanted = sorted(set(bounds))
    texts = sorted({s for b in wanted for v in versions for s in spellings(b, v)})
    if len(texts) == 1:
        return f"{label}={quote(texts[0])}"
    return f"{label}=~{quote('^(?:' + '|'.join(regex_escape(t) for t in texts) + ')$')}"


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # a bad pattern is promtool's to report, not RE2's to print
    return options


_OPTIONS = _options()


@lru_cache(maxsize=1024)
def _compiled(pattern: str, version: str) -> Any:
    """The anchored RE2 program, or ``None`` when RE2 rejects the pattern."""
    flags = "(?s:" if version == "3" else "(?:"
    try:
        return re2.compile(f"^{flags}{pattern})$", _OPTIONS)
    except re2.error:
        return None


def matches(pattern: str, value: str, version: str) -> bool | None:
    """True when the label regex ``pattern`` accepts ``value`` on ``version``; ``None`` when
    the pattern is not valid RE2 (promtool reports it)."""
    program = _compiled(pattern, version)
    if program is None:
        return None
    return program.search(value) is not None


def written_numbers(pattern: str) -> frozenset[float]:
    """The numbers a regex spells out: every string of its expansion when it is finite
    (``0\\.0(25|5)`` -> 0.025, 0.05), else the numbers in its text (``1.*`` -> 1)."""
    finite = literal_set(pattern, limit=256)
    texts = finite if finite is not None else set(_NUMBER.findall(re.sub(r"\\(.)", r"\1", pattern)))
    found: set[float] = set()
    for text in texts:
        value = parse_go_float(text)
        if value is not None and value == value:
            found.add(value)
    return frozenset(found)


@lru_cache(maxsize=1024)
def candidate_bounds(pattern: str) -> tuple[float, ...]:
    """Bounds worth testing ``pattern`` against (see the module docstring), sorted."""
    bounds = set(_standard_bounds())
    for number in written_numbers(pattern):
        bounds.add(number)
        if number not in (0.0, float("inf"), float("-inf")):
            bounds.update(number * 10.0**shift for shift in range(-3, 4))
    return tuple(sorted(bounds))


@dataclass(frozen=True)
class Selection:
    """What an ``le`` (or ``quantile``) matcher selects.

    Attributes:
        bounds: the bounds it accepts in at least one spelling of a target version, sorted.
        intended: the accepted bounds the matcher spells out (all of them for ``=``);
            a regex accepting others (``1.0`` also matches ``100``) selects more than
            its author wrote.
        missed: ``(bound, version, spelling)`` for each spelling of an intended bound that
            a target version may store but the matcher does not accept.
        regex: True for ``=~`` matchers.
    """

    bounds: tuple[float, ...]
    intended: tuple[float, ...]
    missed: tuple[tuple[float, str, str], ...]
    regex: bool

    @property
    def extra(self) -> tuple[float, ...]:
        """Accepted bounds that the matcher does not spell out."""
        return tuple(b for b in self.bounds if b not in self.intended)


@lru_cache(maxsize=2048)
def select(value: str, regex: bool, versions: tuple[str, ...]) -> Selection | None:
    """Evaluate a positive matcher ``le="value"`` or ``le=~"value"`` for ``versions``.

    Returns ``None`` when nothing can be said: an equality value that is not a number, or a
    regex RE2 rejects.
    """
    if not regex:
        bound = parse_go_float(value)
        if bound is None or bound != bound:
            return None
        unmatched = tuple(
            (bound, version, spelling)
            for version in versions
            for spelling in sorted(spellings(bound, version))
            if spelling != value
        )
        return Selection((bound,), (bound,), unmatched, regex=False)
    if any(_compiled(value, version) is None for version in VERSIONS):
        return None
    written = written_numbers(value)
    accepted: list[float] = []
    missed: list[tuple[float, str, str]] = []
    for bound in candidate_bounds(value):
        # A bound counts as selected when any version's spelling of it matches (`le=~"1"`
        # means bound 1 even on Prometheus 3, where it then matches nothing); only the
        # target versions' spellings must all match.
        hits = {
            (version, spelling): bool(matches(value, spelling, version))
            for version in VERSIONS
            for spelling in sorted(spellings(bound, version))
        }
        if any(hits.values()):
            accepted.append(bound)
            if bound in written:
                missed += [
                    (bound, v, s) for (v, s), hit in hits.items() if not hit and v in versions
                ]
    intended = tuple(b for b in accepted if b in written)
    return Selection(tuple(accepted), intended, tuple(missed), regex=True)


def format_bound(bound: float) -> str:
    """A bound as Prometheus 3 writes it (``1.0``, ``0.5``, ``+Inf``)."""
    return prometheus3_le(bound)
