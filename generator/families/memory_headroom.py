"""``spec.alerts.memoryHeadroom``: ``ModelMemoryHeadroomLow``, a container near its memory limit.

Reads the working set / limit record (ratio 0–1) of :func:`generator.families.memory.records`;
page text in ``templates/runbooks/ModelMemoryHeadroomLow.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families import memory
from generator.families.base import Family, Role
from generator.parts.common import alert_rule, recorded
from generator.parts.grafana_json import PanelDef, Query
from generator.parts.panel_parts import (
    alert_steps,
    kept_by,
    named,
    panel_runbook,
    pod_filter,
    scope,
)
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    container_labels,
    expected_alert,
    fire_and_quiet,
    memory_limit,
)
from generator.promql import Matcher
from generator.signals.healthy import healthy
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import AlertPlan, ServicePlan

KEY = "memory_headroom"
ALERT = naming.ALERT_MEMORY_HEADROOM


@dataclass(frozen=True)
class Params:
    """``min_free``: the share (0–1) of the memory limit below which free memory alerts."""

    min_free: float


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``memory_headroom`` alert."""
    return Params(min_free=float(alert.params["min_free"]))


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelMemoryHeadroomLow`` while a container's working set / limit stays above
    1 − ``min_free``."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    min_free = params(alert).min_free
    return [
        alert_rule(
            plan,
            ALERT,
            f"{recorded(plan, memory.USAGE_RECORD)} > {decimal_str(1 - min_free)}",
            alert.for_ms,
            alert.severity,
            min_free=decimal_str(min_free),
        )
    ]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Fires with half of ``min_free`` left on one container; a healthy one has plenty free."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    limit = memory_limit(plan)
    min_free = Fraction(str(params(alert).min_free))
    used = int(limit * (1 - min_free / 2))
    pod = container_labels(plan)
    base = [Klass(BASE_PER_MIN)]
    fire = healthy(plan, base)
    fire.gauge(naming.CADVISOR_WORKING_SET, pod, f"{used}+0x60")
    labels = {**memory.out_labels(plan, pod), naming.SERVICE: plan.name}
    expected = [expected_alert(rules(plan)[0], labels, used / limit)]
    return fire_and_quiet(plan, KEY, ALERT, fire, healthy(plan, base), expected)


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The pods, working set and limit series."""
    return memory.memory_inputs(plan, ALERT) if KEY in plan.alerts else []


def panels(plan: ServicePlan) -> list[PanelDef]:
    """Working set against the limit per pod, and the headroom against the alert's
    ``min_free`` (from the records when a memory alert writes them, else the raw series)."""
    ws = f"max{kept_by(plan, 'pod')} {memory.panel_pods(plan, naming.CADVISOR_WORKING_SET)}"
    if memory.recorded_memory(plan):
        limit_record = recorded(plan, memory.LIMIT_RECORD, *scope(plan), pod_filter())
        usage_record = recorded(plan, memory.USAGE_RECORD, *scope(plan), pod_filter())
        limit = f"max{kept_by(plan, 'pod')} ({limit_record})"
        usage = f"max{kept_by(plan, 'pod')} ({usage_record})"
        source = f"{memory.LIMIT_RECORD} and {memory.USAGE_RECORD}"
    else:
        limits = memory.panel_pods(plan, naming.KSM_LIMITS, Matcher("resource", "=", "memory"))
        limit = f"max{kept_by(plan, 'pod')} {limits}"
        usage = f"{ws} / ({limit} > 0)"
        source = f'{naming.KSM_LIMITS}{{resource="memory"}}'
    return [
        PanelDef(
            title="Working set vs limit per pod",
            key="working-set",
            description=f"Container {plan.container}: {naming.CADVISOR_WORKING_SET} (what the OOM "
            f"killer compares) against the memory limit ({source}).",
            kind="timeseries",
            queries=(
                Query(ws, named(plan, "{{pod}} working set")),
                Query(limit, named(plan, "{{pod}} limit")),
            ),
            unit="bytes",
            min_value=0,
            runbook=panel_runbook(plan, ALERT),
            width=8,
        ),
        PanelDef(
            title="Memory headroom per pod",
            key="memory-headroom",
            description=f"1 − working set / limit per pod ({', '.join(memory.POD_LABELS)}); "
            f"{ALERT} fires below the line.",
            kind="timeseries",
            queries=(Query(f"1 - {usage}", named(plan, "{{pod}}")),),
            unit="percentunit",
            max_value=1,
            steps=alert_steps(plan, KEY, "min_free", below=True),
            runbook=panel_runbook(plan, ALERT),
            width=8,
        ),
    ]


def runbook_queries(plan: ServicePlan, rec: Callable[..., str]) -> dict[str, str | None]:
    """The memory records and ``working_set``: the raw working set of the service's pods."""
    return {
        **memory.record_queries(plan, rec),
        "working_set": memory.runbook_pods(plan, naming.CADVISOR_WORKING_SET),
    }


FAMILY = Family(
    key=KEY,
    spec_field="memoryHeadroom",
    alerts=(ALERT,),
    for_ms=300_000,
    severity="critical",
    params={"min_free": 0.1},
    role=Role.RESOURCE,
    group="memory",
    rules=rules,
    cases=cases,
    inputs=inputs,
    row="memory",
    rank=1,
    panels=panels,
    runbook_queries=runbook_queries,
)
