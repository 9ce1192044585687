"""``spec.alerts.gpuPagesRetired``: ``GPUUncorrectablePagesRetired``, a GPU retired a memory page
after a double-bit (uncorrectable) ECC error within 10m (sidecar
``gpu_retired_pages_total{cause="double_bit_ecc"}`` from NVML ``nvmlDeviceGetRetiredPages``;
dcgm-exporter ``DCGM_FI_DEV_RETIRED_DBE``; counters, pages). Page retirement is how GPUs before
Ampere (Kepler to Turing, e.g. V100, T4) take bad memory out of use; Ampere and later remap rows
instead (``GPUUncorrectableRowsRemapped``) and report no retired pages: the guard is excused
there (the sidecar reports ``retired_pages`` unsupported; under dcgm, a GPU that reports
remapped rows has a row remapper). Page text in
``templates/runbooks/GPUUncorrectablePagesRetired.md.j2``.
"""

from __future__ import annotations

from generator import dcgm_fields, naming
from generator.families import gpu_health
from generator.promql import Matcher

KEY = "gpu_pages_retired"
ALERT = naming.ALERT_GPU_PAGES_RETIRED
METRIC = naming.GPU_RETIRED_PAGES
DOUBLE_BIT = (Matcher("cause", "=", "double_bit_ecc"),)
SIGNAL = "gpuRetiredPages"
READINGS = ("retired_pages",)

HEALTH = gpu_health.Reading(
    key=KEY,
    spec_field="gpuPagesRetired",
    alert=ALERT,
    rank=16,
    # The GPU's count of pages retired for double-bit errors rose within 10m.
    expr=lambda plan: gpu_health.rose(plan, ((METRIC, DOUBLE_BIT),)),
    # One double-bit retirement (1 -> 2 at 11m) fires; a single-bit retirement and old
    # retirements (a steady 2) stay quiet.
    faults=((METRIC, "1x10 2x50", "double_bit_ecc"),),
    quiet=(
        ("a single-bit retirement", ((METRIC, "0x10 1x50", "single_bit_ecc"),)),
        ("retirements before the window", ((METRIC, "2x60", "double_bit_ecc"),)),
    ),
    # Guarded on each GPU that answers NVML, excused where the sidecar reports page retirement
    # unsupported (Ampere and later); under dcgm, excused where the GPU reports remapped rows.
    signal=SIGNAL,
    metric=METRIC,
    matchers=DOUBLE_BIT,
    readings=READINGS,
    what="count of pages retired for double-bit errors",
    dcgm_field=dcgm_fields.RETIRED_DBE,
    dcgm_excused_by=dcgm_fields.UNCORRECTABLE_REMAPPED_ROWS,
    # Its page reads the retired-page counts (both causes) and the pages waiting for a reset.
    runbook=(
        ("gpu_retired_pages", METRIC),
        ("gpu_retirement_pending", naming.GPU_RETIRED_PAGES_PENDING),
    ),
)
rules, cases, inputs = HEALTH.rules, HEALTH.cases, HEALTH.inputs
FAMILY = HEALTH.family()
