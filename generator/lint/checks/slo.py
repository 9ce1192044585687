"""SLO maths checks: averaged ratios, burn-rate thresholds, multiwindow pairs.

SLO windows must be traffic-weighted: ``sum(bad) / sum(total)`` over the window, never the mean
of 5-minute ratios (DESIGN.md §3 and §6.3). Burn-rate alerts follow the SRE Workbook ch. 5:
``error_ratio[long] > F × (1 − objective) and error_ratio[short] > F × (1 − objective)``, with
``F ≥ 1`` and the short window shorter than the long one.
"""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.names import is_recorded, recorded_ratio, window_of_name
from generator.lint.registry import Context, Hit, rule_check


def _is_ratio(name: str, ctx: Context) -> bool:
    """True for a recorded series that holds a ratio (by name, or its rule divides)."""
    if not is_recorded(name):
        return False
    if recorded_ratio(name):
        return True
    return any(q.op(q.unwrap(tree)) == "/" for tree in ctx.recorded_trees(name))


def _over_time_of(node: q.Expr, func: str) -> str:
    """The selector name inside ``func(<selector>[range])``, else ``""``."""
    call = q.as_call(q.unwrap(node), func)
    if call is not None and call.args and isinstance(call.args[0], P.MatrixSelector):
        return q.selector_name(call.args[0])
    return ""


@rule_check(
    "averaged-ratio",
    Severity.WARNING,
    "slo",
    "avg_over_time of a recorded ratio: a mean of ratios is not traffic-weighted",
)
def averaged_ratio(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``avg_over_time(slo:sli_error:ratio_rate5m[30d])`` weights a quiet night like a peak hour."""
    for node, _ in q.walk(tree):
        name = _over_time_of(node, "avg_over_time")
        division = q.as_binary(node, "/")
        if not name and division is not None:
            summed = _over_time_of(division.lhs, "sum_over_time")
            if summed and summed == _over_time_of(division.rhs, "count_over_time"):
                name = summed
        if name and _is_ratio(name, ctx):
            yield Hit(
                f"averages the ratio `{name}` over time, so every 5m counts the same whatever "
                "its traffic; divide sum_over_time of the recorded bad-event rate by "
                "sum_over_time of the total rate instead"
            )


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


@rule_check(
    "burn-rate-below-budget",
    Severity.WARNING,
    "slo",
    "a burn-rate alert threshold below 1x the error budget",
)
def burn_rate_below_budget(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``error_ratio > 0.5 * (1 - 0.999)`` fires while the SLO is still being met."""
    if rule.kind != "alert":
        return
    for node, _ in q.walk(tree):
        found = _threshold(node)
        if found is None or not _error_series(found[0], ctx):
            continue
        product = _budget_product(node) if q.is_comparison(node) else None
        if product is not None and 0 < product[0] < 1 and 0 < product[1] < 1:
            factor, budget = product
            yield Hit(
                f"burn-rate threshold {factor:g} × budget {budget:g} is below 1× the error "
                "budget: it fires while the SLO is still met; use a factor of at least 1 "
                "(SRE Workbook tiers: 14.4, 6, 3, 1)"
            )


def _windows(node: q.Expr) -> set[float]:
    found: set[float] = set()
    for sub, _ in q.walk(node):
        if isinstance(sub, P.MatrixSelector):
            found.add(q.seconds(sub.range))
        else:
            window = window_of_name(q.selector_name(sub))
            if window is not None:
                found.add(window)
    return found


def _pair_side(node: q.Expr, ctx: Context) -> tuple[float, float] | None:
    """``(window, threshold)`` of one half of a multiwindow condition, else ``None``."""
    for sub, _ in q.walk(node):
        found = _threshold(sub)
        if found is not None and _error_series(found[0], ctx):
            windows = _windows(found[0])
            if len(windows) == 1:
                return windows.pop(), found[1]
    return None


@rule_check(
    "burn-rate-window-mismatch",
    Severity.WARNING,
    "slo",
    "a multiwindow burn-rate pair with equal windows or different thresholds",
)
def burn_rate_window_mismatch(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``ratio_rate1h > 14.4*b and ratio_rate1h > 6*b``: the pair must share a threshold and
    use a short window below the long one."""
    if rule.kind != "alert":
        return
    for node, _ in q.walk(tree):
        pair = q.as_binary(node, "and")
        if pair is None:
            continue
        left, right = _pair_side(pair.lhs, ctx), _pair_side(pair.rhs, ctx)
        if left is None or right is None:
            continue
        (w1, t1), (w2, t2) = left, right
        if w1 == w2:
            yield Hit(
                f"both halves of the multiwindow condition use the {q.fmt_seconds(w1)} window; "
                "the short window (about 1/12 of the long one) is what lets the alert reset"
            )
        elif abs(t1 - t2) > 1e-9 * max(abs(t1), abs(t2)):
            yield Hit(
                f"the {q.fmt_seconds(w1)} and {q.fmt_seconds(w2)} windows compare against "
                f"different thresholds ({t1:g} vs {t2:g}); both windows of a pair use the same "
                "burn-rate factor"
            )
