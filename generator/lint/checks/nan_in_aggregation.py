"""``nan-in-aggregation``: sum/avg/stddev/stdvar over a division whose divisor can be zero.

``0 / 0`` is NaN and ``x / 0`` is ±Inf (``x % 0`` NaN), and one such series makes the whole
sum or average NaN or Inf: an idle replica (no requests: a zero rate) blanks the fleet's
mean latency. A divisor is safe when it is a non-zero constant, filtered away from zero
(``(b > 0)``, ``b != 0``), or clamped away from it (``clamp_min(b, 1e-9)``); a recorded series
is unsafe when a recording rule of the run divides unsafely (pint's ``promql/nan`` reads the
same facts from the PromQL documentation).
"""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import Path, walk_paths
from generator.lint.registry import Context, Hit, rule_check

_AGGREGATIONS = frozenset({"sum", "avg", "stddev", "stdvar"})
# Comparison against a constant c that leaves no zero: `b > c` with c >= 0 …
_EXCLUDES_ZERO = {
    ">": lambda c: c >= 0,
    ">=": lambda c: c > 0,
    "<": lambda c: c <= 0,
    "<=": lambda c: c < 0,
    "!=": lambda c: c == 0,
}
_MIRRORED = {">": "<", "<": ">", ">=": "<=", "<=": ">=", "!=": "!="}


def _never_zero(node: q.Expr) -> bool:
    """True when every value of ``node`` is away from zero."""
    node = q.unwrap(node)
    value = q.constant(node)
    if value is not None:
        return value != 0
    if q.is_filter(node):
        rhs, lhs = q.constant(node.rhs), q.constant(node.lhs)
        operator = q.op(node)
        if rhs is not None and operator in _EXCLUDES_ZERO:
            return bool(_EXCLUDES_ZERO[operator](rhs))
        if lhs is not None and _MIRRORED.get(operator) in _EXCLUDES_ZERO:
            return bool(_EXCLUDES_ZERO[_MIRRORED[operator]](lhs))
        return False
    call = q.as_call(node, "clamp_min", "clamp", "clamp_max", "vector", "time")
    if call is None:
        return False
    func = q.func_name(call)
    bounds = [q.constant(arg) for arg in call.args[1:]]
    if func == "time":
        return True
    if func == "vector":
        return _never_zero(call.args[0])
    if func == "clamp_min":
        return bounds[0] is not None and bounds[0] > 0
    if func == "clamp_max":
        return bounds[0] is not None and bounds[0] < 0
    low, high = [*bounds, None, None][:2]
    return (low is not None and low > 0) or (high is not None and high < 0)


def _divisions(node: q.Expr, path: Path) -> Iterator[tuple[Path, P.BinaryExpr]]:
    """Unsafe ``/`` and ``%`` under ``node``, not inside a nested aggregation (that one is
    judged on its own) nor under a filter of their result (``(a / b) > 0``: a NaN compares
    false and is dropped)."""
    if q.is_filter(node) and q.op(node) != "!=":
        return
    binary = q.as_binary(node, "/", "%")
    if binary is not None and not _never_zero(binary.rhs):
        yield path, binary
    for index, child in enumerate(q.children(node)):
        if not isinstance(child, P.AggregateExpr):
            yield from _divisions(child, (*path, index))


def _records_dividing(name: str, ctx: Context) -> bool:
    """True when a recording rule of the run writing ``name`` (or one it reads, directly or
    through other records) divides by a divisor that can be zero."""
    return name in q.memo("nan-dividing-records", id(ctx), lambda: _dividing_names(ctx))


def _dividing_names(ctx: Context) -> frozenset[str]:
    """Every record name of the run from which a recording rule dividing unsafely can be
    reached through the records it reads (itself included): computed once per run, as a
    graph search over record names, since many rules aggregate the same records (each read
    again through every path would cost exponential time in the depth of the records)."""
    direct: set[str] = set()
    readers: dict[str, set[str]] = {}
    for name in ctx.records:
        for tree in ctx.recorded_trees(name):
            if any(True for _ in _all_divisions(tree)):
                direct.add(name)
            for sub, _ in q.walk(tree):
                inner = q.selector_name(sub)
                if inner and inner != name and inner in ctx.records:
                    readers.setdefault(inner, set()).add(name)
    found = set(direct)
    pending = list(direct)
    while pending:
        for reader in readers.get(pending.pop(), ()):
            if reader not in found:
                found.add(reader)
                pending.append(reader)
    return frozenset(found)


def _all_divisions(tree: q.Expr) -> Iterator[tuple[Path, P.BinaryExpr]]:
    for path, node in walk_paths(tree):
        binary = q.as_binary(node, "/", "%")
        if binary is not None and not _never_zero(binary.rhs):
            yield path, binary


def _selectors(node: q.Expr) -> Iterator[str]:
    if isinstance(node, P.VectorSelector):
        yield q.selector_name(node)
    for child in q.children(node):
        if not isinstance(child, P.AggregateExpr):
            yield from _selectors(child)


@rule_check(
    "nan-in-aggregation",
    Severity.WARNING,
    "slo",
    "sum/avg/stddev/stdvar over a division whose divisor can be 0: one NaN or Inf series "
    "(an idle replica) makes the whole aggregate NaN or Inf",
)
def nan_in_aggregation(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``avg(rate(x_sum[5m]) / rate(x_count[5m]))`` is NaN while one pod has no requests."""
    for path, node in walk_paths(tree):
        if not isinstance(node, P.AggregateExpr) or q.op(node) not in _AGGREGATIONS:
            continue
        found = next(_divisions(node.expr, (*path, 0)), None)
        if found is not None:
            at, division = found
            divisor = printer.render(division.rhs, path=(*at, 1))
            guarded = f"({divisor} > 0)"
            fix = Fix(expr=printer.render(tree, {(*at, 1): guarded}))
            yield Hit(
                f"`{q.op(node)}` adds series of `… {q.op(division)} {divisor}`: where "
                f"`{divisor}` is 0 (a series with no traffic) the series is NaN or Inf and so "
                f"is the whole `{q.op(node)}`; divide only where it is above 0: `{guarded}`, "
                "or aggregate both sides first and divide the aggregates",
                fix=fix,
            )
            continue
        for name in dict.fromkeys(_selectors(node.expr)):
            if name and _records_dividing(name, ctx):
                yield Hit(
                    f"`{q.op(node)}` adds `{name}`, whose recording rule divides by a series "
                    "that can be 0: one NaN or Inf series (no traffic) makes the whole "
                    f"`{q.op(node)}` NaN or Inf; filter the divisor there (`(… > 0)`, "
                    "`clamp_min(…, 1e-9)`) or record the numerator and denominator apart"
                )
                break


CHECK = nan_in_aggregation
