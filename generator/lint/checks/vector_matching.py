"""``vector-matching``: a binary operation whose two sides can never match, or match each series
with itself (``x{status=~"5.."} / x``: always 1)."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.checks.matching import self_matches
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Check, Context, Hit


def _run(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    for problem in ctx.analysis(tree).problems:
        if problem.kind == "never-matches":
            yield Hit(problem.message)
    for found in self_matches(tree, ctx):
        yield Hit(found.message, fix=Fix(expr=found.fix) if found.fix else None)


CHECK = Check(
    "vector-matching",
    Severity.ERROR,
    "labels",
    "the two sides of a vector operation keep different labels (they never match) or the "
    "same series (each matches itself: always 1)",
    rule_func=_run,
)
