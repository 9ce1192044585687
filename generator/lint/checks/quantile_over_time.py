"""``quantile-over-time``: avg/max/sum_over_time of a quantile is not the quantile over that
window."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.quantiles import (
    _OVER_TIME,
    _inner,
    _matrix_arg,
    _phi_name,
    _phi_words,
    quantile_of,
)
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import walk_paths
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "quantile-over-time",
    Severity.WARNING,
    "quantiles",
    "avg/max/sum_over_time of a quantile is not the quantile over that window",
)
def quantile_over_time(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``avg_over_time(service:latency:p99_rate5m[6h])`` is a mean of 72 five-minute p99s,
    not the 6-hour p99."""
    for path, node in walk_paths(tree):
        call = q.as_call(node, *_OVER_TIME)
        if call is None:
            continue
        arg = _matrix_arg(call)
        if arg is None:
            continue
        found = quantile_of(_inner(arg), ctx)
        if found is None:
            continue
        # The samples cover the range and, before it, the window each quantile was over.
        window = max(q.seconds(arg.range), found.window or 0.0)
        right = found.correct_form(None, window)
        advice = (
            f"compute the quantile over the whole window from the buckets: `{right}`"
            if right
            else "compute the quantile over the whole window from the bucket rates "
            f"(`histogram_quantile(φ, sum by (le, …) (rate(…_bucket[{q.fmt_seconds(window)}])))`)"
        )
        yield Hit(
            f"{call.func.name}() over {_phi_words(found)} (known from {found.how}) is not the "
            f"{_phi_name(found)} of the "
            f"{q.fmt_seconds(window)} window: each sample counts the same whatever its "
            f"traffic; {advice}",
            fix=Fix(expr=printer.render(tree, {path: right})) if right else None,
        )


CHECK = quantile_over_time
