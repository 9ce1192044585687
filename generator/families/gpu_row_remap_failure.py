"""``spec.alerts.gpuRowRemapFailure``: ``GPURowRemapFailed``, a GPU's memory row remapping
failed (sidecar ``gpu_row_remap_failure``, dcgm-exporter ``DCGM_FI_DEV_ROW_REMAP_FAILURE``,
both 1): the GPU has run out of spare rows and NVIDIA's RMA policy applies (A100 memory
error management: row-remapping failure). Page text in
``templates/runbooks/GPURowRemapFailed.md.j2``.
"""

from __future__ import annotations

from generator import dcgm_fields, naming
from generator.families import gpu_health

KEY = "gpu_row_remap_failure"
ALERT = naming.ALERT_GPU_REMAP_FAILED
METRIC = naming.GPU_ROW_REMAP_FAILURE

HEALTH = gpu_health.Reading(
    key=KEY,
    spec_field="gpuRowRemapFailure",
    alert=ALERT,
    rank=8,
    severity="critical",
    # The failure flag of a GPU is set; set at 10m it fires.
    expr=lambda plan: gpu_health.flagged(plan, METRIC),
    faults=((METRIC, "0x10 1x50", None),),
    # Guarded on each GPU that answers NVML, excused where the sidecar reports the row remapper
    # unsupported (before Ampere); under dcgm, the row-remap failure field (enabled by the
    # default counters file).
    signal="gpuRowRemap",
    metric=METRIC,
    readings=("remapped_rows",),
    what="row-remap failure flag",
    dcgm_field=dcgm_fields.ROW_REMAP_FAILURE,
    runbook=(("gpu_remap_failed", METRIC),),
)
rules, cases, inputs = HEALTH.rules, HEALTH.cases, HEALTH.inputs
FAMILY = HEALTH.family()
