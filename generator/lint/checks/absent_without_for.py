"""``absent-without-for``: absent() without `for` fires on every restart or missed scrape."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.checks.alerts import _ABSENT, SUGGESTED_FOR, _has_for
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "absent-without-for",
    Severity.WARNING,
    "alerts",
    "absent() without `for` fires on every restart or missed scrape",
)
def absent_without_for(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``absent(up{job="x"})`` with no ``for`` fires during a rollout or a Prometheus restart."""
    if rule.kind != "alert" or _has_for(rule):
        return
    if any(q.func_name(n) in _ABSENT for n, _ in q.walk(tree)):
        yield Hit(
            "absent() with no `for` fires on a Prometheus restart, a rollout or one missed "
            f"scrape; add `for: {SUGGESTED_FOR}` (or longer)",
            line=rule.line_of("for"),
            fix=Fix(fields=(("for", SUGGESTED_FOR),)),
        )


CHECK = absent_without_for
