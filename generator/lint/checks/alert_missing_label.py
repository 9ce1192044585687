"""``alert-missing-label``: an alert without a required label (default: severity)."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "alert-missing-label",
    Severity.WARNING,
    "alerts",
    "an alert without a required label (default: severity)",
)
def missing_label(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Routing needs ``severity``; configure the list with ``alerts.requiredLabels``."""
    if rule.kind != "alert":
        return
    for label in ctx.config.required_labels:
        if not rule.labels.get(label, "").strip():
            yield Hit(f"alert has no `{label}` label", line=rule.line)


CHECK = missing_label
