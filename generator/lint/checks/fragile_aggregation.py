"""``fragile-aggregation``: ``topk``/``bottomk``/``limitk``/``limit_ratio`` choosing an alert's
series."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.registry import Check, Context, Hit

_SAMPLING = frozenset({"topk", "bottomk", "limitk", "limit_ratio"})


def _run(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    if rule.kind != "alert":
        return
    for node, ancestors in q.walk(tree):
        operator = q.op(node)
        if operator not in _SAMPLING or q.grouping(node)[0]:
            continue  # `topk by (…) (1, …)` keeps one series per group: a de-duplication
        if any(q.op(a) in q.MERGING_AGGREGATIONS for a in ancestors):
            continue  # merged away again: the alert's labels do not come from the sample
        yield Hit(
            f"`{operator}()` picks which series the alert sees, and the pick can change at every "
            "evaluation: each newcomer is a new alert (pending again, re-notified) and each one "
            "pushed out resolves; alert on a threshold over every series instead"
        )


CHECK = Check(
    "fragile-aggregation",
    Severity.WARNING,
    "alerts",
    "topk/bottomk/limitk in an alert: the alerting series change every evaluation (flapping)",
    rule_func=_run,
)
