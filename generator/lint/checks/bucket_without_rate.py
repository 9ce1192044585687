"""``bucket-without-rate``: histogram_quantile or arithmetic on raw cumulative buckets, without
rate()/increase()."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.histograms import _unrated_use
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


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
        if ctx.names.is_recorded(name) or not name.endswith("_bucket"):
            continue
        use = _unrated_use(ancestors)
        if use:
            rated = f"rate({printer.render(node, path=path)}[{window}])"
            yield Hit(
                f"`{name}` is a cumulative counter used raw in `{use}`: wrap it in "
                f"rate({name}[{window}]) first",
                fix=Fix(expr=printer.render(tree, {path: rated})),
            )


CHECK = bucket_without_rate
