"""``spec.alerts.queueDepth``: ``ModelQueueDepthHigh``, requests waiting, summed over pods.

Reads the ``model_queue_depth`` record (sum) that
:func:`generator.builders.service_rules.traffic_records` writes from ``spec.metrics.queueDepth``;
page text in ``templates/runbooks/ModelQueueDepthHigh.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from generator import naming
from generator.families import ceiling
from generator.families.base import Family, Role
from generator.parts.grafana_json import PanelDef, Query
from generator.parts.panel_parts import alert_steps, legend, panel_runbook, rec
from generator.spec_alerts import MAX_THRESHOLD, AlertBase

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "queue_depth"
ALERT = naming.ALERT_QUEUE_DEPTH


class QueueDepthAlert(AlertBase):
    """``alerts.queueDepth``: queued requests (summed over pods) above ``max``."""

    max: Annotated[float, Field(ge=0, le=MAX_THRESHOLD)] | None = None


@dataclass(frozen=True)
class Params:
    """``max``: queued requests (summed over pods) above which the service alerts."""

    max: float


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``queue_depth`` alert."""
    return Params(max=float(alert.params["max"]))


def _record(plan: ServicePlan) -> str:
    return naming.record(plan.group_by, naming.QUEUE_DEPTH, "sum")


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelQueueDepthHigh`` while the summed queue stays above ``max``."""
    if plan.queue_depth is None:
        return []
    return ceiling.above_max(plan, KEY, ALERT, naming.QUEUE_DEPTH, "sum", params)


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Fires at twice ``max`` plus one queued request; a healthy service's queue is empty."""
    gauge = plan.queue_depth
    if KEY not in plan.alerts or gauge is None:
        return []
    value = params(plan.alerts[KEY]).max * 2 + 1
    return ceiling.gauge_cases(plan, KEY, gauge, rules(plan)[0], value, {})


def panels(plan: ServicePlan) -> list[PanelDef]:
    """Queue depth summed over pods, the alert's ``max`` drawn."""
    if plan.queue_depth is None:
        return []
    record = _record(plan)
    return [
        PanelDef(
            title="Queue depth",
            key="queue-depth",
            description=f"Queued requests summed over pods, from {record} "
            f"(gauge {plan.queue_depth.name}); {ALERT} fires above the line.",
            kind="timeseries",
            queries=(Query(rec(plan, record), legend(plan, "queued")),),
            unit="short",
            min_value=0,
            steps=alert_steps(plan, KEY, "max"),
            runbook=panel_runbook(plan, ALERT),
            width=12,
        )
    ]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``queue``: the summed queue record (None without a queue gauge)."""
    return {"queue": record(_record(plan)) if plan.queue_depth is not None else None}


FAMILY = Family(
    key=KEY,
    spec_field="queueDepth",
    spec_model=QueueDepthAlert,
    alerts=(ALERT,),
    for_ms=300_000,
    severity="warning",
    params={"max": 100.0},
    role=Role.SYMPTOM,
    group="traffic",
    rules=rules,
    cases=cases,
    signals=("queue_depth",),
    row="saturation",
    rank=3,
    panels=panels,
    runbook_queries=runbook_queries,
)
