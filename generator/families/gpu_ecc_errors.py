"""``spec.alerts.gpuEccErrors``: ``GPUUncorrectableECCErrors``, a GPU's uncorrectable
(double-bit) ECC error count rose within 10m: the aggregate (lifetime) or the volatile (since
the driver loaded) counter, from the sidecar (``gpu_ecc_errors_total``,
``gpu_ecc_volatile_errors_total``, ``error_type="uncorrected"``) or dcgm-exporter
(``DCGM_FI_DEV_ECC_DBE_AGG_TOTAL``, ``DCGM_FI_DEV_ECC_DBE_VOL_TOTAL``). Page text in
``templates/runbooks/GPUUncorrectableECCErrors.md.j2``.
"""

from __future__ import annotations

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

KEY = "gpu_ecc_errors"
ALERT = naming.ALERT_GPU_ECC
UNCORRECTED = (Matcher("error_type", "=", "uncorrected"),)


def rules(plan: ServicePlan) -> list[Rule]:
    """One rule: either uncorrectable counter of a GPU rose within 10m."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    reads = ((naming.GPU_ECC_ERRORS, UNCORRECTED), (naming.GPU_ECC_VOLATILE_ERRORS, UNCORRECTED))
    expr = gpu_health.rose(plan, reads)
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """One double-bit error (both counters 0 → 1) fires; a healthy GPU stays quiet."""
    if KEY not in plan.alerts:
        return []
    faults: list[gpu_health.Fault] = [
        (naming.GPU_ECC_ERRORS, "0x10 1x50", "uncorrected"),
        (naming.GPU_ECC_VOLATILE_ERRORS, "0x10 1x50", "uncorrected"),
    ]
    return gpu_health.cases(plan, KEY, rules(plan)[0], faults)


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The uncorrectable counts of each GPU that answers NVML, aggregate and volatile (excused
    where the sidecar reports them unsupported: ECC off); under dcgm, the double-bit ECC
    fields (commented out in the default counters file)."""
    if KEY not in plan.alerts:
        return []
    if gpu.dcgm(plan):
        fields = (dcgm_fields.ECC_DBE_VOLATILE, dcgm_fields.ECC_DBE_AGGREGATE)
        return [dcgm.field_input(plan, "gpuEcc", fields, ALERT)]
    return [
        gpu_health.sidecar_input(
            plan,
            "gpuEcc",
            ALERT,
            metric,
            UNCORRECTED,
            (reading,),
            f"{what} uncorrectable ECC count",
        )
        for metric, reading, what in (
            (naming.GPU_ECC_ERRORS, "ecc_uncorrected", "aggregate"),
            (naming.GPU_ECC_VOLATILE_ERRORS, "ecc_volatile_uncorrected", "volatile"),
        )
    ]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``gpu_ecc``: the reading of the GPU its page checks first."""
    return {"gpu_ecc": gpu.runbook_series(plan, naming.GPU_ECC_ERRORS)}


FAMILY = Family(
    key=KEY,
    spec_field="gpuEccErrors",
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
    rank=7,
)
