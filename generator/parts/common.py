"""Shared pieces of the rule builders: rule dicts, alert labels and annotations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.promql import Matcher, Target, equals, selector
from generator.text import alert_text
from generator.units import decimal_str, format_duration_ms

if TYPE_CHECKING:
    from generator.plan import ServicePlan

Rule = dict[str, Any]
Group = dict[str, Any]


def identity(plan: ServicePlan) -> dict[str, str]:
    """The fixed labels naming this service on every record and alert it writes:
    ``service`` and, when ``spec.selector`` fixes it, ``namespace`` (the service's own).

    A service's identity is (cluster label, namespace, service): the cluster label has no
    fixed value in a spec, so every ``by``/``on`` clause keeps it (:meth:`ServicePlan.keeping`);
    namespace and service are fixed here, so two services of one name in two namespaces never
    read each other's records, and every alert carries the namespace of the service's
    ``AlertmanagerConfig`` even when a metric is scraped in another namespace
    (docs/spec.md, "Service identity").
    """
    labels = {naming.SERVICE: plan.name}
    if plan.namespace:
        labels["namespace"] = plan.namespace
    return labels


def identity_matchers(plan: ServicePlan) -> tuple[Matcher, ...]:
    """Equality matchers of :func:`identity`: select this service's recorded series, its
    alerts (``ALERTS``) and its notifications, and no other service's."""
    return equals(identity(plan))


def counter_target(
    plan: ServicePlan, matchers: tuple[Matcher, ...], *, target_labels_only: bool = True
) -> Target:
    """The targets of a counter selected by ``matchers`` (its selector labels, no error or
    ``le`` matcher): ``up`` under the same matchers, one target per ``instance``, ``job``,
    ``namespace`` and cluster label. Only matchers on the service selector's own labels
    (target labels, which ``up`` carries) are kept: a per-metric matcher such as ``handler``
    would select no ``up`` series and silently drop the late-born series again. A caller whose
    matchers are all target labels already (the GPU sidecar's) passes ``target_labels_only=False``."""
    target_labels = {m.label for m in plan.matchers}
    kept = tuple(m for m in matchers if not target_labels_only or m.label in target_labels)
    return Target(selector("up", kept), plan.keeping("instance", "job", "namespace"))


def recorded(plan: ServicePlan, record: str, *extra: Matcher) -> str:
    """Selector of a recorded series of this service (:func:`identity_matchers` and
    ``extra``), e.g. ``x:y:rate5m{namespace="ns",service="a"}``."""
    return selector(record, (*identity_matchers(plan), *extra))


def record_rule(
    plan: ServicePlan, record: str, expr: str, labels: Mapping[str, str] | None = None
) -> Rule:
    """A recording rule that sets the :func:`identity` labels (and ``labels``) on ``expr``'s
    output: ``expr`` must give at most one series per label set once they are set, which
    holds since every selector of the service fixes one namespace."""
    return {
        "record": record,
        "expr": expr,
        "labels": {**identity(plan), **dict(sorted((labels or {}).items()))},
    }


def alert_rule(
    plan: ServicePlan,
    alert: str,
    expr: str,
    for_ms: int,
    severity: str,
    labels: Mapping[str, str] | None = None,
    **text: Any,
) -> Rule:
    """An alerting rule with the contract labels and annotations (docs/contracts.md, Alerts).

    Labels: :func:`identity` (``service``, ``namespace``), ``team``, ``severity`` plus ``labels``; annotations: ``summary`` and
    ``description`` from ``templates/alerts/<alert>.j2`` (rendered with ``text``),
    ``runbook_url`` and ``dashboard_url``. ``for_ms`` 0 omits ``for``.
    """
    for key, value in text.items():
        # Spec values are validated free of Go-template braces; keep it an invariant.
        if isinstance(value, str) and ("{{" in value or "}}" in value) and key != "targets":
            raise ValueError(f"annotation value {key}={value!r} would be expanded by Prometheus")
    summary, description = alert_text(
        alert,
        service=plan.name,
        team=plan.team,
        **{"for": format_duration_ms(for_ms) if for_ms else "0s"},
        **text,
    )
    rule: Rule = {"alert": alert, "expr": expr}
    if for_ms:
        rule["for"] = format_duration_ms(for_ms)
    rule["labels"] = {
        **dict(sorted((labels or {}).items())),
        **identity(plan),
        naming.SEVERITY: severity,
        naming.TEAM: plan.team,
    }
    rule["labels"] = dict(sorted(rule["labels"].items()))
    rule["annotations"] = {
        "dashboard_url": plan.dashboard_url(),
        "description": description,
        "runbook_url": plan.runbook_url(alert),
        "summary": summary,
    }
    return rule


def group(plan: ServicePlan, part: str, rules: list[Rule], interval_ms: int | None = None) -> Group:
    """A rule group named ``obsgen.<service>.<part>`` (no group-level labels: 2.42-safe), with
    its own ``interval`` when ``interval_ms`` is given (else Prometheus' global one) and the
    spec's ``query_offset`` (Prometheus 2.53+: the plan checked the declared target)."""
    out: Group = {"name": naming.group_name(plan.stem, part)}
    if interval_ms is not None:
        out["interval"] = format_duration_ms(interval_ms)
    if plan.query_offset_ms:
        out["query_offset"] = format_duration_ms(plan.query_offset_ms)
    out["rules"] = rules
    return out


def keep_firing(rule: Rule, ms: int) -> Rule:
    """``rule`` with ``keep_firing_for`` (after ``expr`` and ``for``; Prometheus 2.42+: the
    plan checked the declared target); ``ms`` 0 leaves it as it is."""
    if not ms:
        return rule
    head = {k: v for k, v in rule.items() if k in ("alert", "expr", "for")}
    return {**head, "keep_firing_for": format_duration_ms(ms), **rule}


def held_for(plan: ServicePlan, expr: str, for_ms: int, window_ms: int) -> str:
    """``expr`` held at least ``for_ms`` in total within the last ``window_ms``:

        count_over_time((<expr>)[<window>:<step>]) * <step in s> >= <for in s>

    The subquery evaluates ``expr`` every ``spec.prometheus.scrapeInterval`` (``step``), so
    the count × step is the time (seconds, to within one step) it returned a sample;
    interruptions shorter than ``for`` (a crash-looping pod up for a few seconds between
    back-offs) do not reset it, as they reset a rule's ``for``. A ``for_ms`` of 0 means one
    step. The value of the result is that time in seconds, at most the window.

    The subquery's range is the window less half a step, so its left end never falls on a
    step: Prometheus 2 counts a step on the range's left edge, Prometheus 3 (left-open ranges)
    does not, and with the edge between steps both count the same ``window / step`` steps.
    """
    step = plan.scrape_interval_ms
    span = format_duration_ms(window_ms - step // 2)
    held = f"count_over_time(({expr})[{span}:{format_duration_ms(step)}])"
    least = max(for_ms, step)
    return f"{held} * {decimal_str(step / 1000)} >= {decimal_str(least / 1000)}"
