"""``record-missing``: a rule reads a recorded series that no rule of the linted files writes."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.names import split_recorded
from generator.lint.registry import Check, Context, Hit

RECORD_MISSING = "record-missing"


def missing_records(tree: q.Expr, ctx: Context) -> list[str]:
    """Recorded names (``level:metric:operations``) the expression reads that no recording
    rule of this run writes, in order of first use."""
    found: list[str] = []
    for node, _ in q.walk(tree):
        name = q.selector_name(node)
        if (
            name
            and split_recorded(name) is not None
            and ctx.names.is_recorded(name)
            and name not in ctx.records
            and name not in found
        ):
            found.append(name)
    return found


def _run(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    if rule.kind not in ("alert", "record"):
        return
    for name in missing_records(tree, ctx):
        yield Hit(
            f"`{name}` is recorded by no rule in the linted files: if its recording rule was "
            "removed or renamed, this rule reads nothing (an alert never fires); lint the "
            "files that record it together with this one, or fix the name"
        )


CHECK = Check(
    RECORD_MISSING,
    Severity.WARNING,
    "labels",
    "a rule reads a recorded series (level:metric:operations) no linted rule writes",
    rule_func=_run,
)
