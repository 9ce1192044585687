"""Helpers of the alert checks (each check is its own module of this package)."""

from __future__ import annotations

import re

import promql_parser as P

from generator.lint import promql as q
from generator.lint.model import Rule
from generator.lint.registry import Context

_VALUE_IN_TEMPLATE = re.compile(r"\$value\b|\.Value\b|\{\{[^}]*\bquery\b")
# Windows up to this long (seconds) are "short": one noisy evaluation can cross the threshold.
SHORT_WINDOW = 300.0
SUGGESTED_FOR = "5m"
_ABSENT = frozenset({"absent", "absent_over_time"})
# Series that move steadily with the clock (ages, TTLs, expiry times): no noise to debounce.
_CLOCK_NAME = re.compile(
    r"_timestamp(?:_seconds)?$|_start_time(?:_seconds)?$|_ttl_seconds$|expiration|expiry"
)


def _clock_like(tree: q.Expr) -> bool:
    """True when the expression reads ``time()`` or a timestamp/TTL series."""
    return any(
        q.func_name(n) == "time" or _CLOCK_NAME.search(q.selector_name(n)) is not None
        for n, _ in q.walk(tree)
    )


def _has_for(rule: Rule) -> bool:
    if rule.for_ is None:
        return False
    try:
        return q.parse_duration(rule.for_) > 0
    except ValueError:
        return True  # promtool reports a bad duration


def _filters_in_records(tree: q.Expr, ctx: Context) -> bool:
    """True when a recorded series the alert reads was itself filtered by a comparison."""
    for node, _ in q.walk(tree):
        name = q.selector_name(node)
        if name and any(
            q.is_filter(sub) for recorded in ctx.recorded_trees(name) for sub, _ in q.walk(recorded)
        ):
            return True
    return False


def _constant_vector(tree: q.Expr) -> bool:
    node = q.unwrap(tree)
    return q.func_name(node) == "vector" or isinstance(node, P.NumberLiteral)


def _window_span(tree: q.Expr, ctx: Context) -> float | None:
    """Longest window the expression reads (ranges and recorded-name windows), else ``None``."""
    windows = [q.seconds(n.range) for n, _ in q.walk(tree) if isinstance(n, P.MatrixSelector)]
    windows += [q.seconds(n.range) for n, _ in q.walk(tree) if isinstance(n, P.SubqueryExpr)]
    for node, _ in q.walk(tree):
        window = ctx.names.window(q.selector_name(node))
        if window is not None:
            windows.append(window)
    return max(windows) if windows else None


def _is_event_check(node: P.BinaryExpr) -> bool:
    """``x > 0``, ``x >= 1``, ``x == 1``, ``x != 0``: a state or event test, not a threshold."""
    for side in (node.rhs, node.lhs):
        value = q.constant(side)
        if value is not None:
            return value in (0.0, 1.0)
    return False
