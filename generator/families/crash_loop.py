"""``spec.alerts.crashLoop``: ``ModelContainerCrashLooping``, a container restarting again
and again, or restarting while it waits in ``CrashLoopBackOff``.

kube-state-metrics' restart counter and waiting reason (v2.20.0,
docs/metrics/workload/pod-metrics.md); page text in
``templates/runbooks/ModelContainerCrashLooping.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import gap_bridge, naming
from generator.families import memory
from generator.families.base import Family, Role
from generator.parts import replicas
from generator.parts.common import alert_rule
from generator.parts.grafana_json import PanelDef, Query, Step
from generator.parts.guard_inputs import Source
from generator.parts.panel_parts import (
    GREEN,
    ORANGE,
    cluster_filter,
    kept_by,
    named,
    panel_runbook,
    pod_filter,
    scope,
)
from generator.parts.pods import owned
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    INTERVAL_MS,
    Klass,
    Series,
    alert_test,
    container_labels,
    expected_alert,
    healthy_replicas,
    steps_until,
)
from generator.parts.replica_series import set_replicas, switch
from generator.parts.windowed_series import Minutes, gauge_group, values_text
from generator.promql import Matcher, by, selector
from generator.signals.healthy import healthy
from generator.units import format_duration_ms

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import AlertPlan, ServicePlan

KEY = "crash_loop"
ALERT = naming.ALERT_CRASH_LOOP
_WAITING = Matcher("reason", "=", naming.CRASH_LOOP_REASON)


@dataclass(frozen=True)
class Params:
    """``window_ms``: the window restarts are counted in; ``min_restarts``: the restarts
    within it that fire."""

    window_ms: int
    min_restarts: int


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``crash_loop`` alert."""
    return Params(int(alert.params["window_ms"]), int(alert.params["min_restarts"]))


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelContainerCrashLooping``: per pod and container, the restart count rose by
    ``minRestarts`` within ``window``, or it rose at all and kube-state-metrics showed the
    container waiting in ``CrashLoopBackOff`` there. Value: restarts within the window.

    Windowed, not an instant state under ``for``: between back-offs the container runs for a
    moment (no waiting reason, no restart), which would reset a ``for``. Silent while the
    workload is desired at 0 replicas (:func:`generator.parts.replicas.unless_scaled_to_zero`).
    """
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    window = format_duration_ms(params(alert).window_ms)
    keys = by(plan.keeping(*memory.POD_LABELS))
    restarts = selector(naming.KSM_RESTARTS, plan.container_matchers)
    # max − min, not increase(): see the OOM rule (generator.families.oom_killed); bridged
    # across a hole in the samples longer than the window (generator.gap_bridge).
    in_window = f"max_over_time({restarts}[{window}]) - min_over_time({restarts}[{window}])"
    span = gap_bridge.bridge(plan.max_gap_ms)
    rose = f"max{keys} {owned(plan, gap_bridge.widest(in_window, restarts, window, span))}"
    waiting = selector(naming.KSM_WAITING_REASON, (*plan.container_matchers, _WAITING))
    backoff = f"max{keys} {owned(plan, f'max_over_time({waiting}[{window}])')}"
    on = ", ".join(plan.keeping(*memory.POD_LABELS))
    minimum = params(alert).min_restarts
    expr = f"{rose} >= {minimum}\nor\n({rose} > 0 and on ({on}) {backoff} == 1)"
    # A crash-looping pod being scaled away to zero replicas is no page.
    expr = replicas.unless_scaled_to_zero(plan, expr)
    return [
        alert_rule(
            plan,
            ALERT,
            expr,
            alert.for_ms,
            alert.severity,
            window=window,
            min_restarts=str(minimum),
            reason=naming.CRASH_LOOP_REASON,
        )
    ]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """``minRestarts`` restarts within the window fires; fewer restarts while kube-state-metrics
    shows the container waiting in ``CrashLoopBackOff`` (a back-off longer than the restarts'
    pace) fires; one restart without a back-off (an OOM kill, a rollout's new container)
    stays quiet; restarts of a pod scaled away to zero replicas stay quiet."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    window = params(alert).window_ms
    minimum = params(alert).min_restarts
    rule = rules(plan)[0]
    pod = container_labels(plan)
    out = memory.out_labels(plan, pod)
    # The window holds two healthy minutes and every restart (one a minute from 5m on; at
    # most window − 2 minutes of them, which resolve() checks).
    at = 3 * INTERVAL_MS + window
    length = steps_until(at)

    def restarting(counts: Minutes, waiting: Minutes = ()) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)], length)
        s.gauge(naming.KSM_RESTARTS, pod, values_text(counts))
        if waiting:
            labels = {**pod, "reason": naming.CRASH_LOOP_REASON}
            s.gauge(naming.KSM_WAITING_REASON, labels, values_text(waiting))
        return s

    def restarts(count: int) -> Minutes:
        values = [0.0] * 5 + [float(c) for c in range(1, count + 1)]
        return values + [float(count)] * (length - len(values))

    few = max(minimum - 1, 1)
    waiting: Minutes = ([None] * 5 + [1.0, None] * length)[:length]
    name = rule["alert"]
    one = "fires" if minimum == 1 else "stays quiet"
    return [
        gauge_group(
            f"{name}: {minimum} restart(s) within {format_duration_ms(window)} fires",
            restarting(restarts(minimum)),
            length,
            [alert_test(at, name, [expected_alert(rule, out, float(minimum))])],
        ),
        gauge_group(
            f"{name}: {few} restart(s) while waiting in {naming.CRASH_LOOP_REASON} fires",
            restarting(restarts(few), waiting),
            length,
            [alert_test(at, name, [expected_alert(rule, out, float(few))])],
        ),
        gauge_group(
            f"{name}: one restart without a back-off {one}",
            restarting(restarts(1)),
            length,
            [alert_test(at, name, [] if minimum > 1 else [expected_alert(rule, out, 1.0)])],
        ),
        gauge_group(
            f"{name}: {minimum} restart(s) of a pod then scaled to zero (desired 0) stays quiet",
            scaled_away(plan, restarting(restarts(minimum)), at // INTERVAL_MS - 1, length),
            length,
            [alert_test(at, name, [])],
        ),
    ]


def scaled_away(plan: ServicePlan, s: Series, at_min: int, length: int) -> Series:
    """``s`` with the workload desired at 0 replicas from minute ``at_min`` on (its last
    replica available a minute longer, while it terminates)."""
    n = healthy_replicas(plan)
    set_replicas(s, plan, switch(n, 0, at_min, length), switch(n, 0, at_min + 1, length))
    return s


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The pods and the restart counter; the waiting reason is absent while healthy."""
    if KEY not in plan.alerts:
        return []
    reason = Source(naming.KSM_WAITING_REASON, (*plan.container_matchers, _WAITING), owned=True)
    return memory.restart_inputs(plan, ALERT, reason)


def panels(plan: ServicePlan) -> list[PanelDef]:
    """Restarts per pod, and whether the container waits in ``CrashLoopBackOff``; none
    without the alert."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    window = format_duration_ms(params(alert).window_ms)
    waiting = memory.panel_pods(plan, naming.KSM_WAITING_REASON, _WAITING)
    restart_series = selector(
        naming.KSM_RESTARTS, (*plan.container_matchers, *scope(plan), pod_filter())
    )
    increase = owned(plan, f"increase({restart_series}[$__rate_interval])", *cluster_filter(plan))
    return [
        PanelDef(
            title="Crash loops",
            key="crash-loops",
            description=f"Restarts per pod (increase of {naming.KSM_RESTARTS} over "
            f"$__rate_interval) and whether the container waits in {naming.CRASH_LOOP_REASON} "
            f"({naming.KSM_WAITING_REASON}, 1 = yes). {ALERT} fires at "
            f"{params(alert).min_restarts} restarts within {window}, or at any restart "
            "while it waits.",
            kind="timeseries",
            queries=(
                Query(f"sum{kept_by(plan, 'pod')} {increase}", named(plan, "{{pod}} restarts")),
                Query(
                    # 0 while it runs: the waiting series exists only while it waits.
                    f"max{kept_by(plan, 'pod')} ({waiting}) or 0 * max{kept_by(plan, 'pod')} "
                    f"({memory.panel_pods(plan, naming.KSM_RESTARTS)})",
                    named(plan, f"{{{{pod}}}} {naming.CRASH_LOOP_REASON}"),
                ),
            ),
            unit="short",
            min_value=0,
            steps=(Step(None, GREEN), Step(1, ORANGE)),
            runbook=panel_runbook(plan, ALERT),
            width=24,
            height=6,
        )
    ]


def runbook_queries(plan: ServicePlan, rec: Callable[..., str]) -> dict[str, str | None]:
    """``restarts`` and ``crash_loop``: the restart counter and every waiting reason of the
    service's pods, in the alert's cluster."""
    return {
        "restarts": memory.runbook_pods(plan, naming.KSM_RESTARTS),
        "crash_loop": memory.runbook_pods(
            plan, naming.KSM_WAITING_REASON, Matcher("reason", "!=", "")
        ),
    }


FAMILY = Family(
    key=KEY,
    spec_field="crashLoop",
    alerts=(ALERT,),
    for_ms=0,
    severity="warning",
    params={"window_ms": 900_000, "min_restarts": 3},
    role=Role.RESOURCE,
    group="memory",
    rules=rules,
    cases=cases,
    inputs=inputs,
    row="memory",
    rank=3,
    panels=panels,
    runbook_queries=runbook_queries,
    windowed=True,
)
