"""Counter and gauge checks: what ``rate()`` may be applied to, and raw counters in comparisons.

A counter only goes up (and resets to 0 on restart); ``rate``/``increase``/``irate`` turn it
into a per-second or per-window value. A gauge goes up and down: ``rate`` of it reads every
drop as a counter reset. A recorded series is already the output of a query: ``rate`` of a
sum of counters mistakes one series' restart for a drop of the whole sum.
"""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.names import is_recorded, recorded_rate, split_recorded
from generator.lint.registry import Context, Hit, rule_check


def _rated_selectors(tree: q.Expr) -> Iterator[tuple[str, str]]:
    """``(function, metric name)`` of every ``rate/irate/increase(<selector>[range])``."""
    for node, _ in q.walk(tree):
        call = q.as_call(node, *q.RATE_FUNCS)
        if call is not None and call.args and isinstance(call.args[0], P.MatrixSelector):
            yield call.func.name, q.selector_name(call.args[0])


@rule_check(
    "rate-on-gauge",
    Severity.WARNING,
    "counters",
    "rate()/increase()/irate() of a name that looks like a gauge",
)
def rate_on_gauge(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``rate(queue_depth[5m])``: drops of a gauge are read as counter resets."""
    for func, name in _rated_selectors(tree):
        if name and not is_recorded(name) and not ctx.counters.is_counter(name):
            yield Hit(
                f"{func}({name}[…]): `{name}` looks like a gauge (no _total/_count/_sum/_bucket "
                "suffix); use deriv() or delta() for gauges, or list it under `counters:` in "
                ".obsgen-lint.yaml if it is a counter"
            )


# Aggregations whose value is a number of series, not the series' values.
_SERIES_COUNTS = frozenset({"count", "group", "count_values"})


def _raw_counters(node: q.Expr, ctx: Context) -> Iterator[str]:
    """Raw counter names reaching ``node``'s value without passing through a function."""
    node = q.unwrap(node)
    if isinstance(node, P.VectorSelector):
        name = q.selector_name(node)
        if ctx.counters.is_counter(name) and not name.endswith("_created"):
            yield name
    elif isinstance(node, P.AggregateExpr | P.UnaryExpr) and q.op(node) not in _SERIES_COUNTS:
        yield from _raw_counters(node.expr, ctx)
    elif isinstance(node, P.BinaryExpr) and str(node.op) in q.ARITHMETIC:
        yield from _raw_counters(node.lhs, ctx)
        yield from _raw_counters(node.rhs, ctx)


@rule_check(
    "counter-compared-raw",
    Severity.WARNING,
    "counters",
    "a counter compared to a threshold without rate()/increase()",
)
def counter_compared_raw(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``errors_total > 5`` holds forever after the fifth error since the process started."""
    seen: set[str] = set()
    for node, ancestors in q.walk(tree):
        if not q.is_comparison(node) or _state_test(node, ancestors):
            continue
        for side in (node.lhs, node.rhs):
            for name in _raw_counters(side, ctx):
                if name not in seen:
                    seen.add(name)
                    yield Hit(
                        f"counter `{name}` is compared raw (`{q.op(node)}`): its value counts "
                        f"since the process started; compare increase({name}[…]) or "
                        f"rate({name}[…]) instead"
                    )


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
    if recorded_rate(name):
        return "its name says it is already a rate"
    parts = split_recorded(name)
    if parts is not None and parts[0]:
        return f"its name says it was aggregated to level `{parts[0]}`"
    return ""


@rule_check(
    "rate-over-aggregated",
    Severity.WARNING,
    "counters",
    "rate() over a recorded series that is already aggregated or already a rate",
)
def rate_over_aggregated(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``rate(job:requests_total:sum[5m])``: sum first, rate second hides counter resets."""
    for func, name in _rated_selectors(tree):
        if not is_recorded(name):
            continue
        why = _already(name, ctx)
        if why:
            yield Hit(
                f"{func}({name}[…]): {why}; record sum(rate(<counter>[…])) and use the "
                "recorded rate directly (rate first, then sum)"
            )
