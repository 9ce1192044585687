"""A healthy service's synthetic series: traffic, targets up, every signal's healthy reading
(:data:`generator.signals.SIGNALS`), memory, kube-state and GPUs fine. It sits above the
signals (it loops over them) and below the families that build their cases on it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from generator import naming
from generator.parts import gpu_series, promtool_series
from generator.signals import SIGNALS

if TYPE_CHECKING:
    from generator.plan import ServicePlan


def healthy(
    plan: ServicePlan, classes: Sequence[promtool_series.Klass], length: int = 60
) -> promtool_series.Series:
    """A healthy service: targets up, memory and GPUs fine, queue empty, plus ``classes`` traffic;
    gauges hold ``length`` steps."""
    s = promtool_series.traffic(plan, classes)
    steady = f"+0x{length}"
    s.gauge("up", promtool_series.up_labels(plan), "1" + steady)
    for signal in SIGNALS:
        signal.healthy(plan, s, length)
    limit = promtool_series.memory_limit(plan)
    pod = promtool_series.container_labels(plan)
    s.gauge(naming.KSM_LIMITS, {**pod, "resource": "memory"}, f"{limit}{steady}")
    working_set = limit - promtool_series.healthy_free(plan, "memory_headroom", limit, 4)
    s.gauge(naming.CADVISOR_WORKING_SET, pod, f"{working_set}{steady}")
    s.gauge(naming.KSM_RESTARTS, pod, "0" + steady)
    if "oom_killed" in plan.alerts:
        s.gauge(naming.CADVISOR_OOM_EVENTS, pod, "0" + steady)
    promtool_series.kube_state(plan, s, length)
    if plan.gpu_exporter:
        total = gpu_series.TOTAL
        free = promtool_series.healthy_free(plan, "gpu_memory_headroom", total, 2)
        gpu_series.healthy_gpu(plan, s, length, free, promtool_series.healthy_celsius(plan))
    return s
