"""``vector-matching``: a binary operation whose two sides can never match."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.registry import Check, Context, Hit


def _run(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    for problem in ctx.analysis(tree).problems:
        if problem.kind == "never-matches":
            yield Hit(problem.message)


CHECK = Check(
    "vector-matching",
    Severity.ERROR,
    "labels",
    "the two sides of a vector operation keep different labels, so they never match",
    rule_func=_run,
)
