"""Helpers of the quantile checks: a quantile cannot be averaged, summed, max-ed or taken over time.

Why, and how a series is known to hold a quantile: docs/lint.md, "Quantile maths".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.histograms import is_bucket
from generator.lint.registry import Context
from generator.promql import LEGACY_METRIC_NAME, selector_text
from generator.promql import by as by_clause

# Aggregations whose value is computed from the values (count, group, topk… are not).
_VALUE_AGGREGATIONS = frozenset({"sum", "avg", "max", "min", "stddev", "stdvar", "quantile"})
# *_over_time functions that compute a statistic of the values over the window.
_OVER_TIME = frozenset(
    {
        "avg_over_time",
        "sum_over_time",
        "max_over_time",
        "min_over_time",
        "quantile_over_time",
        "stddev_over_time",
        "stdvar_over_time",
        "mad_over_time",
    }
)
# Functions that keep a quantile a quantile (same series, scaled or relabelled).
_PRESERVING = frozenset(
    {"label_replace", "label_join", "clamp", "clamp_min", "clamp_max", "round", "abs", "sort"}
)
_NAME_QUANTILE = re.compile(
    r"(?:^|_)(?:p(?P<digits>\d{2,4})|(?P<digits2>\d{2,4})?(?:quantile|percentile))(?:_|$)"
)


@dataclass(frozen=True)
class Quantile:
    """What is known about a series holding a quantile.

    Attributes:
        phi: the quantile (0.99), or ``None`` when unknown.
        bucket: the bucket series it was computed from (``x_bucket``), ``""`` when unknown.
        by: labels its buckets were grouped by (besides ``le``), ``None`` when unknown.
        window: seconds of the rate it was computed over, ``None`` when unknown.
        matchers: matchers of the bucket selector (text), to carry into a fix.
        how: a few words: ``histogram_quantile``, ``a summary quantile``, ``its name``.
    """

    phi: float | None
    bucket: str = ""
    by: tuple[str, ...] | None = None
    window: float | None = None
    matchers: tuple[str, ...] = ()
    how: str = "histogram_quantile"

    def correct_form(self, by: Sequence[str] | None, window: float | None) -> str | None:
        """``histogram_quantile(φ, sum by (le, …) (rate(bucket[w])))`` — the right way to
        get this quantile grouped ``by`` over ``window``; ``None`` when too little is known."""
        window = window or self.window
        if self.phi is None or not self.bucket or window is None:
            return None
        labels = sorted({"le", *(by if by is not None else (self.by or ()))})
        bare = not self.matchers and LEGACY_METRIC_NAME.match(self.bucket)
        selector = self.bucket if bare else selector_text(self.bucket, self.matchers)
        rate = f"rate({selector}[{q.fmt_seconds(window)}])"
        return f"histogram_quantile({self.phi:g}, sum{by_clause(labels)} ({rate}))"


def _from_histogram_quantile(call: P.Call, ctx: Context) -> Quantile:
    phi = q.constant(call.args[0]) if call.args else None
    arg = call.args[1] if len(call.args) > 1 else None
    bucket, window = "", None
    by: tuple[str, ...] | None = None
    matchers: tuple[str, ...] = ()
    if arg is not None:
        for node, _ in q.walk(arg):
            if isinstance(node, P.AggregateExpr) and by is None:
                kind, labels = q.grouping(node)
                if kind == "by":
                    by = tuple(label for label in labels if label != "le")
            if isinstance(node, P.MatrixSelector) and is_bucket(q.selector_name(node), ctx.names):
                bucket = q.selector_name(node)
                window = q.seconds(node.range)
                matchers = tuple(
                    printer.matcher_text(m)
                    for m in q.matchers(node)
                    if m.name not in ("le", "__name__")
                )
    if ctx.names.is_recorded(bucket):
        bucket = ""  # a recorded bucket rate: its raw source is not known here
    return Quantile(phi, bucket, by, window, matchers)


def _from_name(name: str, ctx: Context) -> Quantile | None:
    parts = ctx.names.split(name)
    if parts is None:
        return None
    level, metric, ops = parts
    match = _NAME_QUANTILE.search(ops)
    if match is None:
        return None
    digits = match.group("digits") or match.group("digits2")
    phi = float("0." + digits) if digits else None
    by = tuple(label for label in level.split("_") if label) if level else ()
    window = ctx.names.window(name)
    bucket = metric if metric.endswith("_bucket") else f"{metric}_bucket"
    return Quantile(phi, bucket, by, window, how="its name")


def quantile_of(node: q.Expr, ctx: Context, seen: frozenset[str] = frozenset()) -> Quantile | None:
    """What is known when ``node``'s value is a quantile, else ``None``."""
    node = q.unwrap(node)
    if isinstance(node, P.Call):
        name = q.func_name(node)
        if name == "histogram_quantile":
            return _from_histogram_quantile(node, ctx)
        if name == "quantile_over_time":
            return Quantile(q.constant(node.args[0]), how="quantile_over_time")
        if name in _PRESERVING and node.args:
            return quantile_of(node.args[0], ctx, seen)
        return None
    if isinstance(node, P.AggregateExpr) and q.op(node) == "quantile":
        return Quantile(q.constant(node.param) if node.param else None, how="quantile()")
    if isinstance(node, P.BinaryExpr):
        if str(node.op) in ("*", "/") and q.constant(node.rhs) is not None:
            return quantile_of(node.lhs, ctx, seen)
        if str(node.op) == "*" and q.constant(node.lhs) is not None:
            return quantile_of(node.rhs, ctx, seen)
        if q.is_filter(node) and q.constant(node.rhs) is not None:
            return quantile_of(node.lhs, ctx, seen)
        return None
    if isinstance(node, P.VectorSelector):
        return _selector_quantile(node, ctx, seen)
    return None


def _selector_quantile(
    node: P.VectorSelector, ctx: Context, seen: frozenset[str]
) -> Quantile | None:
    name = q.selector_name(node)
    if not name:
        return None
    if not ctx.names.is_recorded(name):
        if any(m.name == "quantile" and m.op == P.MatchOp.Equal for m in q.matchers(node)):
            value = next(str(m.value) for m in q.matchers(node) if m.name == "quantile")
            try:
                phi: float | None = float(value)
            except ValueError:
                phi = None
            return Quantile(phi, how="a summary quantile")
        return None
    trees = ctx.recorded_trees(name) if name not in seen else []
    for tree in trees:
        found = quantile_of(tree, ctx, seen | {name})
        if found is not None:
            return replace(found, how=f"its recording rule ({found.how})")
    if trees:
        return None  # recorded here, and not a quantile
    return _from_name(name, ctx)


def _phi_name(found: Quantile) -> str:
    """``p99`` for 0.99, ``quantile`` when unknown."""
    return "quantile" if found.phi is None else f"p{found.phi * 100:g}"


def _phi_words(found: Quantile) -> str:
    return f"a {_phi_name(found)}"


def _matrix_arg(call: P.Call) -> P.MatrixSelector | P.SubqueryExpr | None:
    for arg in call.args:
        if isinstance(arg, P.MatrixSelector | P.SubqueryExpr):
            return arg
    return None


def _inner(arg: P.MatrixSelector | P.SubqueryExpr) -> q.Expr:
    return arg.vector_selector if isinstance(arg, P.MatrixSelector) else arg.expr


def _grouped_away(node: P.AggregateExpr, found: Quantile) -> bool:
    """True unless the aggregation keeps every label the quantile was grouped by (then each
    of its groups holds one quantile series, and nothing is merged)."""
    kind, labels = q.grouping(node)
    if kind == "by" and found.by is not None:
        return not set(found.by) <= set(labels)
    return True


def _inside_histogram_quantile(tree: q.Expr, path: printer.Path) -> bool:
    node = tree
    for index in path:
        if q.func_name(node) == "histogram_quantile":
            return True
        node = q.children(node)[index]
    return False


def _requested_grouping(arg: q.Expr) -> tuple[str, ...] | None:
    """The labels (besides ``le``) the histogram_quantile input is grouped by, if it says."""
    for node, _ in q.walk(arg):
        if isinstance(node, P.AggregateExpr):
            kind, labels = q.grouping(node)
            return tuple(label for label in labels if label != "le") if kind == "by" else None
    return None


def _extreme_of_extremes(node: P.AggregateExpr, found: Quantile) -> bool:
    """``max`` of maxima (quantile 1) and ``min`` of minima (quantile 0) are exact."""
    return (q.op(node), found.phi) in (("max", 1.0), ("min", 0.0))


def _le_dropped_by_record(name: str, ctx: Context) -> str:
    """The aggregation of ``name``'s recording rule that drops ``le`` from bucket series."""
    for tree in ctx.recorded_trees(name):
        for node, _ in q.walk(tree):
            if (
                isinstance(node, P.AggregateExpr)
                and not q.keeps_label(node, "le")
                and any(is_bucket(q.selector_name(n), ctx.names) for n, _ in q.walk(node))
            ):
                kind, labels = q.grouping(node)
                return f"{q.op(node)}{f' {kind} ({chr(44).join(labels)})' if kind else ''}"
    return ""
