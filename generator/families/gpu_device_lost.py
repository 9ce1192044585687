"""``spec.alerts.gpuDeviceLost``: ``GPUDeviceLost``, a GPU NVML reports lost
(``gpu_device_up`` 0) under a sidecar that reads NVML; with it the GPUs-up panel.
Page text in ``templates/runbooks/GPUDeviceLost.md.j2``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator import naming
from generator.builders.common import alert_rule
from generator.builders.grafana_json import PanelDef, Query, Step
from generator.builders.panel_parts import GREEN, RED, panel_runbook
from generator.builders.promtool_series import (
    BASE_PER_MIN,
    INTERVAL_MS,
    UUID,
    Klass,
    Series,
    expected_alert,
    family_case,
    healthy,
    sidecar_labels,
)
from generator.builders.windowed_series import without
from generator.families import gpu
from generator.families.base import Family, Role
from generator.promql import by, selector

if TYPE_CHECKING:
    from generator.builders.common import Rule
    from generator.plan import ServicePlan

KEY = "gpu_device_lost"
ALERT = naming.ALERT_GPU_LOST


def rules(plan: ServicePlan) -> list[Rule]:
    """``GPUDeviceLost`` while a GPU's ``gpu_device_up`` is 0 and its pod's sidecar reads NVML."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    m = plan.gpu_matchers
    # Only under a working exporter: with NVML down there are no device series at all,
    # and GPUExporterDown says so.
    pods = plan.keeping(*gpu.POD_LABELS)
    device_up = f"max{by(plan.keeping(*gpu.GPU_LABELS))} ({selector(naming.GPU_DEVICE_UP, m)})"
    nvml_up = f"max{by(pods)} ({selector(naming.GPU_EXPORTER_UP, m)})"
    expr = f"{device_up} == 0 and on ({', '.join(pods)}) {nvml_up} == 1"
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """NVML reports the GPU lost (its readings gone, identity kept) under a working exporter —
    fires; the same with NVML itself down — quiet (GPUExporterDown's). Every GPU up stays
    quiet: :func:`generator.builders.guard_cases.long_healthy_group`."""
    if KEY not in plan.alerts:
        return []
    rule = rules(plan)[0]
    labels = sidecar_labels(plan)
    up_steps = 5
    lost_at = (up_steps + 1) * INTERVAL_MS  # `1x5` is six samples: the first 0 is at 6m
    # Pending from the evaluation that first sees the loss; firing at the first one at least
    # `for` later (a `for` that is no whole number of test steps rounds up to one).
    at = lost_at + -(-plan.alerts[KEY].for_ms // INTERVAL_MS) * INTERVAL_MS

    def lost(nvml_up: int) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)])
        for metric in (naming.GPU_MEMORY_FREE, naming.GPU_MEMORY_TOTAL, naming.GPU_TEMPERATURE):
            without(s, metric)
        s.gauge(naming.GPU_DEVICE_UP, {**labels, "uuid": UUID}, f"1x{up_steps} 0x{60 - up_steps}")
        s.gauge(naming.GPU_EXPORTER_UP, labels, f"{nvml_up}+0x60")
        return s

    out = {k: v for k, v in {**labels, "uuid": UUID}.items() if k in plan.keeping(*gpu.GPU_LABELS)}
    return [
        family_case(
            plan,
            f"{rule['alert']}: a GPU lost under a healthy exporter fires",
            lost(1),
            rule["alert"],
            [expected_alert(rule, out, None)],
            at,
        ),
        family_case(
            plan,
            f"{rule['alert']}: NVML down (no device readings to trust) stays quiet",
            lost(0),
            rule["alert"],
            [],
            at,
        ),
    ]


def panels(plan: ServicePlan) -> list[PanelDef]:
    """1 per GPU that answers NVML, 0 per GPU reported lost."""
    return [
        PanelDef(
            title="GPUs up",
            key="gpu/device-up",
            description=f"1 per GPU that answers NVML, 0 for a GPU NVML reports lost "
            f"({naming.GPU_DEVICE_UP}); {ALERT} fires on a 0.",
            kind="stat",
            queries=(Query(gpu.gauge(plan, naming.GPU_DEVICE_UP), gpu.GPU_LEGEND),),
            unit="bool",
            steps=(Step(None, RED), Step(1, GREEN)),
            runbook=panel_runbook(plan, ALERT),
        )
    ]


FAMILY = Family(
    key=KEY,
    spec_field="gpuDeviceLost",
    alerts=(ALERT,),
    for_ms=120_000,
    severity="critical",
    params={},
    role=Role.GPU,
    group="gpu",
    rules=rules,
    cases=cases,
    sidecar=True,
    row="gpu",
    rank=6,
    panels=panels,
)
