"""``spec.alerts.gpuUncorrectableRemaps``: ``GPUUncorrectableRowsRemapped``, the row remapper
of a GPU replaced a memory row after an uncorrectable error within 10m: the lifetime count of
rows remapped for uncorrectable errors rose (sidecar ``gpu_remapped_rows_total{cause=
"uncorrectable"}``, ``nvmlDeviceGetRemappedRows``; dcgm-exporter
``DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS``, counter, rows).

Why beside ``GPUUncorrectableECCErrors`` and ``GPURowRemapPending``: dcgm-exporter's default
counters file (every tag read: 2.4.7-2.6.11, 3.3.9-3.6.1, 4.5.2-4.8.1) enables this field but
neither the double-bit ECC fields nor the pending flag, so on a GPU Operator cluster with its
default ConfigMap this is the one series that shows an uncorrectable memory error on Ampere and
later GPUs (the remap takes effect at the next GPU reset: NVIDIA A100 memory error management,
"Row Remapping"). Rows remapped for correctable errors (``cause="correctable"``) do not fire.
Before Ampere there is no row remapper and no series (the sidecar reports ``remapped_rows``
unsupported; dcgm-exporter skips the blank field). Page text in
``templates/runbooks/GPUUncorrectableRowsRemapped.md.j2``.
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
