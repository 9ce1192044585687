"""``spec.alerts.gpuXidErrors``: ``GPUXidErrors``, any Xid error the driver reports for a GPU
(the NVML sidecar's ``gpu_xid_errors_total`` per ``xid`` code); with it the Xid panel.
Page text in ``templates/runbooks/GPUXidErrors.md.j2``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator import naming
from generator.builders.common import alert_rule, counter_target
from generator.builders.grafana_json import PanelDef, Query, Step
from generator.builders.panel_parts import (
    GREEN,
    RED,
    kept_by,
    named,
    panel_runbook,
    pod_filter,
    scope,
)
from generator.builders.promtool_series import (
    BASE_PER_MIN,
    UUID,
    Klass,
    expected_alert,
    fire_and_quiet,
    healthy,
    sidecar_labels,
)
from generator.families import gpu
from generator.families.base import Family, Role
from generator.promql import born, by, selector

if TYPE_CHECKING:
    from generator.builders.common import Rule
    from generator.plan import ServicePlan

KEY = "gpu_xid_errors"
ALERT = naming.ALERT_GPU_XID
RATE = "$__rate_interval"


def rules(plan: ServicePlan) -> list[Rule]:
    """``GPUXidErrors`` while a GPU's Xid counter of a code rose within 10m, or was first seen
    during the sidecar's life (per pod, uuid and ``xid``)."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    m = plan.gpu_matchers
    xid = selector(naming.GPU_XID_ERRORS, m)
    labels = plan.keeping(*gpu.GPU_LABELS, "xid")
    # A counter first seen at 1 has no increase(): born() counts a series created during
    # the sidecar's life, never one that came with it (a new pod, a Prometheus restart).
    first = born(xid, "10m", counter_target(plan, m, target_labels_only=False))
    expr = f"sum{by(labels)} (increase({xid}[10m])) > 0 or sum{by(labels)} ({first}) > 0"
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Fires on one GPU's Xid 79 counter rising from 0 to 1; a healthy GPU stays quiet."""
    if KEY not in plan.alerts:
        return []
    base = [Klass(BASE_PER_MIN)]
    labels = sidecar_labels(plan)
    out = {k: labels[k] for k in plan.keeping(*gpu.GPU_LABELS) if k in labels} | {"uuid": UUID}
    fire = healthy(plan, base)
    fire.gauge(naming.GPU_XID_ERRORS, {**labels, "uuid": UUID, "xid": "79"}, "0x10 1x50")
    rule = rules(plan)[0]
    expected = [expected_alert(rule, out | {"xid": "79"}, None)]
    return fire_and_quiet(plan, KEY, rule["alert"], fire, healthy(plan, base), expected)


def panels(plan: ServicePlan) -> list[PanelDef]:
    """Xid errors per GPU and code (increase over ``$__rate_interval``)."""
    xid = selector(naming.GPU_XID_ERRORS, (*plan.gpu_matchers, *scope(plan), pod_filter()))
    return [
        PanelDef(
            title="GPU Xid errors",
            key="gpu/xid",
            description=f"Xid errors reported by the driver per GPU and code (increase of "
            f"{naming.GPU_XID_ERRORS} over $__rate_interval); any is worth a look, 48/79/94/95 mean the GPU needs attention.",
            kind="timeseries",
            queries=(
                Query(
                    f"sum{kept_by(plan, *gpu.GPU_BY, 'xid')} (increase({xid}[{RATE}]))",
                    f"{named(plan, gpu.GPU_LEGEND)} Xid {{{{xid}}}}",
                ),
            ),
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
    row="gpu",
    rank=4,
    panels=panels,
)
