"""``bucket-sum-across-le``: an aggregation adds buckets of different `le` bounds together."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import bounds, printer
from generator.lint import promql as q
from generator.lint.checks.histograms import (
    _VALUE_AGGREGATIONS,
    _agg_text,
    _bucket_bounds,
    _has_bucket,
    _head,
    _only_tested_for_traffic,
)
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


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
        if not _has_bucket(node, ctx.names) or _only_tested_for_traffic(ancestors):
            continue
        selected = _bucket_bounds(node, ctx.config.versions, ctx.names)
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


CHECK = bucket_sum_across_le
