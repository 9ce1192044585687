"""Helpers of the histogram checks: ``le`` kept through aggregation, rated buckets, spellings.

Background: a classic histogram is a set of cumulative ``*_bucket`` counters, one per upper
bound ``le``. ``histogram_quantile`` needs the per-``le`` rates (``sum by (le, …) (rate(…))``);
Prometheus 3 stores bounds as Go floats (``le="1.0"``, docs/contracts.md, rule 1).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import promql_parser as P

from generator.lint import bounds
from generator.lint import promql as q
from generator.lint.names import SeriesNames, parse_go_float
from generator.lint.printer import Path, walk_paths
from generator.lint.regex import literal_set

# Aggregations whose value is wrong when buckets of different bounds are merged.
_VALUE_AGGREGATIONS = frozenset({"sum", "avg", "min", "max", "stddev", "stdvar", "quantile"})


def is_bucket(name: str, names: SeriesNames) -> bool:
    """True for a classic-histogram bucket series: scraped ``x_bucket`` (``vllm:x_bucket``
    too) or recorded ``job:x_bucket:…``."""
    if not names.is_recorded(name):
        return name.endswith("_bucket")
    parts = names.split(name)
    return parts is not None and parts[1].endswith("_bucket")


def _has_bucket(node: q.Expr, names: SeriesNames) -> bool:
    return any(is_bucket(q.selector_name(n), names) for n, _ in q.walk(node))


def _quantile_args(tree: q.Expr) -> Iterator[q.Expr]:
    for node, _ in q.walk(tree):
        call = q.as_call(node, "histogram_quantile")
        if call is not None and len(call.args) == 2:
            yield call.args[1]


def _agg_text(node: q.Expr) -> str:
    kind, labels = q.grouping(node)
    return f"{q.op(node)} {kind} ({', '.join(labels)})" if kind else q.op(node)


def _head(aggregation: str) -> str:
    """``sum by (le, job)`` of a rendered ``sum by (le, job) (…)``."""
    return aggregation[: aggregation.index(")") + 1]


def _unrated_use(ancestors: tuple[q.Expr, ...]) -> str:
    """What uses a raw bucket selector without rate(): ``"histogram_quantile"``, ``"sum"``,
    ``"/"``…, or ``""`` when nothing (or a function, or an exact increase ``x - x offset d``)
    does."""
    if any(q.exact_increase(node) for node in ancestors):
        return ""
    for node in reversed(ancestors):
        if q.offset_difference(node):
            return ""
        if isinstance(node, P.ParenExpr | P.UnaryExpr):
            continue
        if isinstance(node, P.Call):
            return "histogram_quantile" if q.func_name(node) == "histogram_quantile" else ""
        if isinstance(node, P.AggregateExpr):
            # count()/group() count series, not their values: a presence test is fine raw.
            return "" if q.op(node) in ("count", "group", "count_values") else q.op(node)
        if isinstance(node, P.BinaryExpr):
            if str(node.op) in q.ARITHMETIC:
                return str(node.op)
            if str(node.op) in q.SET_OPS:
                continue
            return ""
        return ""
    return ""


def _le_values(matcher: P.Matcher) -> set[str] | None:
    if q.is_regex(matcher):
        return literal_set(str(matcher.value))
    return {str(matcher.value)}


_UNIT_VALUE = re.compile(r"^(?P<number>\d+(?:\.\d+)?)(?P<unit>ms|s|m|h)$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _as_seconds(value: str) -> float | None:
    """``"0.5s"`` -> 0.5, ``"500ms"`` -> 0.5; a plain number as is; else ``None``."""
    number = parse_go_float(value)
    if number is not None:
        return number
    match = _UNIT_VALUE.match(value)
    if match is None:
        return None
    return float(match.group("number")) * _UNIT_SECONDS[match.group("unit")]


def _spelled_matchers(
    tree: q.Expr, names: SeriesNames
) -> Iterator[tuple[Path, P.VectorSelector, P.Matcher]]:
    """Positive ``le`` matchers, and ``quantile`` matchers of scraped (not recorded) series:
    the label values Prometheus 3 normalises (a recorded ``quantile`` label is the rule's)."""
    for path, node in walk_paths(tree):
        if not isinstance(node, P.VectorSelector) or node.matchers.or_matchers:
            continue
        recorded = names.is_recorded(q.selector_name(node))
        for matcher in node.matchers.matchers:
            if matcher.op not in (P.MatchOp.Equal, P.MatchOp.Re):
                continue
            if matcher.name == "le" or (matcher.name == "quantile" and not recorded):
                yield path, node, matcher


def _spelling_words(missed: Sequence[tuple[float, str, str]]) -> str:
    by_version: dict[str, list[str]] = {}
    for _, version, spelling in missed:
        by_version.setdefault(version, []).append(f'"{spelling}"')
    return "; ".join(
        f"Prometheus {version} {'stores' if version == '3' else 'may store'} "
        + " or ".join(sorted(set(texts)))
        for version, texts in sorted(by_version.items())
    )


def _only_tested_for_traffic(ancestors: tuple[q.Expr, ...]) -> bool:
    """True when the aggregation is only compared with 0 (``sum(…) > 0``: "there was
    traffic"), where the sum over all bounds is as good as the ``+Inf`` bucket."""
    parent = next((a for a in reversed(ancestors) if not isinstance(a, P.ParenExpr)), None)
    return (
        parent is not None
        and q.is_comparison(parent)
        and q.op(parent) in (">", "!=")
        and q.constant(parent.rhs) == 0
    )


def _bucket_bounds(
    node: q.Expr, versions: tuple[str, ...], names: SeriesNames
) -> tuple[float, ...] | None:
    """The bounds every bucket selector under ``node`` selects, or ``None`` when some
    selector selects an unknown or open set (no ``le`` matcher, a negative one …)."""
    selected: set[float] = set()
    for sub, _ in q.walk(node):
        if not isinstance(sub, P.VectorSelector) or not is_bucket(q.selector_name(sub), names):
            continue
        le = [m for m in q.matchers(sub) if m.name == "le"]
        if len(le) != 1 or le[0].op not in (P.MatchOp.Equal, P.MatchOp.Re):
            return None
        selection = bounds.select(str(le[0].value), q.is_regex(le[0]), versions)
        if selection is None or not selection.bounds:
            return None
        selected.update(selection.bounds)
    return tuple(sorted(selected))
