"""``spec.alerts.gpuXidReset``: ``GPUXidResetRequired``, a GPU reported an Xid whose immediate action in
NVIDIA's Xid catalogue is a GPU reset (RESET_GPU and the fatal hardware workflows) (:data:`generator.families.xid_catalog.RESET`), within 10m
(:func:`generator.families.gpu.xid_events`: the sidecar's Xid counters, or under dcgm the
last-Xid gauge changing, which cannot show a repeat of the same Xid). Page text in
``templates/runbooks/GPUXidResetRequired.md.j2``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator import dcgm_fields
from generator.families import dcgm, gpu, xid_catalog
from generator.families.base import Family, Role
from generator.parts import gpu_series
from generator.parts.common import alert_rule
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    Series,
    after_for,
    expected_alert,
    family_case,
)
from generator.signals.healthy import healthy

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import ServicePlan

TIER = xid_catalog.RESET
KEY = TIER.key
ALERT = TIER.alert


def rules(plan: ServicePlan) -> list[Rule]:
    """One rule: an Xid of the tier's codes within 10m, per GPU and ``xid``."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    expr = gpu.xid_events(plan, TIER.codes)
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity)]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Xid 48 at 11m fires; a healthy GPU, and Xid 13 (another tier), stay quiet."""
    if KEY not in plan.alerts:
        return []
    rule = rules(plan)[0]
    at = after_for(plan, KEY)

    def xid(code: int | None) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)])
        if code is not None:
            gpu_series.xid(plan, s, code, "0x10 1x50")
        return s

    labels = gpu_series.alert_labels(plan) | {"xid": str(TIER.example)}
    return [
        family_case(
            plan,
            f"{ALERT}: Xid {TIER.example} fires",
            xid(TIER.example),
            ALERT,
            [expected_alert(rule, labels, None)],
            at,
        ),
        family_case(plan, f"{ALERT} stays quiet", xid(None), ALERT, [], at),
        family_case(
            plan, f"{ALERT}: Xid 13 (an application error) stays quiet", xid(13), ALERT, [], at
        ),
    ]


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """Under dcgm, the last-Xid field (the sidecar's Xid counters are covered by its
    ``gpuDevices`` guard)."""
    if KEY not in plan.alerts or not gpu.dcgm(plan):
        return []
    return [dcgm.field_input(plan, "gpuXid", (dcgm_fields.XID_ERRORS,), ALERT)]


FAMILY = Family(
    key=KEY,
    spec_field="gpuXidReset",
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
    rank=13,
)
