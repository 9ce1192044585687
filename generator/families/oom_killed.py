"""``spec.alerts.oomKilled``: ``ModelContainerOOMKilled``, a container restarted after the
kernel's OOM killer ended it.

kube-state-metrics' last termination reason (``OOMKilled``) and restart counter (v2.20.0,
docs/metrics/workload/pod-metrics.md); page text in
``templates/runbooks/ModelContainerOOMKilled.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.builders.common import alert_rule
from generator.builders.grafana_json import PanelDef, Query, Step
from generator.builders.guard_inputs import Source
from generator.builders.panel_parts import (
    GREEN,
    RED,
    cluster_filter,
    kept_by,
    named,
    panel_runbook,
    pod_filter,
    scope,
)
from generator.builders.pods import owned, owned_selector
from generator.builders.promtool_series import (
    BASE_PER_MIN,
    Klass,
    container_labels,
    expected_alert,
    fire_and_quiet,
    healthy,
)
from generator.families import memory
from generator.families.base import Family, Role
from generator.promql import Matcher, by, selector

if TYPE_CHECKING:
    from generator.builders.common import Rule
    from generator.builders.guard_inputs import SignalInput
    from generator.plan import ServicePlan

KEY = "oom_killed"
ALERT = naming.ALERT_OOM_KILLED
_OOM = Matcher("reason", "=", "OOMKilled")


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelContainerOOMKilled`` when a container's last termination was an OOM kill and its
    restart count moved within 10m."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    keys = by(plan.keeping(*memory.POD_LABELS))
    on = ", ".join(plan.keeping(*memory.POD_LABELS))
    reason = owned_selector(plan, naming.KSM_LAST_TERMINATED, _OOM)
    restarts = selector(naming.KSM_RESTARTS, plan.container_matchers)
    # The counter moved within 10m: max − min, not increase(). VictoriaMetrics' increase()
    # counts a series' first value (up to 10 × the next step) as an increase from 0, so a
    # restart count of 1 that kube-state-metrics reports anew (its pod moved: a new
    # `instance`) would page for 10 minutes; max − min is the same on both engines.
    rose = f"max_over_time({restarts}[10m]) - min_over_time({restarts}[10m])"
    expr = f"max{keys} {reason} == 1 and on ({on}) max{keys} {owned(plan, rose)} > 0"
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """A restart after an OOM kill fires; the same old OOM kill without a restart is quiet."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    pod = container_labels(plan)
    base = [Klass(BASE_PER_MIN)]
    fire = healthy(plan, base)
    fire.gauge(naming.KSM_RESTARTS, pod, "0x10 1x50")
    fire.gauge(naming.KSM_LAST_TERMINATED, {**pod, "reason": "OOMKilled"}, "1x60")
    quiet = healthy(plan, base)
    quiet.gauge(naming.KSM_LAST_TERMINATED, {**pod, "reason": "OOMKilled"}, "1x60")
    expected = [expected_alert(rules(plan)[0], memory.out_labels(plan, pod), None)]
    return fire_and_quiet(plan, KEY, ALERT, fire, quiet, expected)


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The pods and the restart counter; the termination reason is absent while healthy."""
    if KEY not in plan.alerts:
        return []
    reason = Source(naming.KSM_LAST_TERMINATED, (*plan.container_matchers, _OOM), owned=True)
    return memory.restart_inputs(plan, ALERT, reason)


def panels(plan: ServicePlan) -> list[PanelDef]:
    """Restarts per pod and whether the last termination was an OOM kill."""
    restarts = selector(naming.KSM_RESTARTS, (*plan.container_matchers, *scope(plan), pod_filter()))
    increase = owned(plan, f"increase({restarts}[$__rate_interval])", *cluster_filter(plan))
    oom = memory.panel_pods(plan, naming.KSM_LAST_TERMINATED, _OOM)
    return [
        PanelDef(
            title="Restarts and OOM kills",
            key="restarts",
            description=f"Container restarts per pod (increase of {naming.KSM_RESTARTS} over "
            f"$__rate_interval) and whether the last termination was OOMKilled "
            f"({naming.KSM_LAST_TERMINATED}, 1 = yes).",
            kind="timeseries",
            queries=(
                Query(f"sum{kept_by(plan, 'pod')} {increase}", named(plan, "{{pod}} restarts")),
                Query(
                    f"max{kept_by(plan, 'pod')} {oom}",
                    named(plan, "{{pod}} last termination OOMKilled"),
                ),
            ),
            unit="short",
            min_value=0,
            steps=(Step(None, GREEN), Step(1, RED)),
            runbook=panel_runbook(plan, ALERT),
            width=8,
        )
    ]


def runbook_queries(plan: ServicePlan, rec: Callable[..., str]) -> dict[str, str | None]:
    """The memory records and ``oom``: the last-termination series of the service's pods."""
    return {
        **memory.record_queries(plan, rec),
        "oom": memory.runbook_pods(plan, naming.KSM_LAST_TERMINATED, _OOM),
    }


FAMILY = Family(
    key=KEY,
    spec_field="oomKilled",
    alerts=(ALERT,),
    for_ms=0,
    severity="warning",
    params={},
    role=Role.RESOURCE,
    group="memory",
    rules=rules,
    cases=cases,
    inputs=inputs,
    row="memory",
    rank=2,
    panels=panels,
    runbook_queries=runbook_queries,
)
