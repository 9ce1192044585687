"""``spec.alerts.gpuDeviceLost``: ``GPUDeviceLost``, a GPU NVML reports lost
(``gpu_device_up`` 0) under a sidecar that reads NVML; with it the GPUs-up panel.
Page text in ``templates/runbooks/GPUDeviceLost.md.j2``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families import gpu
from generator.families.base import Family, Role
from generator.parts import gpu_series
from generator.parts.common import alert_rule
from generator.parts.grafana_json import PanelDef, Query, Step
from generator.parts.panel_parts import GREEN, RED, panel_runbook
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    INTERVAL_MS,
    Klass,
    Series,
    expected_alert,
    family_case,
)
from generator.promql import by
from generator.signals.healthy import healthy

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import ServicePlan

KEY = "gpu_device_lost"
ALERT = naming.ALERT_GPU_LOST


def rules(plan: ServicePlan) -> list[Rule]:
    """``GPUDeviceLost`` while a GPU's ``gpu_device_up`` is 0 and its pod's sidecar reads NVML;
    under dcgm, while the record says lost (:func:`generator.families.dcgm.device_up`: its
    series gone with its exporter up, or a recent Xid 79)."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    device_up = f"max{by(plan.keeping(*gpu.GPU_LABELS))} ({gpu.read(plan, naming.GPU_DEVICE_UP)})"
    if gpu.dcgm(plan):
        return [alert_rule(plan, ALERT, f"{device_up} == 0", alert.for_ms, alert.severity)]
    # Only under a working exporter: with NVML down there are no device series at all,
    # and GPUExporterDown says so.
    pods = plan.keeping(*gpu.POD_LABELS)
    nvml_up = f"max{by(pods)} ({gpu.read(plan, naming.GPU_EXPORTER_UP)})"
    expr = f"{device_up} == 0 and on ({', '.join(pods)}) {nvml_up} == 1"
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """The GPU is lost (the sidecar: NVML reports it, its readings gone; dcgm: its series
    vanish) under a working exporter — fires; the same with the exporter itself down —
    quiet (GPUExporterDown's). Under dcgm, an Xid 79 on a GPU still reporting fires too.
    Every GPU up stays quiet: :func:`generator.cases.guard_cases.long_healthy_group`."""
    if KEY not in plan.alerts:
        return []
    rule = rules(plan)[0]
    up_steps = 5
    lost_at = (up_steps + 1) * INTERVAL_MS  # `1x5` is six samples: the first 0 is at 6m
    # Pending from the evaluation that first sees the loss; firing at the first one at least
    # `for` later (a `for` that is no whole number of test steps rounds up to one).
    at = lost_at + -(-plan.alerts[KEY].for_ms // INTERVAL_MS) * INTERVAL_MS

    def lost(exporter_up: bool) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)])
        gpu_series.lose(plan, s, up_steps)
        if not exporter_up:
            gpu_series.exporter_blind(plan, s)
        return s

    out = gpu_series.alert_labels(plan)
    name = rule["alert"]
    groups = [
        family_case(
            plan,
            f"{name}: a GPU lost under a healthy exporter fires",
            lost(True),
            name,
            [expected_alert(rule, out, None)],
            at,
        ),
        family_case(
            plan,
            f"{name}: {'dcgm-exporter' if gpu.dcgm(plan) else 'NVML'} down (no device "
            "readings to trust) stays quiet",
            lost(False),
            name,
            [],
            at,
        ),
    ]
    if gpu.dcgm(plan):
        # The last-Xid gauge shows an Xid once it differs from its value 10m earlier.
        xid_steps = 11
        s = healthy(plan, [Klass(BASE_PER_MIN)])
        gpu_series.xid(plan, s, 79, f"0x{xid_steps} 1x{60 - xid_steps}")
        groups.append(
            family_case(
                plan,
                f"{name}: an Xid 79 (fallen off the bus) on a GPU still reported fires",
                s,
                name,
                [expected_alert(rule, out, None)],
                at + (xid_steps - up_steps) * INTERVAL_MS,
            )
        )
    return groups


def panels(plan: ServicePlan) -> list[PanelDef]:
    """1 per GPU that answers NVML, 0 per GPU reported lost."""
    return [
        PanelDef(
            title="GPUs up",
            key="gpu/device-up",
            description=f"1 per GPU the exporter reads, 0 for a GPU it reports (or, under "
            f"dcgm-exporter, obsgen infers) lost ({naming.GPU_DEVICE_UP}); {ALERT} fires on a 0.",
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
