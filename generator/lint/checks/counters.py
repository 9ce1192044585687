"""Helpers of the counter and gauge checks: what ``rate()`` may be applied to, raw counters.

A counter only goes up (and resets to 0 on restart); ``rate``/``increase``/``irate`` turn it
into a per-second or per-window value. A gauge goes up and down: ``rate`` of it reads every
drop as a counter reset. A recorded series is already the output of a query: ``rate`` of a
sum of counters mistakes one series' restart for a drop of the whole sum.
"""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.printer import Path, walk_paths
from generator.lint.registry import Context


def _rated_selectors(tree: q.Expr) -> Iterator[tuple[Path, P.Call, str]]:
    """``(path, call, metric name)`` of every ``rate/irate/increase(<selector>[range])``."""
    for path, node in walk_paths(tree):
        call = q.as_call(node, *q.RATE_FUNCS)
        if call is not None and call.args and isinstance(call.args[0], P.MatrixSelector):
            yield path, call, q.selector_name(call.args[0])


# The gauge function answering the question each counter function was asked.
_GAUGE_FUNCTION = {"rate": "deriv", "irate": "deriv", "increase": "delta"}


# Aggregations whose value is a number of series, not the series' values.
_SERIES_COUNTS = frozenset({"count", "group", "count_values"})


def _raw_counters(node: q.Expr, path: Path, ctx: Context) -> Iterator[tuple[Path, str]]:
    """Raw counter selectors reaching ``node``'s value without passing through a function."""
    while isinstance(node, P.ParenExpr):
        node, path = node.expr, (*path, 0)
    if isinstance(node, P.VectorSelector):
        name = q.selector_name(node)
        if ctx.names.is_counter(name) and not name.endswith("_created"):
            yield path, name
    elif isinstance(node, P.AggregateExpr | P.UnaryExpr) and q.op(node) not in _SERIES_COUNTS:
        yield from _raw_counters(node.expr, (*path, 0), ctx)
    elif (
        isinstance(node, P.BinaryExpr)
        and str(node.op) in q.ARITHMETIC
        and not q.offset_difference(node)
    ):
        yield from _raw_counters(node.lhs, (*path, 0), ctx)
        yield from _raw_counters(node.rhs, (*path, 1), ctx)


def _gauge_named_count(name: str, tree: q.Expr, ctx: Context) -> bool:
    """True for a ``…_count`` that may be a gauge (``memberlist_client_cluster_members_count``):
    it is a histogram's or summary's count only when its ``_sum`` or ``_bucket`` is read here
    too, or it is a known counter."""
    if not name.endswith("_count") or ctx.names.is_known(name):
        return False
    base = name.removesuffix("_count")
    siblings = {base + "_sum", base + "_bucket"}
    return not any(q.selector_name(n) in siblings for n, _ in q.walk(tree))


def _state_test(node: P.BinaryExpr, ancestors: tuple[q.Expr, ...]) -> bool:
    """True for ``x == 0`` (nothing counted yet), and for ``x > 0`` used as a guard operand of
    ``and``/``unless``/``or`` (the series exists and has counted something)."""
    value = q.constant(node.rhs)
    if value != 0:
        return False
    if str(node.op) == "==":
        return True
    parent = next((a for a in reversed(ancestors) if not isinstance(a, P.ParenExpr)), None)
    return str(node.op) in (">", "!=") and q.op(parent) in q.SET_OPS


def _already(name: str, ctx: Context) -> str:
    """Why rating the recorded series ``name`` is wrong (``""`` when it is not)."""
    trees = ctx.recorded_trees(name)
    if trees:
        for tree in trees:
            for node, _ in q.walk(tree):
                if q.func_name(node) in q.RATE_FUNCS:
                    return "its recording rule already applies rate()/increase()"
        for tree in trees:
            for node, _ in q.walk(tree):
                if q.op(node) in q.MERGING_AGGREGATIONS:
                    return f"its recording rule already aggregates with {q.op(node)}()"
        return ""
    if ctx.names.says_rate(name):
        return "its name says it is already a rate"
    parts = ctx.names.split(name)
    if parts is not None and parts[0]:
        return f"its name says it was aggregated to level `{parts[0]}`"
    return ""


def _rate_first(name: str, window: float, ctx: Context) -> str | None:
    """The recording rule of ``name`` (a sum of raw counters) with each counter rated over
    ``window``: ``sum by (job) (rate(x_total[5m]))``; ``None`` when that is not its shape."""
    trees = ctx.recorded_trees(name)
    if len(trees) != 1:
        return None
    tree = trees[0]
    if any(q.func_name(n) in q.RATE_FUNCS for n, _ in q.walk(tree)):
        return None
    rated: dict[Path, str] = {}
    for at, node in walk_paths(tree):
        if isinstance(node, P.VectorSelector) and ctx.names.is_counter(q.selector_name(node)):
            if isinstance(printer.node_at(tree, at[:-1]) if at else None, P.MatrixSelector):
                return None
            rated[at] = f"rate({printer.render(node, path=at)}[{q.fmt_seconds(window)}])"
    return printer.render(tree, rated) if rated else None
