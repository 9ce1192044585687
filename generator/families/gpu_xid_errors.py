"""``spec.alerts.gpuXidErrors``: ``GPUXidErrors``, any Xid error the driver reports for a GPU
(the NVML sidecar's ``gpu_xid_errors_total`` per ``xid`` code); with it the Xid panel.
Page text in ``templates/runbooks/GPUXidErrors.md.j2``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator import dcgm_fields, naming
from generator.families import dcgm, gpu
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
from generator.promql import selector
from generator.signals.healthy import healthy

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import ServicePlan

KEY = "gpu_xid_errors"
ALERT = naming.ALERT_GPU_XID
RATE = "$__rate_interval"


def rules(plan: ServicePlan) -> list[Rule]:
    """``GPUXidErrors`` while a GPU reported an Xid of a code within 10m (per pod, uuid and
    ``xid``): :func:`generator.families.gpu.xid_events`."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    return [alert_rule(plan, ALERT, gpu.xid_events(plan), alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Fires on one GPU's Xid 79 (its counter rising from 0 to 1; under dcgm the last Xid
    turning from 0 to 79); a healthy GPU stays quiet."""
    if KEY not in plan.alerts:
        return []
    base = [Klass(BASE_PER_MIN)]
    fire = healthy(plan, base)
    gpu_series.xid(plan, fire, 79, "0x10 1x50")
    rule = rules(plan)[0]
    expected = [expected_alert(rule, gpu_series.alert_labels(plan) | {"xid": "79"}, None)]
    return fire_and_quiet(plan, KEY, rule["alert"], fire, healthy(plan, base), expected)


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """Under dcgm, the last-Xid field (the sidecar's Xid counters are covered by its
    ``gpuDevices`` guard)."""
    if KEY not in plan.alerts or not gpu.dcgm(plan):
        return []
    return [dcgm.field_input(plan, "gpuXid", (dcgm_fields.XID_ERRORS,), ALERT)]


def panels(plan: ServicePlan) -> list[PanelDef]:
    """Xid errors per GPU and code (increase over ``$__rate_interval``)."""
    if gpu.dcgm(plan):
        recent = gpu.read(plan, naming.GPU_XID_RECENT, *scope(plan), pod_filter())
        query = f"max{kept_by(plan, *gpu.GPU_BY, 'xid')} ({recent})"
    else:
        xid = selector(naming.GPU_XID_ERRORS, (*plan.gpu_matchers, *scope(plan), pod_filter()))
        query = f"sum{kept_by(plan, *gpu.GPU_BY, 'xid')} (increase({xid}[{RATE}]))"
    return [
        PanelDef(
            title="GPU Xid errors",
            key="gpu/xid",
            description=f"Xid errors reported by the driver per GPU and code (increase of "
            f"{naming.GPU_XID_ERRORS} over $__rate_interval); any is worth a look, 48/79/94/95 mean the GPU needs attention.",
            kind="timeseries",
            queries=(Query(query, f"{named(plan, gpu.GPU_LEGEND)} Xid {{{{xid}}}}"),),
            unit="short",
            min_value=0,
            steps=(Step(None, GREEN), Step(1, RED)),
            runbook=panel_runbook(plan, ALERT),
        )
    ]


FAMILY = Family(
    key=KEY,
    spec_field="gpuXidErrors",
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
    rank=4,
    panels=panels,
)
