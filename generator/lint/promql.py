"""PromQL trees: parsing (PyPI ``promql-parser``, a binding of GreptimeTeam's Rust parser) and
small helpers to walk and read them.

The parser gives typed nodes (``AggregateExpr``, ``BinaryExpr``, ``Call``, ``MatrixSelector``,
``VectorSelector``, ``SubqueryExpr``, ``ParenExpr``, ``UnaryExpr``, literals). Node objects are
rebuilt on every attribute access, so helpers pass ancestors along instead of comparing nodes
by identity.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from functools import lru_cache
from typing import TypeGuard, TypeVar, cast

import promql_parser as P

Expr = P.Expr

# Prometheus 2's name of double_exponential_smoothing, unknown to the parser (which follows
# Prometheus 3); registered so rules written for Prometheus 2 are still checked.
P.register_extra_functions(
    [
        P.Function(
            "holt_winters",
            [P.ValueType.Matrix, P.ValueType.Scalar, P.ValueType.Scalar],
            P.ValueType.Vector,
        )
    ]
)

COMPARISONS = frozenset({"==", "!=", ">", "<", ">=", "<="})
SET_OPS = frozenset({"and", "or", "unless"})
ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "^", "atan2"})
RATE_FUNCS = frozenset({"rate", "irate", "increase"})
# Functions whose range argument needs several samples to give any result.
SAMPLE_HUNGRY_FUNCS = RATE_FUNCS | {
    "delta",
    "idelta",
    "deriv",
    "predict_linear",
    "changes",
    "resets",
}
# Aggregations that merge series (drop labels); topk/bottomk/limitk keep them.
MERGING_AGGREGATIONS = frozenset(
    {"sum", "avg", "min", "max", "count", "group", "stddev", "stdvar", "quantile", "count_values"}
)


@lru_cache(maxsize=4096)
def parse(expr: str) -> Expr:
    """Parse one PromQL expression.

    Raises:
        ValueError: the parser rejects it (the message is the parser's).
    """
    try:
        return P.parse(expr)
    except ValueError:
        raise
    except Exception as err:  # the binding may raise other types on odd input
        raise ValueError(str(err)) from err


def children(node: Expr) -> list[Expr]:
    """Direct sub-expressions of ``node`` (string arguments included)."""
    if isinstance(node, P.AggregateExpr):
        out = [node.expr]
        if isinstance(node.param, P.Expr):
            out.append(node.param)
        return out
    if isinstance(node, P.BinaryExpr):
        return [node.lhs, node.rhs]
    if isinstance(node, P.ParenExpr | P.UnaryExpr | P.SubqueryExpr):
        return [node.expr]
    if isinstance(node, P.Call):
        return [arg for arg in node.args if isinstance(arg, P.Expr)]
    if isinstance(node, P.MatrixSelector):
        return [node.vector_selector]
    return []


Walked = tuple[tuple[Expr, tuple[Expr, ...]], ...]
T = TypeVar("T")
# One memo per lint run in progress (innermost last), keyed by (what, tree object or other
# key): the dict holds the tree, so entries stay valid for the run and go with it.
_RUNS: list[dict[tuple[str, Hashable], object]] = []


@contextmanager
def run_scope() -> Iterator[None]:
    """Within the block, :func:`memo` keeps what it computes (the engine opens one per lint
    run: the checks walk the same rule trees many times); outside, nothing is kept."""
    _RUNS.append({})
    try:
        yield
    finally:
        _RUNS.pop()


def memo(what: str, node: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, remembered for ``(what, node)`` while the current run lasts (``node``:
    a tree, or any key that stays valid for the run)."""
    if not _RUNS:
        return compute()
    run = _RUNS[-1]
    key = (what, node)
    if key not in run:
        run[key] = compute()
    return cast(T, run[key])


def _walk(
    node: Expr, ancestors: tuple[Expr, ...], out: list[tuple[Expr, tuple[Expr, ...]]]
) -> None:
    out.append((node, ancestors))
    below = (*ancestors, node)
    for child in children(node):
        _walk(child, below, out)


def _walked(node: Expr) -> Walked:
    out: list[tuple[Expr, tuple[Expr, ...]]] = []
    _walk(node, (), out)
    return tuple(out)


def walk(node: Expr) -> Walked:
    """Every node of the tree under ``node`` as ``(node, ancestors)``, depth first.

    ``ancestors`` runs from ``node`` down to the parent. Remembered for the run
    (:func:`memo`).
    """
    return memo("walk", node, lambda: _walked(node))


def unwrap(node: Expr) -> Expr:
    """``node`` without surrounding parentheses."""
    while isinstance(node, P.ParenExpr):
        node = node.expr
    return node


def op(node: Expr | None) -> str:
    """The operator of an aggregation or binary expression (``"sum"``, ``">"``), else ``""``."""
    if isinstance(node, P.AggregateExpr | P.BinaryExpr):
        return str(node.op)
    return ""


def func_name(node: Expr) -> str:
    """The function name of a call, else ``""``."""
    return node.func.name if isinstance(node, P.Call) else ""


def as_call(node: Expr, *names: str) -> P.Call | None:
    """``node`` as a function call (named one of ``names`` when given), else ``None``."""
    if isinstance(node, P.Call) and (not names or node.func.name in names):
        return node
    return None


def as_binary(node: Expr | None, *ops: str) -> P.BinaryExpr | None:
    """``node`` as a binary expression (with one of ``ops`` when given), else ``None``."""
    if isinstance(node, P.BinaryExpr) and (not ops or str(node.op) in ops):
        return node
    return None


def is_comparison(node: Expr) -> TypeGuard[P.BinaryExpr]:
    """True for ``a > b`` and the other comparison operators (with or without ``bool``)."""
    return isinstance(node, P.BinaryExpr) and str(node.op) in COMPARISONS


def is_filter(node: Expr) -> TypeGuard[P.BinaryExpr]:
    """True for a comparison that filters series (no ``bool`` modifier)."""
    return is_comparison(node) and not (node.modifier is not None and node.modifier.return_bool)


def offset_difference(node: Expr) -> bool:
    """``x - x offset 1m`` (or ``x - last_over_time(x[1h] offset 1m)``, the last sample before
    then across a hole: :func:`generator.promql.increments`): a selector minus itself at an
    earlier time, i.e. the counter's increase since (exact, no extrapolation), not its raw
    value."""
    node = unwrap(node)
    if not isinstance(node, P.BinaryExpr) or str(node.op) != "-":
        return False
    lhs, rhs = unwrap(node.lhs), unwrap(node.rhs)
    if (
        isinstance(rhs, P.Call)
        and rhs.func.name == "last_over_time"
        and len(rhs.args) == 1
        and isinstance(rhs.args[0], P.MatrixSelector)
    ):
        rhs = rhs.args[0].vector_selector
    return (
        isinstance(lhs, P.VectorSelector)
        and isinstance(rhs, P.VectorSelector)
        and str(lhs.name) == str(rhs.name)
        and str(lhs.matchers) == str(rhs.matchers)
        and lhs.offset != rhs.offset
    )


def exact_increase(node: Expr) -> bool:
    """``(x - x offset d) >= 0 or (x and x offset d)``: a counter's reset-aware increase over
    ``d`` (:func:`generator.promql.sum_increments`): the offset difference where the counter
    did not drop, its new value where it did; optionally ``or (x and on (…) (up offset d ==
    1))``, its value where the series was born since while its target was up."""
    node = unwrap(node)
    if not isinstance(node, P.BinaryExpr) or str(node.op) != "or":
        return False
    kept, reset = unwrap(node.lhs), unwrap(node.rhs)
    if exact_increase(kept) and isinstance(kept, P.BinaryExpr):
        compared = unwrap(kept.lhs)
        diff = unwrap(compared.lhs) if isinstance(compared, P.BinaryExpr) else compared
        if not isinstance(diff, P.BinaryExpr) or not isinstance(reset, P.BinaryExpr):
            return False
        guard = unwrap(reset.rhs)
        up = unwrap(guard.lhs) if isinstance(guard, P.BinaryExpr) else guard
        return (
            str(reset.op) == "and"
            and str(unwrap(reset.lhs)) == str(unwrap(diff.lhs))
            and selector_name(up) == "up"
        )
    if not is_comparison(kept) or not offset_difference(kept.lhs):
        return False
    diff = unwrap(kept.lhs)
    return (
        isinstance(diff, P.BinaryExpr)
        and isinstance(reset, P.BinaryExpr)
        and str(reset.op) == "and"
        and str(unwrap(reset.lhs)) == str(unwrap(diff.lhs))
        and str(unwrap(reset.rhs)) == str(unwrap(diff.rhs))
    )


def selector_name(node: Expr) -> str:
    """Metric name of a vector or matrix selector (also from ``{__name__="x"}``), else ``""``."""
    if isinstance(node, P.MatrixSelector):
        node = node.vector_selector
    if not isinstance(node, P.VectorSelector):
        return ""
    if node.name:
        return str(node.name)
    for matcher in node.matchers.matchers:
        if matcher.name == "__name__" and matcher.op == P.MatchOp.Equal:
            return str(matcher.value)
    return ""


def matchers(node: Expr) -> list[P.Matcher]:
    """Label matchers of a vector or matrix selector (``or`` alternatives included)."""
    if isinstance(node, P.MatrixSelector):
        node = node.vector_selector
    if not isinstance(node, P.VectorSelector):
        return []
    found = list(node.matchers.matchers)
    for alternative in node.matchers.or_matchers:
        found.extend(alternative)
    return found


def is_regex(matcher: P.Matcher) -> bool:
    """True for ``=~`` and ``!~`` matchers."""
    return matcher.op in (P.MatchOp.Re, P.MatchOp.NotRe)


def grouping(node: Expr) -> tuple[str, tuple[str, ...]]:
    """``("by"|"without"|"", labels)`` of an aggregation."""
    if not isinstance(node, P.AggregateExpr) or node.modifier is None:
        return "", ()
    kind = "by" if node.modifier.type == P.AggModifierType.By else "without"
    return kind, tuple(node.modifier.labels)


def keeps_label(node: Expr, label: str) -> bool:
    """True when the aggregation ``node`` keeps ``label`` in its output series."""
    if op(node) not in MERGING_AGGREGATIONS:
        return True
    kind, labels = grouping(node)
    if kind == "by":
        return label in labels
    if kind == "without":
        return label not in labels
    return False


def seconds(delta: timedelta | None) -> float:
    """A parser duration in seconds (0 for ``None``)."""
    return 0.0 if delta is None else delta.total_seconds()


def constant(node: Expr) -> float | None:
    """The value of a constant scalar expression (``14.4 * (1 - 0.999)``), else ``None``."""
    node = unwrap(node)
    if isinstance(node, P.NumberLiteral):
        return float(node.val)
    if isinstance(node, P.UnaryExpr):
        inner = constant(node.expr)
        return None if inner is None else -inner
    if isinstance(node, P.BinaryExpr) and str(node.op) in ARITHMETIC:
        lhs, rhs = constant(node.lhs), constant(node.rhs)
        if lhs is None or rhs is None:
            return None
        try:
            return _arith(str(node.op), lhs, rhs)
        except (ZeroDivisionError, OverflowError, ValueError):
            return None
    return None


def _arith(operator: str, lhs: float, rhs: float) -> float | None:
    if operator == "+":
        return lhs + rhs
    if operator == "-":
        return lhs - rhs
    if operator == "*":
        return lhs * rhs
    if operator == "/":
        return lhs / rhs
    if operator == "^":
        return float(lhs**rhs)
    return None


def fmt_seconds(value: float) -> str:
    """Seconds as a Prometheus duration (``300`` -> ``"5m"``)."""
    return str(P.display_duration(timedelta(seconds=value)))


_DURATION = re.compile(
    r"^(?:(?P<y>\d+)y)?(?:(?P<w>\d+)w)?(?:(?P<d>\d+)d)?(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?"
    r"(?:(?P<s>\d+)s)?(?:(?P<ms>\d+)ms)?$"
)
_UNIT_SECONDS = {"y": 31536000, "w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1, "ms": 0.001}


def parse_duration(text: str) -> float:
    """A Prometheus duration (``"1h30m"``, ``"0m"``, ``"0"``) in seconds (``model.ParseDuration``).

    Raises:
        ValueError: ``text`` is not a duration.
    """
    text = text.strip()
    if text == "0":
        return 0.0
    match = _DURATION.match(text)
    if not text or match is None:
        raise ValueError(f"{text!r} is not a duration (e.g. 30s, 5m, 1h)")
    return float(sum(int(v) * _UNIT_SECONDS[k] for k, v in match.groupdict().items() if v))
