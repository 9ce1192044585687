"""Histogram checks: ``le`` kept through aggregation, rated buckets, ``le`` spellings.

Background: a classic histogram is a set of cumulative ``*_bucket`` counters, one per upper
bound ``le``. ``histogram_quantile`` needs the per-``le`` rates (``sum by (le, …) (rate(…))``);
Prometheus 3 stores bounds as Go floats (``le="1.0"``, docs/contracts.md, rule 1).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import promql_parser as P

from generator.lint import bounds, printer
from generator.lint import promql as q
from generator.lint.model import Fix, Rule, Severity
from generator.lint.names import is_recorded, parse_go_float, split_recorded
from generator.lint.printer import Path, matcher_text, walk_paths
from generator.lint.regex import literal_set
from generator.lint.registry import Context, Hit, rule_check

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
    for path, node in walk_paths(tree):
        if q.func_name(node) != "histogram_quantile" or len(q.children(node)) != 2:
            continue
        arg_path = (*path, 1)
        for sub_path, sub in walk_paths(q.children(node)[1], arg_path):
            if (
                isinstance(sub, P.AggregateExpr)
                and not q.keeps_label(sub, "le")
                and _has_bucket(sub)
            ):
                fixed = printer.regrouped(sub, sub_path, "le")
                yield Hit(
                    f"histogram_quantile input `{_agg_text(sub)}` drops the `le` label, so the "
                    f"quantile is empty; keep it: `{_head(fixed)} (…)`",
                    fix=Fix(expr=printer.render(tree, {sub_path: fixed})),
                )
                break


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


@rule_check(
    "bucket-without-rate",
    Severity.ERROR,
    "histograms",
    "histogram_quantile or arithmetic on raw cumulative buckets, without rate()/increase()",
)
def bucket_without_rate(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``histogram_quantile(0.9, sum by (le) (x_bucket))``: the quantile since process start."""
    window = q.fmt_seconds(max(300.0, 4 * ctx.config.scrape_interval))
    for path, node, ancestors in printer.walk_full(tree):
        if not isinstance(node, P.VectorSelector) or (
            ancestors and isinstance(ancestors[-1], P.MatrixSelector | P.SubqueryExpr)
        ):
            continue
        name = q.selector_name(node)
        if is_recorded(name) or not name.endswith("_bucket"):
            continue
        use = _unrated_use(ancestors)
        if use:
            rated = f"rate({printer.render(node, path=path)}[{window}])"
            yield Hit(
                f"`{name}` is a cumulative counter used raw in `{use}`: wrap it in "
                f"rate({name}[{window}]) first",
                fix=Fix(expr=printer.render(tree, {path: rated})),
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
    for path, node in walk_paths(tree):
        if not isinstance(node, P.VectorSelector):
            continue
        for matcher in q.matchers(node):
            if matcher.name != "le":
                continue
            values = _le_values(matcher) or set()
            wrong = sorted(v for v in values if v and parse_go_float(v) is None)
            if not wrong:
                continue
            seconds = [_as_seconds(v) for v in sorted(values)]
            if matcher.op in (P.MatchOp.Equal, P.MatchOp.Re) and all(
                x is not None for x in seconds
            ):
                wanted = bounds.matcher_for(
                    [x for x in seconds if x is not None], ctx.config.versions
                )
                selector = printer.selector_with(node, "le", wanted)
                yield Hit(
                    f"`{matcher_text(matcher)}`: {wrong[0]!r} is not a number, so it matches "
                    f"no bucket; bounds are plain numbers in seconds: {wanted}",
                    fix=Fix(expr=printer.render(tree, selectors={path: selector})),
                )
            else:
                yield Hit(
                    f"`{matcher_text(matcher)}`: {wrong[0]!r} is not a number, so it matches "
                    "no bucket; write the bound as a plain number in the metric's base unit"
                )


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


def _spelled_matchers(tree: q.Expr) -> Iterator[tuple[Path, P.VectorSelector, P.Matcher]]:
    """Positive ``le`` matchers, and ``quantile`` matchers of scraped (not recorded) series:
    the label values Prometheus 3 normalises (a recorded ``quantile`` label is the rule's)."""
    for path, node in walk_paths(tree):
        if not isinstance(node, P.VectorSelector) or node.matchers.or_matchers:
            continue
        recorded = is_recorded(q.selector_name(node))
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


@rule_check(
    "le-spelling",
    Severity.WARNING,
    "histograms",
    "an `le`/`quantile` matcher that misses a spelling the target Prometheus stores "
    '(`le="1"` vs `"1.0"`)',
)
def le_spelling(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Prometheus 3 stores ``le="1.0"``; 2 stores what the exporter wrote (``1`` from Go
    clients, ``1.0`` from Python and Java ones). Regexes are decided by evaluating them with
    RE2 (:mod:`generator.lint.bounds`)."""
    versions = ctx.config.versions
    for path, node, matcher in _spelled_matchers(tree):
        selection = bounds.select(str(matcher.value), q.is_regex(matcher), versions)
        if selection is None or not selection.missed or not selection.intended:
            continue
        wanted = bounds.matcher_for(selection.intended, versions, label=matcher.name)
        fixed = printer.render(
            tree, selectors={path: printer.selector_with(node, matcher.name, wanted)}
        )
        yield Hit(
            f"`{matcher_text(matcher)}` misses spellings of the bound it selects: "
            f"{_spelling_words(selection.missed)}; write {wanted}",
            fix=Fix(expr=fixed),
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


def _bucket_bounds(node: q.Expr, versions: tuple[str, ...]) -> tuple[float, ...] | None:
    """The bounds every bucket selector under ``node`` selects, or ``None`` when some
    selector selects an unknown or open set (no ``le`` matcher, a negative one …)."""
    selected: set[float] = set()
    for sub, _ in q.walk(node):
        if not isinstance(sub, P.VectorSelector) or not is_bucket(q.selector_name(sub)):
            continue
        le = [m for m in q.matchers(sub) if m.name == "le"]
        if len(le) != 1 or le[0].op not in (P.MatchOp.Equal, P.MatchOp.Re):
            return None
        selection = bounds.select(str(le[0].value), q.is_regex(le[0]), versions)
        if selection is None or not selection.bounds:
            return None
        selected.update(selection.bounds)
    return tuple(sorted(selected))


@rule_check(
    "bucket-sum-across-le",
    Severity.ERROR,
    "histograms",
    "an aggregation adds buckets of different `le` bounds together",
)
def bucket_sum_across_le(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``sum by (job) (rate(x_bucket[5m]))`` counts each request once per bucket it falls in."""
    for path, node, ancestors in printer.walk_full(tree):
        if q.op(node) not in _VALUE_AGGREGATIONS or q.keeps_label(node, "le"):
            continue
        if any(q.func_name(a) == "histogram_quantile" for a in ancestors):
            continue  # reported by histogram-quantile-without-le
        if not _has_bucket(node) or _only_tested_for_traffic(ancestors):
            continue
        selected = _bucket_bounds(node, ctx.config.versions)
        if selected is not None and len(selected) == 1:
            continue
        fixed = printer.regrouped(node, path, "le")  # type: ignore[arg-type]
        keep = f"keep `le` in the grouping (`{_head(fixed)} (…)`)"
        if selected is None:
            what = "merges buckets of every `le` bound"
        else:
            shown = ", ".join(bounds.format_bound(b) for b in selected[:4])
            more = f" and {len(selected) - 4} more" if len(selected) > 4 else ""
            what = (
                f"adds up buckets of {len(selected)} bounds ({shown}{more}) that its `le` "
                "regex accepts"
            )
        yield Hit(
            f"`{_agg_text(node)}` {what} (cumulative counts add up many times); select one "
            f'bound with le="…", or {keep}',
            fix=Fix(expr=printer.render(tree, {path: fixed})),
        )
