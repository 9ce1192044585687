"""``spec.alerts.gpuRowRemapPending``: ``GPURowRemapPending``, a GPU has a memory row
remapping pending (sidecar ``gpu_row_remap_pending``, dcgm-exporter
``DCGM_FI_DEV_ROW_REMAP_PENDING``, both 1) for ``for``: it takes effect at the next GPU reset,
and until then the GPU runs on (NVIDIA A100 memory error management: "Row-remapping pending
flag"). Page text in ``templates/runbooks/GPURowRemapPending.md.j2``.
"""

from __future__ import annotations

from generator import dcgm_fields, naming
from generator.families import gpu_health

KEY = "gpu_row_remap_pending"
ALERT = naming.ALERT_GPU_REMAP_PENDING
METRIC = naming.GPU_ROW_REMAP_PENDING

HEALTH = gpu_health.Reading(
    key=KEY,
    spec_field="gpuRowRemapPending",
    alert=ALERT,
    rank=9,
    for_ms=600_000,
    # The pending flag of a GPU is set; set from the start it fires after `for`.
    expr=lambda plan: gpu_health.flagged(plan, METRIC),
    faults=((METRIC, "1+0x60", None),),
    # Guarded on each GPU that answers NVML, excused where the sidecar reports the row remapper
    # unsupported (before Ampere); under dcgm, the pending-remap field (in no default file).
    signal="gpuRowRemap",
    metric=METRIC,
    readings=("remapped_rows",),
    what="row-remap pending flag",
    dcgm_field=dcgm_fields.ROW_REMAP_PENDING,
    runbook=(("gpu_remap_pending", METRIC),),
)
rules, cases, inputs = HEALTH.rules, HEALTH.cases, HEALTH.inputs
FAMILY = HEALTH.family()
