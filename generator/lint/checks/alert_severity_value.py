"""``alert-severity-value``: a severity label outside critical/warning/info."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "alert-severity-value",
    Severity.WARNING,
    "alerts",
    "a severity label outside critical/warning/info",
)
def severity_value(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Routing trees match exact values; ``severity: page`` reaches no receiver."""
    value = rule.labels.get("severity")
    if rule.kind != "alert" or value is None or "{{" in value or not value.strip():
        return
    allowed = ctx.config.alert_severities
    if value not in allowed:
        yield Hit(
            f"severity {value!r} is not one of {', '.join(allowed)}",
            line=rule.line_of("labels.severity"),
        )


CHECK = severity_value
