"""Helpers of the SLO maths checks: averaged ratios, burn-rate thresholds, multiwindow pairs.

SLO windows must be traffic-weighted: ``sum(bad) / sum(total)`` over the window, never the mean
of 5-minute ratios (docs/contracts.md, rule 3). Burn-rate alerts follow the SRE Workbook ch. 5:
``error_ratio[long] > F × (1 − objective) and error_ratio[short] > F × (1 − objective)``, with
``F ≥ 1`` and the short window shorter than the long one.
"""

from __future__ import annotations

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.registry import Context


def _is_ratio(name: str, ctx: Context) -> bool:
    """True for a recorded series that holds a ratio (by name, or its rule divides)."""
    if not ctx.names.is_recorded(name):
        return False
    if ctx.names.says_ratio(name):
        return True
    return any(q.op(q.unwrap(tree)) == "/" for tree in ctx.recorded_trees(name))


def _over_time_of(node: q.Expr, func: str) -> str:
    """The selector name inside ``func(<selector>[range])``, else ``""``."""
    call = q.as_call(q.unwrap(node), func)
    if call is not None and call.args and isinstance(call.args[0], P.MatrixSelector):
        return q.selector_name(call.args[0])
    return ""


def _range_of(node: q.Expr) -> float:
    call = q.unwrap(node)
    for arg in q.children(call):
        if isinstance(arg, P.MatrixSelector):
            return q.seconds(arg.range)
    return 0.0


def _weighted(name: str, window: float, ctx: Context) -> str | None:
    """``sum_over_time(bad[w]) / sum_over_time(all[w])`` when the ratio ``name`` is recorded
    here as a division of two recorded series, else ``None``."""
    trees = ctx.recorded_trees(name)
    if len(trees) != 1 or not window:
        return None
    division = q.as_binary(q.unwrap(trees[0]), "/")
    if division is None:
        return None
    sides = [q.unwrap(division.lhs), q.unwrap(division.rhs)]
    if not all(
        isinstance(side, P.VectorSelector) and ctx.names.is_recorded(q.selector_name(side))
        for side in sides
    ):
        return None
    span = q.fmt_seconds(window)
    bad, total = (printer.render(side) for side in sides)
    return f"sum_over_time({bad}[{span}]) / sum_over_time({total}[{span}])"


def _threshold(node: q.Expr) -> tuple[q.Expr, float] | None:
    """``(compared side, constant)`` of ``x > c`` / ``c < x``, else ``None``."""
    if not q.is_comparison(node) or str(node.op) not in (">", ">=", "<", "<="):
        return None
    rhs = q.constant(node.rhs)
    if rhs is not None and q.constant(node.lhs) is None:
        return node.lhs, rhs
    lhs = q.constant(node.lhs)
    if lhs is not None and rhs is None:
        return node.rhs, lhs
    return None


def _budget_product(node: P.BinaryExpr) -> tuple[float, float] | None:
    """``(factor, budget)`` of a threshold written ``F * B`` with both constant, else ``None``.

    The budget is the operand written ``(1 - objective)``, else the smaller one.
    """
    for side in (node.lhs, node.rhs):
        constant_side = q.as_binary(q.unwrap(side), "*")
        if constant_side is not None and q.constant(side) is not None:
            a, b = q.unwrap(constant_side.lhs), q.unwrap(constant_side.rhs)
            va, vb = q.constant(a), q.constant(b)
            if va is None or vb is None:
                return None
            if q.op(a) == "-":
                return vb, va
            if q.op(b) == "-":
                return va, vb
            return (va, vb) if va >= vb else (vb, va)
    return None


def _error_series(node: q.Expr, ctx: Context) -> bool:
    """True when ``node`` reads an error/burn ratio (recorded ratio or burn-rate name)."""
    for sub, _ in q.walk(node):
        name = q.selector_name(sub)
        if name and (_is_ratio(name, ctx) or "burnrate" in name or "burn_rate" in name):
            return True
    return False


def _windows(node: q.Expr, ctx: Context) -> set[float]:
    found: set[float] = set()
    for sub, _ in q.walk(node):
        if isinstance(sub, P.MatrixSelector):
            found.add(q.seconds(sub.range))
        else:
            window = ctx.names.window(q.selector_name(sub))
            if window is not None:
                found.add(window)
    return found
