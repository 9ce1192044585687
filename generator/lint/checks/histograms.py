"""Histogram checks: ``le`` kept through aggregation, rated buckets, ``le`` spellings.

Background: a classic histogram is a set of cumulative ``*_bucket`` counters, one per upper
bound ``le``. ``histogram_quantile`` needs the per-``le`` rates (``sum by (le, …) (rate(…))``);
Prometheus 3 stores bounds as Go floats (``le="1.0"``, DESIGN.md §6.1).
"""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.names import is_recorded, parse_go_float, split_recorded
from generator.lint.regex import literal_set
from generator.lint.registry import Context, Hit, rule_check
from generator.promql import prometheus3_le

# Aggregations whose value is wrong when buckets of different bounds are merged.
_VALUE_AGGREGATIONS = frozenset({"sum", "avg", "min", "max", "stddev", "stdvar", "quantile"})


def is_bucket(name: str) -> bool:
    """True for a classic-histogram bucket series: ``x_bucket`` or recorded ``job:x_bucket:…``."""
    if not is_recorded(name):
        return name.endswith("_bucket")
    parts = split_recorded(name)
    return parts is not None and parts[1].endswith("_bucket")


def _has_bucket(node: q.Expr) -> bool:
    return any(is_bucket(q.selector_name(n)) for n, _ in q.walk(node))


def _quantile_args(tree: q.Expr) -> Iterator[q.Expr]:
    for node, _ in q.walk(tree):
        call = q.as_call(node, "histogram_quantile")
        if call is not None and len(call.args) == 2:
            yield call.args[1]


def _agg_text(node: q.Expr) -> str:
    kind, labels = q.grouping(node)
    return f"{q.op(node)} {kind} ({', '.join(labels)})" if kind else q.op(node)


@rule_check(
    "histogram-quantile-without-le",
    Severity.ERROR,
    "histograms",
    "histogram_quantile over an aggregation that drops `le` returns nothing",
)
def quantile_without_le(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``histogram_quantile(0.99, sum by (job) (rate(x_bucket[5m])))``: the ``le`` label is gone."""
    for arg in _quantile_args(tree):
        for node, _ in q.walk(arg):
            if (
                isinstance(node, P.AggregateExpr)
                and not q.keeps_label(node, "le")
                and _has_bucket(node)
            ):
                kind, labels = q.grouping(node)
                fix = f"{q.op(node)} by (le{''.join(', ' + x for x in labels if kind == 'by')})"
                yield Hit(
                    f"histogram_quantile input `{_agg_text(node)}` drops the `le` label, so the "
                    f"quantile is empty; keep it: `{fix} (…)`"
                )
                break


def _unrated_use(ancestors: tuple[q.Expr, ...]) -> str:
    """What uses a raw bucket selector without rate(): ``"histogram_quantile"``, ``"sum"``,
    ``"/"``…, or ``""`` when nothing (or a function) does."""
    for node in reversed(ancestors):
        if isinstance(node, P.ParenExpr | P.UnaryExpr):
            continue
        if isinstance(node, P.Call):
            return "histogram_quantile" if q.func_name(node) == "histogram_quantile" else ""
        if isinstance(node, P.AggregateExpr):
            return q.op(node)
        if isinstance(node, P.BinaryExpr):
            if str(node.op) in q.ARITHMETIC:
                return str(node.op)
            if str(node.op) in q.SET_OPS:
                continue
            return ""
        return ""
    return ""


@rule_check(
    "bucket-without-rate",
    Severity.ERROR,
    "histograms",
    "histogram_quantile or arithmetic on raw cumulative buckets, without rate()/increase()",
)
def bucket_without_rate(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``histogram_quantile(0.9, sum by (le) (x_bucket))``: the quantile since process start."""
    for node, ancestors in q.walk(tree):
        if not isinstance(node, P.VectorSelector) or (
            ancestors and isinstance(ancestors[-1], P.MatrixSelector)
        ):
            continue
        name = q.selector_name(node)
        if is_recorded(name) or not name.endswith("_bucket"):
            continue
        use = _unrated_use(ancestors)
        if use:
            yield Hit(
                f"`{name}` is a cumulative counter used raw in `{use}`: wrap it in "
                f"rate({name}[5m]) or increase(…) first"
            )


def _le_values(matcher: P.Matcher) -> set[str] | None:
    if q.is_regex(matcher):
        return literal_set(str(matcher.value))
    return {str(matcher.value)}


def _le_matchers(tree: q.Expr) -> Iterator[P.Matcher]:
    for node, _ in q.walk(tree):
        if isinstance(node, P.VectorSelector):
            for matcher in q.matchers(node):
                if matcher.name == "le":
                    yield matcher


@rule_check(
    "le-not-a-number",
    Severity.ERROR,
    "histograms",
    'an `le` matcher value that is not a number (`le="0.5s"`) matches no bucket',
)
def le_not_a_number(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Bucket bounds are plain numbers in base units; ``"0.5s"`` or ``"500ms"`` never match."""
    for matcher in _le_matchers(tree):
        values = _le_values(matcher)
        for value in sorted(values or ()):
            if value and parse_go_float(value) is None:
                yield Hit(
                    f"`{matcher}`: {value!r} is not a number, so it matches no bucket; "
                    'write the bound in base units (seconds), e.g. le="0.5"'
                )


@rule_check(
    "le-spelling",
    Severity.WARNING,
    "histograms",
    'an `le` value spelled differently from what Prometheus 3 stores (`"1"` vs `"1.0"`)',
)
def le_spelling(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Prometheus 3 stores ``le="1.0"``, ``"1.8e+06"``; ``le="1"`` matches nothing there."""
    for matcher in _le_matchers(tree):
        values = _le_values(matcher)
        if not values:
            continue
        spellings: dict[float, set[str]] = {}
        for value in values:
            number = parse_go_float(value)
            if number is not None and number == number:  # NaN never equals itself
                spellings.setdefault(number, set()).add(value)
        for number, written in sorted(spellings.items()):
            canonical = prometheus3_le(number)
            if canonical not in written:
                old = sorted(written)[0]
                both = f"{old}|{canonical}".replace(".", "\\\\.")
                yield Hit(
                    f'`{matcher}`: Prometheus 3 stores this bound as le="{canonical}"; write '
                    f'le="{canonical}", or le=~"{both}" to match Prometheus 2 and 3'
                )


@rule_check(
    "rate-filter-before-quantile",
    Severity.WARNING,
    "histograms",
    "a filter such as `rate(...) > 0` inside histogram_quantile drops buckets",
)
def filter_before_quantile(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Filtering buckets removes some ``le`` series and moves the quantile; filter the result."""
    for arg in _quantile_args(tree):
        for node, _ in q.walk(arg):
            if q.is_filter(node) and _has_bucket(node):
                yield Hit(
                    f"`{q.op(node)}` filters buckets inside histogram_quantile, so some `le` "
                    "bounds go missing and the quantile moves; compare the quantile instead"
                )
                break


def _single_bound(node: q.Expr) -> bool:
    """True when every bucket selector under ``node`` pins ``le`` to one bound."""
    for sub, _ in q.walk(node):
        if not is_bucket(q.selector_name(sub)) or isinstance(sub, P.MatrixSelector):
            continue
        bounds: set[float] = set()
        for matcher in q.matchers(sub):
            if matcher.name != "le" or matcher.op == P.MatchOp.NotEqual:
                continue
            for value in _le_values(matcher) or {"?"}:
                number = parse_go_float(value)
                bounds.add(float("nan") if number is None else number)
        if len(bounds) != 1 or any(b != b for b in bounds):
            return False
    return True


@rule_check(
    "bucket-sum-across-le",
    Severity.ERROR,
    "histograms",
    "an aggregation adds buckets of different `le` bounds together",
)
def bucket_sum_across_le(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``sum by (job) (rate(x_bucket[5m]))`` counts each request once per bucket it falls in."""
    for node, ancestors in q.walk(tree):
        if q.op(node) not in _VALUE_AGGREGATIONS or q.keeps_label(node, "le"):
            continue
        if any(q.func_name(a) == "histogram_quantile" for a in ancestors):
            continue  # reported by histogram-quantile-without-le
        if _has_bucket(node) and not _single_bound(node):
            yield Hit(
                f"`{_agg_text(node)}` merges buckets of every `le` bound (cumulative counts "
                'add up many times); select one bound with le="…" or keep `le` in the grouping'
            )
