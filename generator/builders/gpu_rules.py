"""GPU alerts over the NVML sidecar exporter's metrics (DESIGN §5 names)."""

from __future__ import annotations

from generator import naming
from generator.builders.common import Rule, alert_rule
from generator.plan import ServicePlan
from generator.promql import by, selector
from generator.units import decimal_str

GPU_LABELS = ("namespace", "pod", "uuid")


def gpu_alerts(plan: ServicePlan) -> list[Rule]:
    """``GPUMemoryHeadroomLow``, ``GPUTemperatureHigh``, ``GPUXidErrors``, ``GPUExporterDown``."""
    if not plan.gpu_exporter:
        return []
    rules: list[Rule] = []
    m = plan.gpu_matchers
    alert = plan.alerts.get("gpu_memory_headroom")
    if alert is not None:
        free = f"max{by(plan.keeping(*GPU_LABELS))} ({selector(naming.GPU_MEMORY_FREE, m)})"
        total = f"max{by(plan.keeping(*GPU_LABELS))} ({selector(naming.GPU_MEMORY_TOTAL, m)})"
        min_free = float(alert.params["min_free"])
        rules.append(
            alert_rule(
                plan,
                naming.ALERT_GPU_MEMORY_HEADROOM,
                f"{free} / ({total} > 0) < {decimal_str(min_free)}",
                alert.for_ms,
                alert.severity,
                min_free=decimal_str(min_free),
            )
        )
    alert = plan.alerts.get("gpu_temperature")
    if alert is not None:
        rules.append(
            alert_rule(
                plan,
                naming.ALERT_GPU_TEMPERATURE,
                f"max{by(plan.keeping(*GPU_LABELS))} ({selector(naming.GPU_TEMPERATURE, m)}) > {decimal_str(alert.params['max'])}",
                alert.for_ms,
                alert.severity,
                max=decimal_str(alert.params["max"]),
            )
        )
    alert = plan.alerts.get("gpu_xid_errors")
    if alert is not None:
        xid = selector(naming.GPU_XID_ERRORS, m)
        labels = plan.keeping(*GPU_LABELS, "xid")
        # A counter first seen at 1 has no increase(); "unless … offset" catches new series.
        expr = f"sum{by(labels)} (increase({xid}[10m])) > 0 or sum{by(labels)} ({xid} unless {xid} offset 10m) > 0"
        rules.append(alert_rule(plan, naming.ALERT_GPU_XID, expr, alert.for_ms, alert.severity))
    alert = plan.alerts.get("gpu_exporter_down")
    if alert is not None:
        nvml_up = selector(naming.GPU_EXPORTER_UP, m)
        up = selector("up", m)
        pods = plan.keeping("namespace", "pod")
        expr = f"max{by(pods)} ({nvml_up}) == 0 or max{by(pods)} ({up}) == 0 or absent({up})"
        rules.append(
            alert_rule(plan, naming.ALERT_GPU_EXPORTER_DOWN, expr, alert.for_ms, alert.severity)
        )
    return rules
