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
from generator.builders.common import Rule, alert_rule
from generator.builders.pods import owned, owned_selector
from generator.plan import ServicePlan
from generator.promql import Matcher, by, selector
from generator.units import format_duration_ms

POD_LABELS = ("container", "namespace", "pod")
LIMIT_RECORD = "service_pod_container:model_memory_limit_bytes:max"
USAGE_RECORD = "service_pod_container:model_memory_working_set_bytes:ratio_limit"


def _working_set(plan: ServicePlan) -> str:
    return f"max{by(plan.keeping(*POD_LABELS))} {owned_selector(plan, naming.CADVISOR_WORKING_SET)}"


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
