"""``histogram-quantile-without-le``: histogram_quantile over an aggregation that drops `le`
returns nothing."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.histograms import _agg_text, _has_bucket, _head
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import walk_paths
from generator.lint.registry import Context, Hit, rule_check


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
                and _has_bucket(sub, ctx.names)
            ):
                fixed = printer.regrouped(sub, sub_path, "le")
                yield Hit(
                    f"histogram_quantile input `{_agg_text(sub)}` drops the `le` label, so the "
                    f"quantile is empty; keep it: `{_head(fixed)} (…)`",
                    fix=Fix(expr=printer.render(tree, {sub_path: fixed})),
                )
                break


CHECK = quantile_without_le
