"""Pieces every dashboard panel is made of: variable filters, recorded-series queries,
legends, runbook links and the threshold steps of an alert.

Shared by :mod:`generator.builders.dashboard_panels` and the alert families' panels
(:mod:`generator.families`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from generator.parts.common import recorded
from generator.parts.grafana_json import Step
from generator.promql import Matcher, by

if TYPE_CHECKING:
    from generator.plan import ServicePlan

RED, ORANGE, YELLOW, GREEN = "red", "orange", "yellow", "green"
SEVERITY_COLOR = {"critical": RED, "warning": ORANGE}


def kept_by(plan: ServicePlan, *labels: str) -> str:
    """`` by (labels…)`` with the cluster label kept (``""`` for no labels and no cluster)."""
    return by(plan.keeping(*labels))


def named(plan: ServicePlan, legend: str) -> str:
    """``legend`` preceded by the series' cluster when the spec names a cluster label."""
    return f"{{{{{plan.cluster_label}}}}} {legend}" if plan.cluster_label else legend


def cluster_filter(plan: ServicePlan) -> tuple[Matcher, ...]:
    """The ``cluster`` variable's filter on the cluster label, when the spec names one."""
    return (Matcher(plan.cluster_label, "=~", "$cluster"),) if plan.cluster_label else ()


def scope(plan: ServicePlan) -> tuple[Matcher, ...]:
    """The filters every query of a service dashboard carries: namespace, and cluster."""
    return (Matcher("namespace", "=~", "$namespace"), *cluster_filter(plan))


def pod_filter() -> Matcher:
    """The ``pod`` variable's filter."""
    return Matcher("pod", "=~", "$pod")


def model_filter(plan: ServicePlan) -> tuple[Matcher, ...]:
    """The ``model_name`` variable's filter on the model label, when the spec names one."""
    return (Matcher(plan.model_label, "=~", "$model_name"),) if plan.model_label else ()


def rec(plan: ServicePlan, record: str, *extra: Matcher) -> str:
    """A recorded series of this service, filtered by the variables its labels carry."""
    model = model_filter(plan) if plan.model_label in plan.group_by else ()
    return recorded(plan, record, *scope(plan), *model, *extra)


def panel_runbook(plan: ServicePlan, alert: str) -> tuple[str, str]:
    """A panel's runbook link: (alert name, its runbook URL)."""
    return alert, plan.runbook_url(alert)


def legend(plan: ServicePlan, what: str) -> str:
    """A legend: ``what``, the aggregation labels but namespace, then ``(namespace)``."""
    extra = "".join(f" {{{{{label}}}}}" for label in plan.agg_labels if label != "namespace")
    return f"{what}{extra} ({{{{namespace}}}})"


def as_ratio(value: object) -> float:
    """A ratio parameter (number or text) as the float Grafana draws."""
    return float(Fraction(str(value)))


def alert_steps(plan: ServicePlan, key: str, param: str, below: bool = False) -> tuple[Step, ...]:
    """Thresholds of alert ``key``: its ``param`` coloured by severity above the line (or, with
    ``below``, under it, for "minimum free" alerts); a plain green base when it is disabled."""
    alert = plan.alerts.get(key)
    if alert is None:
        return (Step(None, GREEN),)
    value = as_ratio(alert.params[param])
    color = SEVERITY_COLOR.get(alert.severity, RED)
    return (
        (Step(None, color), Step(value, GREEN))
        if below
        else (Step(None, GREEN), Step(value, color))
    )
