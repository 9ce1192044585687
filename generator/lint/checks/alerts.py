"""Alert checks: a real condition, stable labels, required metadata, ``for`` where needed."""

from __future__ import annotations

import re
from collections.abc import Iterator

import promql_parser as P

from generator.lint import promql as q
from generator.lint.model import Fix, Rule, Severity
from generator.lint.names import window_of_name
from generator.lint.registry import Context, Hit, rule_check

_VALUE_IN_TEMPLATE = re.compile(r"\$value\b|\.Value\b|\{\{[^}]*\bquery\b")
# Windows up to this long (seconds) are "short": one noisy evaluation can cross the threshold.
SHORT_WINDOW = 300.0
SUGGESTED_FOR = "5m"
_ABSENT = frozenset({"absent", "absent_over_time"})
# Series that move steadily with the clock (ages, TTLs, expiry times): no noise to debounce.
_CLOCK_NAME = re.compile(
    r"_timestamp(?:_seconds)?$|_start_time(?:_seconds)?$|_ttl_seconds$|expiration|expiry"
)


def _clock_like(tree: q.Expr) -> bool:
    """True when the expression reads ``time()`` or a timestamp/TTL series."""
    return any(
        q.func_name(n) == "time" or _CLOCK_NAME.search(q.selector_name(n)) is not None
        for n, _ in q.walk(tree)
    )


def _has_for(rule: Rule) -> bool:
    if rule.for_ is None:
        return False
    try:
        return q.parse_duration(rule.for_) > 0
    except ValueError:
        return True  # promtool reports a bad duration


def _filters_in_records(tree: q.Expr, ctx: Context) -> bool:
    """True when a recorded series the alert reads was itself filtered by a comparison."""
    for node, _ in q.walk(tree):
        name = q.selector_name(node)
        if name and any(
            q.is_filter(sub) for recorded in ctx.recorded_trees(name) for sub, _ in q.walk(recorded)
        ):
            return True
    return False


def _constant_vector(tree: q.Expr) -> bool:
    node = q.unwrap(tree)
    return q.func_name(node) == "vector" or isinstance(node, P.NumberLiteral)


@rule_check(
    "alert-without-comparison",
    Severity.WARNING,
    "alerts",
    "an alert expression with no comparison fires for every series it returns",
)
def alert_without_comparison(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``expr: rate(errors_total[5m])`` fires whenever the series exists, even at 0."""
    if rule.kind != "alert" or _constant_vector(tree):
        return
    for node, _ in q.walk(tree):
        if q.is_filter(node) or q.func_name(node) in _ABSENT:
            return
    if _filters_in_records(tree, ctx):
        return
    yield Hit(
        "the expression has no comparison, so the alert fires for every series it returns, "
        "whatever the value; add a threshold (`> 0.05`) or `== 0`"
    )


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


def _window_span(tree: q.Expr) -> float | None:
    """Longest window the expression reads (ranges and recorded-name windows), else ``None``."""
    windows = [q.seconds(n.range) for n, _ in q.walk(tree) if isinstance(n, P.MatrixSelector)]
    windows += [q.seconds(n.range) for n, _ in q.walk(tree) if isinstance(n, P.SubqueryExpr)]
    for node, _ in q.walk(tree):
        window = window_of_name(q.selector_name(node))
        if window is not None:
            windows.append(window)
    return max(windows) if windows else None


def _is_event_check(node: P.BinaryExpr) -> bool:
    """``x > 0``, ``x >= 1``, ``x == 1``, ``x != 0``: a state or event test, not a threshold."""
    for side in (node.rhs, node.lhs):
        value = q.constant(side)
        if value is not None:
            return value in (0.0, 1.0)
    return False


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
    span = _window_span(tree)
    if span is not None and span > SHORT_WINDOW:
        return
    window = "instant values" if span is None else f"a {q.fmt_seconds(span)} window"
    yield Hit(
        f"threshold alert over {window} has no `for`: one noisy evaluation pages; add "
        f"`for: {SUGGESTED_FOR}` (or longer)",
        line=rule.line_of("for"),
        fix=Fix(fields=(("for", SUGGESTED_FOR),)),
    )


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
