"""``record-name-format``: a recording rule name not of the form level:metric:operations."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.names import split_recorded
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "record-name-format",
    Severity.INFO,
    "hygiene",
    "a recording rule name not of the form level:metric:operations",
)
def record_name_format(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``record: http_errors_rate`` hides its level and operations; see Prometheus docs."""
    if rule.kind == "record" and split_recorded(rule.name) is None:
        yield Hit(
            f"record name `{rule.name}` is not `level:metric:operations` (e.g. "
            "`job:http_requests:rate5m`)",
            line=rule.line_of("record"),
        )


CHECK = record_name_format
