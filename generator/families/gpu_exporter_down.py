"""``spec.alerts.gpuExporterDown``: ``GPUExporterDown``, a pod's NVML sidecar not scraped or
not reading NVML (``gpu_exporter_nvml_up`` 0): its pod's GPU alerts are blind and held back
(:mod:`generator.builders.alertmanager_routing`). Page text in
``templates/runbooks/GPUExporterDown.md.j2``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families import gpu
from generator.families.base import Family, Role
from generator.parts import gpu_series
from generator.parts.common import alert_rule
from generator.parts.grafana_json import PanelDef, Query, Step
from generator.parts.panel_parts import (
    GREEN,
    RED,
    kept_by,
    named,
    panel_runbook,
    pod_filter,
    scope,
)
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    expected_alert,
    fire_and_quiet,
)
from generator.promql import by, selector
from generator.signals.healthy import healthy

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import ServicePlan

KEY = "gpu_exporter_down"
ALERT = naming.ALERT_GPU_EXPORTER_DOWN


def rules(plan: ServicePlan) -> list[Rule]:
    """``GPUExporterDown`` while a pod's sidecar reads no NVML, is down, or no sidecar is
    scraped; under dcgm, while a running pod has no GPU dcgm-exporter reports, or no
    dcgm-exporter is scraped."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    pods = plan.keeping(*gpu.POD_LABELS)
    up = selector("up", plan.gpu_matchers)
    nvml_up = gpu.read(plan, naming.GPU_EXPORTER_UP)
    if gpu.dcgm(plan):
        expr = f"max{by(pods)} ({nvml_up}) == 0 or absent({up})"
    else:
        expr = f"max{by(pods)} ({nvml_up}) == 0 or max{by(pods)} ({up}) == 0 or absent({up})"
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Fires on a sidecar that reads no NVML throughout (under dcgm: dcgm-exporter's target
    down, no GPU series); a healthy exporter stays quiet."""
    if KEY not in plan.alerts:
        return []
    base = [Klass(BASE_PER_MIN)]
    fire = healthy(plan, base)
    gpu_series.exporter_blind(plan, fire)
    rule = rules(plan)[0]
    keep = plan.keeping(*gpu.POD_LABELS)
    out = {k: v for k, v in gpu_series.alert_labels(plan).items() if k in keep}
    expected = [expected_alert(rule, out, None)]
    return fire_and_quiet(plan, KEY, rule["alert"], fire, healthy(plan, base), expected)


def panels(plan: ServicePlan) -> list[PanelDef]:
    """Whether each pod's sidecar reads NVML (1) or not (0)."""
    up = gpu.read(plan, naming.GPU_EXPORTER_UP, *scope(plan), pod_filter())
    return [
        PanelDef(
            title="GPU exporter NVML up",
            key="gpu/exporter-up",
            description=f"1 when the GPU exporter reads the pod's GPUs ({naming.GPU_EXPORTER_UP}); 0 means every GPU panel above is blind.",
            kind="stat",
            queries=(Query(f"min{kept_by(plan, 'pod')} ({up})", named(plan, "{{pod}}")),),
            unit="bool",
            steps=(Step(None, RED), Step(1, GREEN)),
            runbook=panel_runbook(plan, ALERT),
        )
    ]


FAMILY = Family(
    key=KEY,
    spec_field="gpuExporterDown",
    alerts=(ALERT,),
    for_ms=300_000,
    severity="warning",
    params={},
    role=Role.GPU_EXPORTER_DOWN,
    group="gpu",
    rules=rules,
    cases=cases,
    sidecar=True,
    row="gpu",
    rank=5,
    panels=panels,
)
