"""``label-removed``: ``on``, ``group_left``/``group_right`` or ``by`` naming a label that an
inner aggregation, ``absent()`` or join already removed."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.registry import Check, Context, Hit


def _run(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    for problem in ctx.analysis(tree).problems:
        if problem.kind == "label-removed":
            yield Hit(problem.message)


CHECK = Check(
    "label-removed",
    Severity.WARNING,
    "labels",
    "a join or grouping names a label an inner aggregation already removed",
    rule_func=_run,
)
