"""``spec.alerts.gpuRowRemapPending``: ``GPURowRemapPending``, a GPU has a memory row
remapping pending (sidecar ``gpu_row_remap_pending``, dcgm-exporter
``DCGM_FI_DEV_ROW_REMAP_PENDING``, both 1) for ``for``: it takes effect at the next GPU reset,
and until then the GPU runs on (NVIDIA A100 memory error management: "Row-remapping pending
flag"). Page text in ``templates/runbooks/GPURowRemapPending.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from generator import dcgm_fields, naming
from generator.families import dcgm, gpu, gpu_health
from generator.families.base import Family, Role
from generator.parts.common import alert_rule

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import ServicePlan

KEY = "gpu_row_remap_pending"
ALERT = naming.ALERT_GPU_REMAP_PENDING


def rules(plan: ServicePlan) -> list[Rule]:
    """One rule: the pending flag of a GPU is set."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    expr = gpu_health.flagged(plan, naming.GPU_ROW_REMAP_PENDING)
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """The flag set from the start fires after ``for``; a healthy GPU stays quiet."""
    if KEY not in plan.alerts:
        return []
    faults: list[gpu_health.Fault] = [(naming.GPU_ROW_REMAP_PENDING, "1+0x60", None)]
    return gpu_health.cases(plan, KEY, rules(plan)[0], faults)


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The pending flag of each GPU that answers NVML (excused where the sidecar reports the
    row remapper unsupported: before Ampere); under dcgm, the pending-remap field (in no
    default counters file)."""
    if KEY not in plan.alerts:
        return []
    if gpu.dcgm(plan):
        return [dcgm.field_input(plan, "gpuRowRemap", (dcgm_fields.ROW_REMAP_PENDING,), ALERT)]
    metric = naming.GPU_ROW_REMAP_PENDING
    readings = ("remapped_rows",)
    what = "row-remap pending flag"
    return [gpu_health.sidecar_input(plan, "gpuRowRemap", ALERT, metric, (), readings, what)]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``gpu_remap_pending``: the reading of the GPU its page checks first."""
    return {"gpu_remap_pending": gpu.runbook_series(plan, naming.GPU_ROW_REMAP_PENDING)}


FAMILY = Family(
    key=KEY,
    spec_field="gpuRowRemapPending",
    alerts=(ALERT,),
    for_ms=600_000,
    severity="warning",
    params={},
    role=Role.GPU,
    group="gpu",
    rules=rules,
    cases=cases,
    sidecar=True,
    inputs=inputs,
    row="gpu",
    runbook_queries=runbook_queries,
    rank=9,
)
