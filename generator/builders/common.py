"""Shared pieces of the rule builders: rule dicts, alert labels and annotations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator import naming
from generator.plan import ServicePlan
from generator.promql import Matcher, selector
from generator.text import alert_text
from generator.units import format_duration_ms

Rule = dict[str, Any]
Group = dict[str, Any]


def service_matcher(plan: ServicePlan) -> Matcher:
    """``service="<name>"``: selects this service's recorded series."""
    return Matcher(naming.SERVICE, "=", plan.name)


def recorded(plan: ServicePlan, record: str, *extra: Matcher) -> str:
    """Selector of a recorded series of this service, e.g. ``x:y:rate5m{service="a"}``."""
    return selector(record, (service_matcher(plan), *extra))


def record_rule(
    plan: ServicePlan, record: str, expr: str, labels: Mapping[str, str] | None = None
) -> Rule:
    """A recording rule that adds the ``service`` label (and ``labels``) to ``expr``'s output."""
    return {
        "record": record,
        "expr": expr,
        "labels": {naming.SERVICE: plan.name, **dict(sorted((labels or {}).items()))},
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

    Labels: ``service``, ``team``, ``severity`` plus ``labels``; annotations: ``summary`` and
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
        naming.SERVICE: plan.name,
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
    its own ``interval`` when ``interval_ms`` is given (else Prometheus' global one)."""
    out: Group = {"name": naming.group_name(plan.name, part)}
    if interval_ms is not None:
        out["interval"] = format_duration_ms(interval_ms)
    out["rules"] = rules
    return out
