"""``spec.alerts.gpuUncorrectableRemaps``: ``GPUUncorrectableRowsRemapped``, the count of a GPU's
rows remapped for uncorrectable errors rose within 10m (sidecar
``gpu_remapped_rows_total{cause="uncorrectable"}``; dcgm-exporter
``DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS``; counters, rows). Page text in
``templates/runbooks/GPUUncorrectableRowsRemapped.md.j2``.

Why beside the ECC and pending-remap alerts: docs/rules.md, "GPU rows remapped after
uncorrectable errors".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from generator import dcgm_fields, naming
from generator.builders.common import alert_rule
from generator.families import dcgm, gpu, gpu_health
from generator.families.base import Family, Role
from generator.promql import Matcher

if TYPE_CHECKING:
    from generator.builders.common import Rule
    from generator.builders.guard_inputs import SignalInput
    from generator.plan import ServicePlan

KEY = "gpu_uncorrectable_remaps"
ALERT = naming.ALERT_GPU_UNCORRECTABLE_REMAP
METRIC = naming.GPU_REMAPPED_ROWS
UNCORRECTABLE = (Matcher("cause", "=", "uncorrectable"),)


def rules(plan: ServicePlan) -> list[Rule]:
    """One rule: the GPU's count of rows remapped for uncorrectable errors rose within 10m."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    expr = gpu_health.rose(plan, ((METRIC, UNCORRECTABLE),))
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """One uncorrectable remap (2 → 3 at 11m) fires; a healthy GPU, one whose correctable
    count rises, and one with old uncorrectable remaps (a steady count of 3) stay quiet."""
    if KEY not in plan.alerts:
        return []
    faults: list[gpu_health.Fault] = [(METRIC, "2x10 3x50", "uncorrectable")]
    quiet: list[tuple[str, list[gpu_health.Fault]]] = [
        ("a correctable remap", [(METRIC, "0x10 1x50", "correctable")]),
        ("remaps before the window", [(METRIC, "3x60", "uncorrectable")]),
    ]
    return gpu_health.cases(plan, KEY, rules(plan)[0], faults, quiet)


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The uncorrectable remapped-row count of each GPU that answers NVML (excused where the
    sidecar reports the row remapper unsupported: before Ampere); under dcgm, the field (in
    every default counters file)."""
    if KEY not in plan.alerts:
        return []
    if gpu.dcgm(plan):
        field = dcgm_fields.UNCORRECTABLE_REMAPPED_ROWS
        return [dcgm.field_input(plan, "gpuRowRemap", (field,), ALERT)]
    readings = ("remapped_rows",)
    what = "count of rows remapped for uncorrectable errors"
    return [
        gpu_health.sidecar_input(plan, "gpuRowRemap", ALERT, METRIC, UNCORRECTABLE, readings, what)
    ]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``gpu_remapped_rows``: the GPU's remapped-row counts (both causes) its page checks first;
    ``gpu_remaps_pending``: its pending flag."""
    return {
        "gpu_remapped_rows": gpu.runbook_series(plan, METRIC),
        "gpu_remaps_pending": gpu.runbook_series(plan, naming.GPU_ROW_REMAP_PENDING),
    }


FAMILY = Family(
    key=KEY,
    spec_field="gpuUncorrectableRemaps",
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
    rank=15,
)
