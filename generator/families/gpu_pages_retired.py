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

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from generator import dcgm_fields, naming
from generator.families import dcgm, gpu, gpu_health
from generator.families.base import Family, Role
from generator.parts.common import alert_rule
from generator.promql import Matcher

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import ServicePlan

KEY = "gpu_pages_retired"
ALERT = naming.ALERT_GPU_PAGES_RETIRED
METRIC = naming.GPU_RETIRED_PAGES
DOUBLE_BIT = (Matcher("cause", "=", "double_bit_ecc"),)
SIGNAL = "gpuRetiredPages"
READINGS = ("retired_pages",)


def dcgm_input(plan: ServicePlan, field: dcgm_fields.Field, alert: str) -> SignalInput:
    """The guard of a page-retirement ``field`` under dcgm (no default counters file enables
    it), excused where dcgm-exporter reports remapped rows (Ampere and later: no page
    retirement, so no series on purpose)."""
    base = dcgm.field_input(plan, SIGNAL, (field,), alert)
    return dataclasses.replace(
        base, excused=dcgm.sources(plan, dcgm_fields.UNCORRECTABLE_REMAPPED_ROWS)
    )


def rules(plan: ServicePlan) -> list[Rule]:
    """One rule: the GPU's count of pages retired for double-bit errors rose within 10m."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    expr = gpu_health.rose(plan, ((METRIC, DOUBLE_BIT),))
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """One double-bit retirement (1 → 2 at 11m) fires; a healthy GPU, one retiring a page for
    single-bit errors, and one with old retirements (a steady 2) stay quiet."""
    if KEY not in plan.alerts:
        return []
    faults: list[gpu_health.Fault] = [(METRIC, "1x10 2x50", "double_bit_ecc")]
    quiet: list[tuple[str, list[gpu_health.Fault]]] = [
        ("a single-bit retirement", [(METRIC, "0x10 1x50", "single_bit_ecc")]),
        ("retirements before the window", [(METRIC, "2x60", "double_bit_ecc")]),
    ]
    return gpu_health.cases(plan, KEY, rules(plan)[0], faults, quiet)


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The double-bit retired-page count of each GPU that answers NVML (excused where the
    sidecar reports page retirement unsupported: Ampere and later); under dcgm, the field."""
    if KEY not in plan.alerts:
        return []
    if gpu.dcgm(plan):
        return [dcgm_input(plan, dcgm_fields.RETIRED_DBE, ALERT)]
    what = "count of pages retired for double-bit errors"
    return [gpu_health.sidecar_input(plan, SIGNAL, ALERT, METRIC, DOUBLE_BIT, READINGS, what)]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``gpu_retired_pages``: the GPU's retired-page counts (both causes);
    ``gpu_retirement_pending``: pages waiting for a reset."""
    return {
        "gpu_retired_pages": gpu.runbook_series(plan, METRIC),
        "gpu_retirement_pending": gpu.runbook_series(plan, naming.GPU_RETIRED_PAGES_PENDING),
    }


FAMILY = Family(
    key=KEY,
    spec_field="gpuPagesRetired",
    alerts=(ALERT,),
    for_ms=0,
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
    rank=16,
)
