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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from generator import dcgm_fields, naming
from generator.families import gpu, gpu_health, gpu_pages_retired
from generator.families.base import Family, Role
from generator.parts.common import alert_rule
from generator.promql import by

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import ServicePlan

KEY = "gpu_page_retirement_pending"
ALERT = naming.ALERT_GPU_RETIREMENT_PENDING
METRIC = naming.GPU_RETIRED_PAGES_PENDING


def rules(plan: ServicePlan) -> list[Rule]:
    """One rule: pages wait for retirement on a GPU (the sidecar's flag 1, dcgm's count > 0)."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    expr = f"max{by(plan.keeping(*gpu.GPU_LABELS))} ({gpu.read(plan, METRIC)}) > 0"
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Pending from the start fires after ``for``; a healthy GPU stays quiet, and so does one
    whose pending page was retired by a reset before ``for`` ran out (1 for 5m, then 0)."""
    if KEY not in plan.alerts:
        return []
    faults: list[gpu_health.Fault] = [(METRIC, "1+0x60", None)]
    quiet: list[tuple[str, list[gpu_health.Fault]]] = [
        ("a retirement a reset completed", [(METRIC, "1x5 0x55", None)]),
    ]
    return gpu_health.cases(plan, KEY, rules(plan)[0], faults, quiet)


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The pending status of each GPU that answers NVML (excused where the sidecar reports page
    retirement unsupported: Ampere and later); under dcgm, the pending field."""
    if KEY not in plan.alerts:
        return []
    if gpu.dcgm(plan):
        return [gpu_pages_retired.dcgm_input(plan, dcgm_fields.RETIRED_PENDING, ALERT)]
    what = "page retirement pending status"
    signal, readings = gpu_pages_retired.SIGNAL, gpu_pages_retired.READINGS
    return [gpu_health.sidecar_input(plan, signal, ALERT, METRIC, (), readings, what)]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``gpu_retirement_pending``: the reading of the GPU its page checks first."""
    return {"gpu_retirement_pending": gpu.runbook_series(plan, METRIC)}


FAMILY = Family(
    key=KEY,
    spec_field="gpuPageRetirementPending",
    alerts=(ALERT,),
    for_ms=600_000,
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
    rank=17,
)
