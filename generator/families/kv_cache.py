"""``spec.alerts.kvCache``: ``ModelKVCacheNearFull``, a pod's KV cache nearly full.

Reads the ``model_kv_cache_usage`` record (max per pod, 0–1) that
:func:`generator.builders.service_rules.traffic_records` writes from ``spec.metrics.kvCacheUsage``
(Triton's is used / max blocks); page text in ``templates/runbooks/ModelKVCacheNearFull.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families import ceiling
from generator.families.base import Family, Role
from generator.parts.grafana_json import PanelDef, Query
from generator.parts.panel_parts import alert_steps, panel_runbook, pod_filter, rec
from generator.parts.promtool_series import example_pod

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "kv_cache"
ALERT = naming.ALERT_KV_CACHE


@dataclass(frozen=True)
class Params:
    """``max``: the share (0–1) of the KV cache in use above which a pod alerts."""

    max: float


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``kv_cache`` alert."""
    return Params(max=float(alert.params["max"]))


def _record(plan: ServicePlan) -> str:
    return naming.record((*plan.group_by, "pod"), naming.KV_CACHE_USAGE, "max")


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelKVCacheNearFull`` while a pod's usage record stays above ``max``."""
    if plan.kv_cache_usage is None:
        return []
    return ceiling.above_max(plan, KEY, ALERT, naming.KV_CACHE_USAGE, "max", params, ("pod",))


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Fires at halfway between ``max`` and a full cache on one pod; a healthy pod's cache is empty."""
    gauge = plan.kv_cache_usage
    if KEY not in plan.alerts or gauge is None:
        return []
    value = (params(plan.alerts[KEY]).max + 1) / 2
    rule = rules(plan)[0]
    return ceiling.gauge_cases(plan, KEY, gauge, rule, value, {"pod": example_pod(plan)})


def panels(plan: ServicePlan) -> list[PanelDef]:
    """KV-cache usage per pod, the alert's ``max`` drawn."""
    if plan.kv_cache_usage is None:
        return []
    record = _record(plan)
    return [
        PanelDef(
            title="KV-cache usage per pod",
            key="kv-cache",
            description=f"Share (0–1) of the KV cache in use per pod, from {record} "
            f"(gauge {plan.kv_cache_usage.name}); {ALERT} fires above the line.",
            kind="timeseries",
            queries=(Query(rec(plan, record, pod_filter()), "{{pod}}"),),
            unit="percentunit",
            min_value=0,
            max_value=1,
            steps=alert_steps(plan, KEY, "max"),
            runbook=panel_runbook(plan, ALERT),
            width=12,
        )
    ]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``kv``: the usage record per pod (None without a KV-cache gauge)."""
    return {"kv": record(_record(plan)) if plan.kv_cache_usage is not None else None}


FAMILY = Family(
    key=KEY,
    spec_field="kvCache",
    alerts=(ALERT,),
    for_ms=600_000,
    severity="warning",
    params={"max": 0.95},
    role=Role.SYMPTOM,
    group="traffic",
    rules=rules,
    cases=cases,
    signals=("kv_cache_usage",),
    row="saturation",
    rank=2,
    panels=panels,
    runbook_queries=runbook_queries,
)
