"""``alert-value-in-labels``: an alert label holding $value or a query result changes every
evaluation."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.checks.alerts import _VALUE_IN_TEMPLATE
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "alert-value-in-labels",
    Severity.ERROR,
    "alerts",
    "an alert label holding $value or a query result changes every evaluation",
)
def value_in_labels(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``labels: {current: "{{ $value }}"}`` makes a new alert at every evaluation."""
    if rule.kind != "alert":
        return
    for key, value in sorted(rule.labels.items()):
        if _VALUE_IN_TEMPLATE.search(value):
            yield Hit(
                f"label `{key}` is templated from the query result ({value.strip()!r}); labels "
                "identify the alert, so it restarts (and re-notifies) each evaluation; move it "
                f"to annotations.{key}",
                line=rule.line_of(f"labels.{key}"),
                fix=Fix(fields=((f"labels.{key}", None), (f"annotations.{key}", value))),
            )


CHECK = value_in_labels
