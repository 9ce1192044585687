"""``alert-missing-for``: a threshold alert over a short window (<= 5m) without `for`."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.checks.alerts import (
    _ABSENT,
    SHORT_WINDOW,
    SUGGESTED_FOR,
    _clock_like,
    _has_for,
    _is_event_check,
    _window_span,
)
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "alert-missing-for",
    Severity.WARNING,
    "alerts",
    "a threshold alert over a short window (<= 5m) without `for`",
)
def missing_for(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``rate(x[1m]) > 100`` with no ``for`` pages on one noisy evaluation."""
    if rule.kind != "alert" or _has_for(rule):
        return
    if any(q.func_name(n) in _ABSENT for n, _ in q.walk(tree)):
        return  # absent-without-for
    thresholds = [
        n for n, _ in q.walk(tree) if q.is_filter(n) and str(n.op) in (">", ">=", "<", "<=")
    ]
    if not thresholds or all(_is_event_check(n) for n in thresholds) or _clock_like(tree):
        return
    span = _window_span(tree, ctx)
    if span is not None and span > SHORT_WINDOW:
        return
    window = "instant values" if span is None else f"a {q.fmt_seconds(span)} window"
    yield Hit(
        f"threshold alert over {window} has no `for`: one noisy evaluation pages; add "
        f"`for: {SUGGESTED_FOR}` (or longer)",
        line=rule.line_of("for"),
        fix=Fix(fields=(("for", SUGGESTED_FOR),)),
    )


CHECK = missing_for
