"""``spec.alerts.gpuUncorrectableRemaps``: ``GPUUncorrectableRowsRemapped``, the count of a GPU's
rows remapped for uncorrectable errors rose within 10m (sidecar
``gpu_remapped_rows_total{cause="uncorrectable"}``; dcgm-exporter
``DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS``; counters, rows). Page text in
``templates/runbooks/GPUUncorrectableRowsRemapped.md.j2``.

Why beside the ECC and pending-remap alerts: docs/rules.md, "GPU rows remapped after
uncorrectable errors".
"""

from __future__ import annotations

from generator import dcgm_fields, naming
from generator.families import gpu_health
from generator.promql import Matcher

KEY = "gpu_uncorrectable_remaps"
ALERT = naming.ALERT_GPU_UNCORRECTABLE_REMAP
METRIC = naming.GPU_REMAPPED_ROWS
UNCORRECTABLE = (Matcher("cause", "=", "uncorrectable"),)

HEALTH = gpu_health.Reading(
    key=KEY,
    spec_field="gpuUncorrectableRemaps",
    alert=ALERT,
    rank=15,
    # The GPU's count of rows remapped for uncorrectable errors rose within 10m.
    expr=lambda plan: gpu_health.rose(plan, ((METRIC, UNCORRECTABLE),)),
    # One uncorrectable remap (2 -> 3 at 11m) fires; a correctable remap and old uncorrectable
    # remaps (a steady count of 3) stay quiet.
    faults=((METRIC, "2x10 3x50", "uncorrectable"),),
    quiet=(
        ("a correctable remap", ((METRIC, "0x10 1x50", "correctable"),)),
        ("remaps before the window", ((METRIC, "3x60", "uncorrectable"),)),
    ),
    # Guarded on each GPU that answers NVML, excused where the sidecar reports the row remapper
    # unsupported (before Ampere); under dcgm, the field (in every default counters file).
    signal="gpuRowRemap",
    metric=METRIC,
    matchers=UNCORRECTABLE,
    readings=("remapped_rows",),
    what="count of rows remapped for uncorrectable errors",
    dcgm_field=dcgm_fields.UNCORRECTABLE_REMAPPED_ROWS,
    # Its page checks the remapped-row counts (both causes) first, then the pending flag.
    runbook=(
        ("gpu_remapped_rows", METRIC),
        ("gpu_remaps_pending", naming.GPU_ROW_REMAP_PENDING),
    ),
)
rules, cases, inputs = HEALTH.rules, HEALTH.cases, HEALTH.inputs
FAMILY = HEALTH.family()
