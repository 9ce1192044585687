"""``alert-without-comparison``: an alert expression with no comparison fires for every series it
returns."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.checks.alerts import _ABSENT, _constant_vector, _filters_in_records
from generator.lint.model import Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "alert-without-comparison",
    Severity.WARNING,
    "alerts",
    "an alert expression with no comparison fires for every series it returns",
)
def alert_without_comparison(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``expr: rate(errors_total[5m])`` fires whenever the series exists, even at 0."""
    if rule.kind != "alert" or _constant_vector(tree):
        return
    for node, _ in q.walk(tree):
        if q.is_filter(node) or q.func_name(node) in _ABSENT:
            return
    if _filters_in_records(tree, ctx):
        return
    yield Hit(
        "the expression has no comparison, so the alert fires for every series it returns, "
        "whatever the value; add a threshold (`> 0.05`) or `== 0`"
    )


CHECK = alert_without_comparison
