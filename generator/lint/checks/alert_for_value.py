"""``alert-for-value``: a ``for``/``keep_firing_for`` that does nothing or less than it says."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.registry import Check, Context, Hit


def _seconds(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return q.parse_duration(text)
    except ValueError:
        return None  # promtool reports a bad duration


def _run(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    if rule.kind != "alert":
        return
    for key, text in (("for", rule.for_), ("keep_firing_for", rule.keep_firing_for)):
        if _seconds(text) == 0:
            yield Hit(
                f"`{key}: {text}` is the default and does nothing; remove it (or set the "
                "duration you meant)",
                line=rule.line_of(key),
            )
    wait, interval = _seconds(rule.for_), _seconds(rule.group_interval)
    if wait and interval and wait < interval:
        yield Hit(
            f"`for: {rule.for_}` is shorter than the group's `interval: {rule.group_interval}`: "
            "the condition is only seen once per interval, so the alert fires at the second "
            f"evaluation that holds, {rule.group_interval} later; write `for: "
            f"{rule.group_interval}` (or more) to say what happens",
            line=rule.line_of("for"),
        )


CHECK = Check(
    "alert-for-value",
    Severity.INFO,
    "alerts",
    "`for: 0s`/`keep_firing_for: 0s` (no effect) or a `for` shorter than the group interval",
    rule_func=_run,
)
