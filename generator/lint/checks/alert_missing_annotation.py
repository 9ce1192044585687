"""``alert-missing-annotation``: an alert without a required annotation (default: summary,
runbook_url)."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "alert-missing-annotation",
    Severity.WARNING,
    "alerts",
    "an alert without a required annotation (default: summary, runbook_url)",
)
def missing_annotation(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """The on-call engineer needs a summary and a runbook; see ``alerts.requiredAnnotations``."""
    if rule.kind != "alert":
        return
    for annotation in ctx.config.required_annotations:
        if not rule.annotations.get(annotation, "").strip():
            yield Hit(f"alert has no `{annotation}` annotation", line=rule.line)


CHECK = missing_annotation
