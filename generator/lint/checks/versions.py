"""Helpers of the checks for what the target Prometheus version does not accept or changes.

The target is ``--prometheus-version`` / ``prometheusVersion`` (default: both 2 and 3, i.e.
what works on either). Facts are in :mod:`generator.lint.versions`.
"""

from __future__ import annotations

import re

import promql_parser as P

from generator.lint import promql as q
from generator.lint.registry import Context

EXPERIMENTAL_FLAG = "promql-experimental-functions"
# Functions that return nothing from fewer than two samples.
_TWO_SAMPLES = frozenset(
    {"rate", "irate", "increase", "delta", "idelta", "deriv", "predict_linear"}
)


def _function(node: q.Expr) -> str:
    """The function or aggregation name of ``node`` (``""`` for anything else)."""
    if isinstance(node, P.Call):
        return q.func_name(node)
    if isinstance(node, P.AggregateExpr):
        return q.op(node)
    return ""


_NEWLINE_AWARE = re.compile(r"\\n|\\r|[\n\r]|\(\?-?[a-zA-Z]*s")


def _dots_outside_classes(pattern: str) -> list[int]:
    """Positions of unescaped ``.`` outside character classes (``[...]``)."""
    found: list[int] = []
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            if pattern.startswith("[^]", index) or pattern.startswith("[]", index):
                index += 2 if pattern[index + 1] == "]" else 3
                continue
        elif char == ".":
            found.append(index)
        index += 1
    return found


def single_line_dots(pattern: str) -> str:
    """``pattern`` with every ``.`` outside classes written ``[^\\n]``: the Prometheus 2
    meaning of ``.``, now spelled the same on both versions."""
    positions = set(_dots_outside_classes(pattern))
    return "".join("[^\\n]" if i in positions else c for i, c in enumerate(pattern))


def _recorded_interval(name: str, ctx: Context) -> float | None:
    """Seconds between samples of the recorded series ``name``: its group's ``interval``,
    else the default evaluation interval (taken as the scrape interval)."""
    rules = ctx.records.get(name)
    if not rules:
        return None
    intervals = set()
    for rule, _ in rules:
        try:
            written = rule.group_interval
            intervals.add(q.parse_duration(written) if written else ctx.config.scrape_interval)
        except ValueError:
            return None
    return max(intervals)
