"""Container memory and restarts of the model pods: limit, usage, headroom, trend, OOM kills, crash loops.

Reads cAdvisor's ``container_memory_working_set_bytes`` (what the OOM killer compares with the
limit) and kube-state-metrics' ``kube_pod_container_resource_limits{resource="memory"}``; when
the spec declares ``deployment.memoryLimit`` it stands in for pods whose limit series is absent.
Neither carries the labels of the service's scrape targets: both are kept to the service's pods
by the owner record of :mod:`generator.builders.pods`, which the group records first.
Restarts and waiting reasons are kube-state-metrics' (v2.20.0, docs/metrics/workload/pod-metrics.md).
"""

from __future__ import annotations

from generator import naming
from generator.builders.common import Rule, alert_rule, recorded
from generator.builders.pods import owned, owned_selector
from generator.plan import ServicePlan
from generator.promql import Matcher, by, selector
from generator.units import format_duration_ms

POD_LABELS = ("container", "namespace", "pod")
LIMIT_RECORD = "service_pod_container:model_memory_limit_bytes:max"
USAGE_RECORD = "service_pod_container:model_memory_working_set_bytes:ratio_limit"


def _working_set(plan: ServicePlan) -> str:
    return f"max{by(plan.keeping(*POD_LABELS))} {owned_selector(plan, naming.CADVISOR_WORKING_SET)}"


def memory_alerts(plan: ServicePlan) -> list[Rule]:
    """``ModelMemoryExhaustionPredicted``, ``ModelContainerOOMKilled``."""
    rules: list[Rule] = []
    on = ", ".join(plan.keeping(*POD_LABELS))
    alert = plan.alerts.get("memory_exhaustion")
    if alert is not None:
        lookback = format_duration_ms(int(alert.params["lookback_ms"]))
        horizon_s = int(alert.params["horizon_ms"]) // 1000
        working_set = selector(naming.CADVISOR_WORKING_SET, plan.container_matchers)
        trend = (
            f"max{by(plan.keeping(*POD_LABELS))} "
            f"{owned(plan, f'predict_linear({working_set}[{lookback}], {horizon_s})')}"
        )
        rules.append(
            alert_rule(
                plan,
                naming.ALERT_MEMORY_EXHAUSTION,
                f"{trend} >= on ({on}) {recorded(plan, LIMIT_RECORD)}",
                alert.for_ms,
                alert.severity,
                horizon=format_duration_ms(int(alert.params["horizon_ms"])),
                lookback=lookback,
            )
        )
    alert = plan.alerts.get("oom_killed")
    if alert is not None:
        reason = owned_selector(
            plan, naming.KSM_LAST_TERMINATED, Matcher("reason", "=", "OOMKilled")
        )
        restarts = selector(naming.KSM_RESTARTS, plan.container_matchers)
        # The counter moved within 10m: max − min, not increase(). VictoriaMetrics' increase()
        # counts a series' first value (up to 10 × the next step) as an increase from 0, so a
        # restart count of 1 that kube-state-metrics reports anew (its pod moved: a new
        # `instance`) would page for 10 minutes; max − min is the same on both engines.
        rose = f"max_over_time({restarts}[10m]) - min_over_time({restarts}[10m])"
        expr = (
            f"max{by(plan.keeping(*POD_LABELS))} {reason} == 1 and on ({on}) "
            f"max{by(plan.keeping(*POD_LABELS))} {owned(plan, rose)} > 0"
        )
        rules.append(alert_rule(plan, naming.ALERT_OOM_KILLED, expr, alert.for_ms, alert.severity))
    return rules


def crash_loop_alerts(plan: ServicePlan) -> list[Rule]:
    """``ModelContainerCrashLooping``: per pod and container, the restart count rose by
    ``minRestarts`` within ``window``, or it rose at all and kube-state-metrics showed the
    container waiting in ``CrashLoopBackOff`` there. Value: restarts within the window.

    Windowed, not an instant state under ``for``: between back-offs the container runs for a
    moment (no waiting reason, no restart), which would reset a ``for``.
    """
    alert = plan.alerts.get("crash_loop")
    if alert is None:
        return []
    window = format_duration_ms(int(alert.params["window_ms"]))
    keys = by(plan.keeping(*POD_LABELS))
    restarts = selector(naming.KSM_RESTARTS, plan.container_matchers)
    # max − min, not increase(): see the OOM rule above.
    rose = f"max{keys} {owned(plan, f'max_over_time({restarts}[{window}]) - min_over_time({restarts}[{window}])')}"
    waiting = selector(
        naming.KSM_WAITING_REASON,
        (*plan.container_matchers, Matcher("reason", "=", naming.CRASH_LOOP_REASON)),
    )
    backoff = f"max{keys} {owned(plan, f'max_over_time({waiting}[{window}])')}"
    on = ", ".join(plan.keeping(*POD_LABELS))
    minimum = int(alert.params["min_restarts"])
    expr = f"{rose} >= {minimum}\nor\n({rose} > 0 and on ({on}) {backoff} == 1)"
    return [
        alert_rule(
            plan,
            naming.ALERT_CRASH_LOOP,
            expr,
            alert.for_ms,
            alert.severity,
            window=window,
            min_restarts=str(minimum),
            reason=naming.CRASH_LOOP_REASON,
        )
    ]
