"""``spec.alerts.memoryExhaustion``: ``ModelMemoryExhaustionPredicted``, a container's working
set on course to reach its limit within ``horizon``.

``predict_linear`` of cAdvisor's working set over ``lookback`` against the limit record of
:func:`generator.families.memory.records`; page text in
``templates/runbooks/ModelMemoryExhaustionPredicted.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families import memory
from generator.families.base import Family, Role
from generator.parts.common import alert_rule, recorded
from generator.parts.pods import owned
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    CHECK_MS,
    Klass,
    container_labels,
    expected_alert,
    family_case,
    memory_limit,
)
from generator.promql import by, selector
from generator.signals.healthy import healthy
from generator.units import format_duration_ms

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import AlertPlan, ServicePlan

KEY = "memory_exhaustion"
ALERT = naming.ALERT_MEMORY_EXHAUSTION


@dataclass(frozen=True)
class Params:
    """``horizon_ms``: how far ahead the trend is extrapolated; ``lookback_ms``: the range it
    is fitted over (both ms)."""

    horizon_ms: int
    lookback_ms: int


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``memory_exhaustion`` alert."""
    return Params(int(alert.params["horizon_ms"]), int(alert.params["lookback_ms"]))


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelMemoryExhaustionPredicted`` while a container's working set, extrapolated over
    ``horizon``, reaches its limit."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    p = params(alert)
    lookback = format_duration_ms(p.lookback_ms)
    working_set = selector(naming.CADVISOR_WORKING_SET, plan.container_matchers)
    keys = by(plan.keeping(*memory.POD_LABELS))
    fit = f"predict_linear({working_set}[{lookback}], {p.horizon_ms // 1000})"
    on = ", ".join(plan.keeping(*memory.POD_LABELS))
    return [
        alert_rule(
            plan,
            ALERT,
            f"max{keys} {owned(plan, fit)} >= on ({on}) {recorded(plan, memory.LIMIT_RECORD)}",
            alert.for_ms,
            alert.severity,
            horizon=format_duration_ms(p.horizon_ms),
            lookback=lookback,
        )
    ]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Fires on a working set from half the limit growing to reach it within one horizon,
    checked once the fit's lookback and the ``for`` have passed; a flat healthy one is quiet."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    limit = memory_limit(plan)
    horizon_s = params(alert).horizon_ms / 1000
    per_min = limit * 60 // int(horizon_s)  # reaches the limit within one horizon
    pod = container_labels(plan)
    base = [Klass(BASE_PER_MIN)]
    fire = healthy(plan, base)
    fire.gauge(naming.CADVISOR_WORKING_SET, pod, f"{limit // 2}+{per_min}x120")
    at = CHECK_MS + alert.for_ms + params(alert).lookback_ms
    rule = rules(plan)[0]
    expected = [expected_alert(rule, memory.out_labels(plan, pod), None)]
    return [
        family_case(plan, f"{ALERT} fires", fire, ALERT, expected, at),
        family_case(plan, f"{ALERT} stays quiet", healthy(plan, base), ALERT, [], at),
    ]


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The pods, working set and limit series."""
    return memory.memory_inputs(plan, ALERT) if KEY in plan.alerts else []


def runbook_queries(plan: ServicePlan, rec: Callable[..., str]) -> dict[str, str | None]:
    """The memory records and ``trend``: the working set extrapolated 30m from 30m."""
    cluster = memory.runbook_cluster(plan)
    working_set = selector(naming.CADVISOR_WORKING_SET, (*plan.container_matchers, *cluster))
    return {
        **memory.record_queries(plan, rec),
        "trend": owned(plan, f"predict_linear({working_set}[30m], 1800)", *cluster),
    }


FAMILY = Family(
    key=KEY,
    spec_field="memoryExhaustion",
    alerts=(ALERT,),
    for_ms=600_000,
    severity="warning",
    params={"horizon_ms": 1_800_000, "lookback_ms": 1_800_000},
    role=Role.RESOURCE,
    group="memory",
    rules=rules,
    cases=cases,
    inputs=inputs,
    runbook_queries=runbook_queries,
)
