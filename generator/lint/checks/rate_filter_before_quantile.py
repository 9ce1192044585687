"""``rate-filter-before-quantile``: a filter such as `rate(...) > 0` inside histogram_quantile
drops buckets."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.checks.histograms import _has_bucket, _quantile_args
from generator.lint.model import Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


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
            if q.is_filter(node) and _has_bucket(node, ctx.names):
                yield Hit(
                    f"`{q.op(node)}` filters buckets inside histogram_quantile, so some `le` "
                    "bounds go missing and the quantile moves; compare the quantile instead"
                )
                break


CHECK = filter_before_quantile
