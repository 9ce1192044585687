"""``spec.alerts.gpuPageRetirementPending``: ``GPUPageRetirementPending``, a GPU has memory pages
waiting to be retired for ``for`` (sidecar ``gpu_retired_pages_pending`` 1, from NVML
``nvmlDeviceGetRetiredPagesPendingStatus``; dcgm-exporter ``DCGM_FI_DEV_RETIRED_PENDING`` above
0, a count of pages): the retirement takes effect only when the driver reloads (a GPU reset or a
reboot), and until then the bad page can still be handed out. Before Ampere only (Ampere and
later remap rows: ``GPURowRemapPending``); the guard is excused there as for
:mod:`generator.families.gpu_pages_retired`. Page text in
``templates/runbooks/GPUPageRetirementPending.md.j2``.
"""

from __future__ import annotations

from generator import dcgm_fields, naming
from generator.families import gpu, gpu_health, gpu_pages_retired
from generator.promql import by

KEY = "gpu_page_retirement_pending"
ALERT = naming.ALERT_GPU_RETIREMENT_PENDING
METRIC = naming.GPU_RETIRED_PAGES_PENDING

HEALTH = gpu_health.Reading(
    key=KEY,
    spec_field="gpuPageRetirementPending",
    alert=ALERT,
    rank=17,
    for_ms=600_000,
    # Pages wait for retirement on a GPU (the sidecar's flag 1, dcgm's count > 0).
    expr=lambda plan: f"max{by(plan.keeping(*gpu.GPU_LABELS))} ({gpu.read(plan, METRIC)}) > 0",
    # Pending from the start fires after `for`; a pending page that a reset retired before
    # `for` ran out (1 for 5m, then 0) stays quiet.
    faults=((METRIC, "1+0x60", None),),
    quiet=(("a retirement a reset completed", ((METRIC, "1x5 0x55", None),)),),
    # Guarded as gpu_pages_retired: excused where the GPU retires no pages (Ampere and later).
    signal=gpu_pages_retired.SIGNAL,
    metric=METRIC,
    readings=gpu_pages_retired.READINGS,
    what="page retirement pending status",
    dcgm_field=dcgm_fields.RETIRED_PENDING,
    dcgm_excused_by=dcgm_fields.UNCORRECTABLE_REMAPPED_ROWS,
    runbook=(("gpu_retirement_pending", METRIC),),
)
rules, cases, inputs = HEALTH.rules, HEALTH.cases, HEALTH.inputs
FAMILY = HEALTH.family()
