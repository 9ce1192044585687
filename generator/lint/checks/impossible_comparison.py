"""``impossible-comparison``: a comparison whose outcome is fixed by what its operand can be."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.registry import Check, Context, Hit

# Functions and aggregations whose value is never negative.
_NON_NEGATIVE = frozenset(
    {"rate", "irate", "increase", "changes", "resets", "absent", "absent_over_time", "time"}
    | {"count_over_time", "present_over_time", "timestamp"}
)
_NON_NEGATIVE_AGGREGATIONS = frozenset({"count", "count_values", "group"})
_FLIPPED = {">": "<", "<": ">", ">=": "<=", "<=": ">=", "==": "==", "!=": "!="}


def _holds(operator: str, value: float, threshold: float) -> bool:
    return {
        ">": value > threshold,
        "<": value < threshold,
        ">=": value >= threshold,
        "<=": value <= threshold,
        "==": value == threshold,
        "!=": value != threshold,
    }[operator]


def _never(operator: str, values: str, threshold: float) -> bool:
    """True when ``x <operator> threshold`` holds for no ``x`` the operand can take."""
    if values == "one":  # absent(): always 1
        return not _holds(operator, 1.0, threshold)
    if values == "positive":  # count(): 1 or more
        return operator in ("<", "==", "<=") and (
            threshold < 1 or (operator == "<" and threshold <= 1)
        )
    # non-negative
    return operator in ("<", "==", "<=") and (threshold < 0 or (operator == "<" and threshold <= 0))


def _operand(node: q.Expr) -> tuple[str, str] | None:
    """``(what the operand is, which values it takes)`` for operands with a known range."""
    node = q.unwrap(node)
    name = q.func_name(node)
    if name in ("absent", "absent_over_time"):
        return f"`{name}()`", "one"
    if name in _NON_NEGATIVE:
        return f"`{name}()`", "non-negative"
    if isinstance(node, P.AggregateExpr) and q.op(node) in _NON_NEGATIVE_AGGREGATIONS:
        return f"`{q.op(node)}()`", "positive"
    return None


_RANGE = {
    "one": "is always 1 when it returns anything",
    "positive": "is at least 1 when it returns anything (of nothing it returns nothing, not 0)",
    "non-negative": "is never negative",
}


def _run(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    for node, _ in q.walk(tree):
        if not q.is_comparison(node):
            continue
        lhs, rhs = q.constant(node.lhs), q.constant(node.rhs)
        operator = str(node.op)
        if lhs is not None and rhs is not None:
            outcome = "always" if _holds(operator, lhs, rhs) else "never"
            yield Hit(f"`{printer.render(node)}` compares two constants: it {outcome} holds")
            continue
        if rhs is not None:
            side, threshold, shown = node.lhs, rhs, operator
        elif lhs is not None:
            side, threshold, shown = node.rhs, lhs, _FLIPPED[operator]
        else:
            continue
        known = _operand(side)
        if known is None or not _never(shown, known[1], threshold):
            continue
        what, values = known
        advice = (
            "; to alert when nothing matches use `absent(…)`, or `(count(…) or vector(0)) == 0`"
            if values == "positive"
            else ""
        )
        yield Hit(
            f"`{what} {shown} {threshold:g}` can never hold: {what} {_RANGE[values]}, so this "
            f"{'alert never fires' if rule.kind == 'alert' else 'rule returns nothing'}{advice}"
        )
    top = q.unwrap(tree)
    if rule.kind == "alert" and q.is_comparison(top) and not q.is_filter(top):
        yield Hit(
            "the alert's comparison has `bool`: it returns 0 or 1 for every series instead of "
            "filtering, so the alert fires for every series all the time; drop `bool`"
        )


CHECK = Check(
    "impossible-comparison",
    Severity.ERROR,
    "alerts",
    "a comparison that can never hold (count() == 0, absent() > 1, rate() < 0) or a bool alert",
    rule_func=_run,
)
