"""``spec.alerts.gpuRowRemapFailure``: ``GPURowRemapFailed``, a GPU's memory row remapping
failed (sidecar ``gpu_row_remap_failure``, dcgm-exporter ``DCGM_FI_DEV_ROW_REMAP_FAILURE``,
both 1): the GPU has run out of spare rows and NVIDIA's RMA policy applies (A100 memory
error management: row-remapping failure). Page text in
``templates/runbooks/GPURowRemapFailed.md.j2``.
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

KEY = "gpu_row_remap_failure"
ALERT = naming.ALERT_GPU_REMAP_FAILED


def rules(plan: ServicePlan) -> list[Rule]:
    """One rule: the failure flag of a GPU is set."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    expr = gpu_health.flagged(plan, naming.GPU_ROW_REMAP_FAILURE)
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """The flag set at 10m fires; a healthy GPU (flag 0) stays quiet."""
    if KEY not in plan.alerts:
        return []
    faults: list[gpu_health.Fault] = [(naming.GPU_ROW_REMAP_FAILURE, "0x10 1x50", None)]
    return gpu_health.cases(plan, KEY, rules(plan)[0], faults)


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The failure flag of each GPU that answers NVML (excused where the sidecar reports the
    row remapper unsupported: before Ampere); under dcgm, the row-remap failure field
    (enabled by the default counters file)."""
    if KEY not in plan.alerts:
        return []
    if gpu.dcgm(plan):
        return [dcgm.field_input(plan, "gpuRowRemap", (dcgm_fields.ROW_REMAP_FAILURE,), ALERT)]
    metric = naming.GPU_ROW_REMAP_FAILURE
    readings = ("remapped_rows",)
    what = "row-remap failure flag"
    return [gpu_health.sidecar_input(plan, "gpuRowRemap", ALERT, metric, (), readings, what)]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``gpu_remap_failed``: the reading of the GPU its page checks first."""
    return {"gpu_remap_failed": gpu.runbook_series(plan, naming.GPU_ROW_REMAP_FAILURE)}


FAMILY = Family(
    key=KEY,
    spec_field="gpuRowRemapFailure",
    alerts=(ALERT,),
    for_ms=0,
    severity="critical",
    params={},
    role=Role.GPU,
    group="gpu",
    rules=rules,
    cases=cases,
    sidecar=True,
    inputs=inputs,
    row="gpu",
    runbook_queries=runbook_queries,
    rank=8,
)
