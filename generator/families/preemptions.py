"""``spec.alerts.preemptions``: ``ModelPreemptionsHigh``, requests the engine preempted per
second (recomputed or swapped work), sustained.

Reads the ``model_preemptions`` record (5m rate, summed over pods) that
:func:`generator.builders.service_rules.traffic_records` writes from ``spec.metrics.preemptions``;
page text in ``templates/runbooks/ModelPreemptionsHigh.md.j2``.
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
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    agg_of,
    expected_alert,
    fire_and_quiet,
    labels_of,
)
from generator.signals.healthy import healthy
from generator.spec_alerts import MAX_THRESHOLD, AlertBase

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "preemptions"
ALERT = naming.ALERT_PREEMPTIONS


class PreemptionsAlert(AlertBase):
    """``alerts.preemptions``: requests preempted per second (summed over pods, 5m rate) above
    ``max``."""

    max: Annotated[float, Field(ge=0, le=MAX_THRESHOLD)] | None = None


@dataclass(frozen=True)
class Params:
    """``max``: preempted requests per second (summed over pods) above which it alerts."""

    max: float


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``preemptions`` alert."""
    return Params(max=float(alert.params["max"]))


def _record(plan: ServicePlan) -> str:
    return naming.record(plan.group_by, naming.PREEMPTIONS, "rate5m")


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelPreemptionsHigh`` while the preemption rate stays above ``max``."""
    if plan.preemptions is None:
        return []
    return ceiling.above_max(
        plan, KEY, ALERT, naming.PREEMPTIONS, "rate5m", params, metric=plan.preemptions.name
    )


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Fires at twice ``max`` plus one preemption a second; healthy traffic preempts nothing."""
    counter = plan.preemptions
    if KEY not in plan.alerts or counter is None:
        return []
    per_s = params(plan.alerts[KEY]).max * 2 + 1
    base = [Klass(BASE_PER_MIN)]
    fire = healthy(plan, base)
    fire.add(counter.name, labels_of(plan, counter.matchers), per_s * 60)
    labels = {**agg_of(plan, counter.matchers), naming.SERVICE: plan.name}
    expected = [expected_alert(rules(plan)[0], labels, per_s)]
    return fire_and_quiet(plan, KEY, ALERT, fire, healthy(plan, base), expected)


def panels(plan: ServicePlan) -> list[PanelDef]:
    """Preemptions per second summed over pods, the alert's ``max`` drawn."""
    if plan.preemptions is None:
        return []
    record = _record(plan)
    return [
        PanelDef(
            title="Preemptions",
            key="preemptions",
            description=f"Requests the engine preempted per second (evicted to free KV "
            f"cache), summed over pods, from {record} (counter {plan.preemptions.name}); "
            f"{ALERT} fires above the line.",
            kind="timeseries",
            queries=(Query(rec(plan, record), legend(plan, "preempted")),),
            unit="reqps",
            min_value=0,
            steps=alert_steps(plan, KEY, "max"),
            runbook=panel_runbook(plan, ALERT),
            width=12,
        )
    ]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``preemptions``: the preemption-rate record (None without a preemptions counter)."""
    return {"preemptions": record(_record(plan)) if plan.preemptions is not None else None}


FAMILY = Family(
    key=KEY,
    spec_field="preemptions",
    spec_model=PreemptionsAlert,
    alerts=(ALERT,),
    for_ms=900_000,
    severity="warning",
    params={"max": 1.0},
    role=Role.SYMPTOM,
    group="traffic",
    rules=rules,
    cases=cases,
    signals=("preemptions",),
    row="saturation",
    rank=4,
    panels=panels,
    runbook_queries=runbook_queries,
)
