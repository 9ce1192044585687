"""``averaged-ratio``: avg_over_time of a recorded ratio: a mean of ratios is not traffic-
weighted."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.slo import _is_ratio, _over_time_of, _range_of, _weighted
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import walk_paths
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "averaged-ratio",
    Severity.WARNING,
    "slo",
    "avg_over_time of a recorded ratio: a mean of ratios is not traffic-weighted",
)
def averaged_ratio(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``avg_over_time(slo:sli_error:ratio_rate5m[30d])`` weights a quiet night like a peak hour."""
    for path, node in walk_paths(tree):
        name = _over_time_of(node, "avg_over_time")
        window = _range_of(node)
        division = q.as_binary(node, "/")
        if not name and division is not None:
            summed = _over_time_of(division.lhs, "sum_over_time")
            if summed and summed == _over_time_of(division.rhs, "count_over_time"):
                name, window = summed, _range_of(division.lhs)
        if not name or not _is_ratio(name, ctx):
            continue
        right = _weighted(name, window, ctx)
        yield Hit(
            f"averages the ratio `{name}` over time, so every 5m counts the same whatever "
            "its traffic; divide sum_over_time of the recorded bad-event rate by "
            "sum_over_time of the total rate instead" + (f": `{right}`" if right else ""),
            fix=Fix(expr=printer.render(tree, {path: f"({right})"})) if right else None,
        )


CHECK = averaged_ratio
