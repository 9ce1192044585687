"""``quantile-aggregated``: avg/sum/max/min of quantiles across series is not a quantile of
anything."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.quantiles import (
    _VALUE_AGGREGATIONS,
    _extreme_of_extremes,
    _grouped_away,
    _inside_histogram_quantile,
    _phi_words,
    quantile_of,
)
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import walk_paths
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "quantile-aggregated",
    Severity.WARNING,
    "quantiles",
    "avg/sum/max/min of quantiles across series is not a quantile of anything",
)
def quantile_aggregated(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``avg by (service) (service_pod:latency:p99_rate5m)`` is not the service's p99."""
    for path, node in walk_paths(tree):
        if not isinstance(node, P.AggregateExpr) or q.op(node) not in _VALUE_AGGREGATIONS:
            continue
        if _inside_histogram_quantile(tree, path):
            continue  # histogram-quantile-of-quantiles reports it
        found = quantile_of(node.expr, ctx)
        if found is None or not _grouped_away(node, found) or _extreme_of_extremes(node, found):
            continue
        kind, labels = q.grouping(node)
        right = found.correct_form(labels if kind == "by" else (), None)
        what = f"{q.op(node)}{f' {kind} ({chr(44).join(labels)})' if kind else ''}"
        advice = (
            f"re-aggregate the buckets: `{right}`"
            if right
            else "aggregate the bucket rates first (`histogram_quantile(φ, sum by (le, …) "
            "(rate(…_bucket[…])))`) or record them"
        )
        yield Hit(
            f"`{what}` combines {_phi_words(found)} per series (known from {found.how}): the "
            f"result is not a quantile of the merged traffic (one slow series is hidden); "
            f"{advice}",
            fix=Fix(expr=printer.render(tree, {path: right})) if right else None,
        )


CHECK = quantile_aggregated
