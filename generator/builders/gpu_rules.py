"""GPU alerts over the NVML sidecar exporter's metrics (names: nvml_exporter/README.md, Metrics).

Series are selected by ``plan.gpu_matchers``: the sidecar's container and the ``job`` label
that obsgen's own GPU PodMonitor sets, so no pod-name pattern is involved. Device series carry
``uuid`` and ``gpu``; MIG instance series add ``mig_uuid`` and ``gpu_instance_id``; a lost GPU
keeps only ``gpu_info``, ``gpu_device_up`` (0) and its Xid series. Clock event reasons are
NVML's ``nvmlClocksEventReason*`` bits (nvidia-ml-py's pynvml.py), one ``reason`` label each.
"""

from __future__ import annotations

from generator import naming
from generator.builders.common import Rule, alert_rule, counter_target, held_for
from generator.families import FAMILIES
from generator.families.gpu import GPU_LABELS, POD_LABELS
from generator.plan import ServicePlan
from generator.promql import Matcher, born, by, selector
from generator.units import format_duration_ms


def slowdown_matchers(plan: ServicePlan) -> tuple[Matcher, ...]:
    """Matchers of the hardware clock event reasons ``GPUHardwareSlowdown`` reads."""
    reasons = "|".join(naming.GPU_HARDWARE_SLOWDOWN_REASONS)
    return (*plan.gpu_matchers, Matcher("reason", "=~", reasons))


def gpu_slowdown_alerts(plan: ServicePlan) -> list[Rule]:
    """``GPUHardwareSlowdown``: a hardware reason (``hw_slowdown``, ``hw_thermal_slowdown``,
    ``hw_power_brake_slowdown``) held the GPU's clocks down for ``for`` in total within
    ``window`` (:func:`held_for`: a brake that comes and goes counts). Per GPU and reason;
    value: seconds within the window."""
    alert = plan.alerts.get("gpu_hardware_slowdown")
    if alert is None:
        return []
    window = int(alert.params["window_ms"])
    active = selector(naming.GPU_CLOCK_EVENT_ACTIVE, slowdown_matchers(plan))
    expr = held_for(
        plan, f"max{by(plan.keeping(*GPU_LABELS, 'reason'))} ({active}) == 1", alert.for_ms, window
    )
    return [
        alert_rule(
            plan,
            naming.ALERT_GPU_SLOWDOWN,
            expr,
            0,
            alert.severity,
            {naming.WINDOW: format_duration_ms(window)},
            held=format_duration_ms(max(alert.for_ms, plan.scrape_interval_ms)),
            window=format_duration_ms(window),
        )
    ]


def gpu_alerts(plan: ServicePlan) -> list[Rule]:
    """The ``gpu`` alerts of :data:`generator.families.FAMILIES` (``GPUMemoryHeadroomLow``,
    ``GPUTemperatureHigh``), then ``GPUXidErrors``, ``GPUExporterDown``, ``GPUDeviceLost``,
    ``GPUHardwareSlowdown``: those the plan enables (none without the sidecar)."""
    if not plan.gpu_exporter:
        return []
    rules: list[Rule] = []
    m = plan.gpu_matchers
    for family in FAMILIES:
        if family.group == "gpu":
            rules += family.rules(plan)
    alert = plan.alerts.get("gpu_xid_errors")
    if alert is not None:
        xid = selector(naming.GPU_XID_ERRORS, m)
        labels = plan.keeping(*GPU_LABELS, "xid")
        # A counter first seen at 1 has no increase(): born() counts a series created during
        # the sidecar's life, never one that came with it (a new pod, a Prometheus restart).
        first = born(xid, "10m", counter_target(plan, m, target_labels_only=False))
        expr = f"sum{by(labels)} (increase({xid}[10m])) > 0 or sum{by(labels)} ({first}) > 0"
        rules.append(alert_rule(plan, naming.ALERT_GPU_XID, expr, alert.for_ms, alert.severity))
    alert = plan.alerts.get("gpu_exporter_down")
    if alert is not None:
        nvml_up = selector(naming.GPU_EXPORTER_UP, m)
        up = selector("up", m)
        pods = plan.keeping(*POD_LABELS)
        expr = f"max{by(pods)} ({nvml_up}) == 0 or max{by(pods)} ({up}) == 0 or absent({up})"
        rules.append(
            alert_rule(plan, naming.ALERT_GPU_EXPORTER_DOWN, expr, alert.for_ms, alert.severity)
        )
    alert = plan.alerts.get("gpu_device_lost")
    if alert is not None:
        # Only under a working exporter: with NVML down there are no device series at all,
        # and GPUExporterDown says so.
        pods = plan.keeping(*POD_LABELS)
        device_up = f"max{by(plan.keeping(*GPU_LABELS))} ({selector(naming.GPU_DEVICE_UP, m)})"
        nvml_up = f"max{by(pods)} ({selector(naming.GPU_EXPORTER_UP, m)})"
        expr = f"{device_up} == 0 and on ({', '.join(pods)}) {nvml_up} == 1"
        rules.append(alert_rule(plan, naming.ALERT_GPU_LOST, expr, alert.for_ms, alert.severity))
    return rules + gpu_slowdown_alerts(plan)
