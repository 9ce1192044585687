"""``spec.alerts.gpuPcieReplays``: ``GPUPCIeReplays``, a GPU's PCIe replays (link-level
retransmissions) above ``max`` a minute over 10m (sidecar ``gpu_pcie_replay_errors_total``,
dcgm-exporter ``DCGM_FI_DEV_PCIE_REPLAY_COUNTER``). Default ``max`` 8: DCGM's health watch
limit ``DCGM_LIMIT_MAX_PCIREPLAY_RATE`` ("8 replays per minute is the maximum recommended",
NVIDIA/DCGM ``common/DcgmGPUHardwareLimits.h``). Page text in
``templates/runbooks/GPUPCIeReplays.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import dcgm_fields, naming
from generator.families import dcgm, gpu, gpu_health
from generator.families.base import Family, Role
from generator.parts.common import alert_rule
from generator.promql import go_float
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import AlertPlan, ServicePlan

KEY = "gpu_pcie_replays"
ALERT = naming.ALERT_GPU_PCIE


@dataclass(frozen=True)
class Params:
    """``max``: the errors per second above which it alerts."""

    max: float


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``gpu_pcie_replays`` alert."""
    return Params(float(alert.params["max"]))


def rules(plan: ServicePlan) -> list[Rule]:
    """One rule: a GPU's PCIe replays a minute above ``max``."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    limit = params(alert).max
    expr = gpu_health.per_minute(plan, naming.GPU_PCIE_REPLAYS, limit)
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity, max=decimal_str(limit))]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Replays at twice ``max`` (plus one) a minute fire; a healthy GPU, and replays at half
    of ``max``, stay quiet."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    limit = params(alert).max
    faults: list[gpu_health.Fault] = [
        (naming.GPU_PCIE_REPLAYS, f"0+{go_float(2 * limit + 1)}x60", None)
    ]
    quiet: list[tuple[str, list[gpu_health.Fault]]] = []
    if limit > 0:
        slow = f"0+{go_float(limit / 2)}x60"
        quiet.append(
            (
                f"replays at {decimal_str(limit / 2)} a minute",
                [(naming.GPU_PCIE_REPLAYS, slow, None)],
            )
        )
    return gpu_health.cases(plan, KEY, rules(plan)[0], faults, quiet)


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The PCIe replay count of each GPU that answers NVML (excused where the sidecar reports
    it unsupported); under dcgm, the PCIe replay field (enabled by the default counters file)."""
    if KEY not in plan.alerts:
        return []
    if gpu.dcgm(plan):
        return [dcgm.field_input(plan, "gpuPcieReplays", (dcgm_fields.PCIE_REPLAY,), ALERT)]
    metric = naming.GPU_PCIE_REPLAYS
    readings = ("pcie_replays",)
    what = "PCIe replay count"
    return [gpu_health.sidecar_input(plan, "gpuPcieReplays", ALERT, metric, (), readings, what)]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``gpu_pcie``: the reading of the GPU its page checks first."""
    return {"gpu_pcie": gpu.runbook_series(plan, naming.GPU_PCIE_REPLAYS)}


FAMILY = Family(
    key=KEY,
    spec_field="gpuPcieReplays",
    alerts=(ALERT,),
    for_ms=600_000,
    severity="warning",
    params={"max": 8.0},
    role=Role.GPU,
    group="gpu",
    rules=rules,
    cases=cases,
    sidecar=True,
    inputs=inputs,
    row="gpu",
    runbook_queries=runbook_queries,
    rank=11,
)
