"""Shared pieces of the pod families (memory headroom and exhaustion, OOM kills, crash loops):
the memory records, the guarded pod inputs, pod-series selectors for panels and runbooks.

cAdvisor's ``container_memory_working_set_bytes`` (what the OOM killer compares with the limit)
and kube-state-metrics' limits, restarts and waiting reasons (v2.20.0,
docs/metrics/workload/pod-metrics.md) carry none of the scrape targets' labels: they are kept
to the service's pods by the owner record of :mod:`generator.parts.pods`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from generator import naming
from generator.parts.common import Rule, identity_matchers, record_rule, recorded
from generator.parts.guard_inputs import SERVICE_KEYS, Condition, SignalInput, Source, targets_up
from generator.parts.panel_parts import cluster_filter, pod_filter, scope
from generator.parts.pods import (
    KSM_POD_OWNER,
    OWNER_RECORD,
    ksm_owner_selectors,
    owned,
    owned_selector,
    owner_record,
)
from generator.promql import Matcher, by, selector

if TYPE_CHECKING:
    from generator.plan import ServicePlan

POD_LABELS = ("container", "namespace", "pod")
LIMIT_RECORD = "service_pod_container:model_memory_limit_bytes:max"
USAGE_RECORD = "service_pod_container:model_memory_working_set_bytes:ratio_limit"
_RECORDED_BY = ("memory_headroom", "memory_exhaustion")
_KSM = "kube-state-metrics is not scraped, or spec.deployment.container does not name the model's container."


def working_set(plan: ServicePlan) -> str:
    """The working set (bytes) of the service's containers, max per pod and container."""
    return f"max{by(plan.keeping(*POD_LABELS))} {owned_selector(plan, naming.CADVISOR_WORKING_SET)}"


def recorded_memory(plan: ServicePlan) -> bool:
    """Whether :func:`records` writes the limit and usage records (a memory alert reads them)."""
    return bool(set(_RECORDED_BY) & plan.alerts.keys())


def records(plan: ServicePlan) -> list[Rule]:
    """The service's pods (owner record, always), then the memory limit (bytes; the spec's
    ``deployment.memoryLimit`` where the limit series is absent) and working set / limit
    (ratio 0–1) per pod and container when a memory alert reads them."""
    if not recorded_memory(plan):
        return [owner_record(plan)]
    limits = owned_selector(plan, naming.KSM_LIMITS, Matcher("resource", "=", "memory"))
    limit_expr = f"max{by(plan.keeping(*POD_LABELS))} {limits}"
    if plan.memory_limit_bytes is not None:
        limit_expr += f" or 0 * {working_set(plan)} + {plan.memory_limit_bytes}"
    on = ", ".join(plan.keeping(*POD_LABELS))
    return [
        owner_record(plan),
        record_rule(plan, LIMIT_RECORD, limit_expr),
        record_rule(
            plan,
            USAGE_RECORD,
            f"{working_set(plan)} / on ({on}) ({recorded(plan, LIMIT_RECORD)} > 0)",
        ),
    ]


def pods_input(plan: ServicePlan, alert: str) -> SignalInput:
    """The owner record, read by ``alert``: without it no pod series is the service's."""
    workload = f"{plan.workload_kind}/{plan.deployment_name}"
    return SignalInput(
        "pods",
        KSM_POD_OWNER,
        SERVICE_KEYS,
        ((Source(OWNER_RECORD, identity_matchers(plan)),),),
        (targets_up(plan),),
        (alert,),
        covers=tuple(Source(metric, by) for metric, by in ksm_owner_selectors(plan)),
        remedy=f"No pod is attributed to {workload}: kube-state-metrics' kube_pod_owner series "
        "are missing (not scraped) or spec.deployment.name/kind do not name the workload, "
        "and the service's targets carry no pod label.",
    )


def _attributed(plan: ServicePlan) -> tuple[Condition, ...]:
    return (targets_up(plan), Condition((Source(OWNER_RECORD, identity_matchers(plan)),)))


def memory_inputs(plan: ServicePlan, alert: str) -> list[SignalInput]:
    """The pods, the working set and (without ``deployment.memoryLimit``) the limit series,
    read by ``alert``."""
    out = [
        pods_input(plan, alert),
        SignalInput(
            "memoryWorkingSet",
            naming.CADVISOR_WORKING_SET,
            SERVICE_KEYS,
            ((Source(naming.CADVISOR_WORKING_SET, plan.container_matchers, owned=True),),),
            _attributed(plan),
            (alert,),
            remedy="cAdvisor (the kubelet's /metrics/cadvisor) is not scraped, or "
            "spec.deployment.container does not name the model's container.",
        ),
    ]
    if plan.memory_limit_bytes is None:
        limits = Source(
            naming.KSM_LIMITS,
            (*plan.container_matchers, Matcher("resource", "=", "memory")),
            owned=True,
        )
        out.append(
            SignalInput(
                "memoryLimit",
                naming.KSM_LIMITS,
                SERVICE_KEYS,
                ((limits,),),
                _attributed(plan),
                (alert,),
                remedy=_KSM
                + " Or the container has no memory limit: set spec.deployment.memoryLimit.",
            )
        )
    return out


def restart_inputs(plan: ServicePlan, alert: str, reason: Source) -> list[SignalInput]:
    """The pods and the restart counter, read by ``alert`` beside ``reason`` (a termination or
    waiting reason series: absent on a healthy service)."""
    restarts = SignalInput(
        "containerRestarts",
        naming.KSM_RESTARTS,
        SERVICE_KEYS,
        ((Source(naming.KSM_RESTARTS, plan.container_matchers, owned=True),),),
        _attributed(plan),
        (alert,),
        covers=(reason,),
        remedy=_KSM,
    )
    return [pods_input(plan, alert), restarts]


def out_labels(plan: ServicePlan, labels: dict[str, str]) -> dict[str, str]:
    """The labels of ``labels`` (a container's series) that a per-container alert keeps."""
    return {k: labels[k] for k in plan.keeping(*POD_LABELS) if k in labels}


def panel_pods(plan: ServicePlan, metric: str, *extra: Matcher) -> str:
    """A dashboard's selector of ``metric`` on the service's pods (owner record) and the
    variables' namespace, cluster and pod."""
    return owned(
        plan,
        selector(metric, (*plan.container_matchers, *scope(plan), pod_filter(), *extra)),
        *cluster_filter(plan),
    )


def runbook_cluster(plan: ServicePlan) -> tuple[Matcher, ...]:
    """A runbook query's cluster filter: the placeholder the on-call replaces, if any."""
    label = plan.cluster_label
    return (Matcher(label, "=", naming.CLUSTER_PLACEHOLDER),) if label else ()


def runbook_pods(plan: ServicePlan, metric: str, *extra: Matcher) -> str:
    """A runbook's selector of ``metric`` on the service's pods, in the alert's cluster."""
    cluster = runbook_cluster(plan)
    return owned(plan, selector(metric, (*plan.container_matchers, *cluster, *extra)), *cluster)


def record_queries(plan: ServicePlan, rec: Callable[..., str]) -> dict[str, str | None]:
    """``memory_ratio`` and ``memory_limit``: the memory records of the service."""
    return {"memory_ratio": rec(USAGE_RECORD), "memory_limit": rec(LIMIT_RECORD)}
