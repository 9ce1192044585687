"""Which pods belong to a service: owner series and scrape-target labels, never pod names.

Why by owner series and target labels, and how: docs/rules.md, "Pods of a service".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator import naming
from generator.parts.common import Rule, record_rule, recorded
from generator.promql import Matcher, by, selector

if TYPE_CHECKING:
    from generator.plan import ServicePlan

OWNER_RECORD = "service_pod:model_pod_owner:relabel"
POD_KEYS = ("namespace", "pod")
KSM_POD_OWNER = "kube_pod_owner"
KSM_REPLICASET_OWNER = "kube_replicaset_owner"


def _namespaced(plan: ServicePlan) -> tuple[Matcher, ...]:
    return (Matcher("namespace", "=", plan.namespace),) if plan.namespace else ()


def ksm_owner_selectors(plan: ServicePlan) -> tuple[tuple[str, tuple[Matcher, ...]], ...]:
    """(metric, matchers) of the kube-state-metrics owner series :func:`ksm_owner_expr` reads:
    ``kube_pod_owner`` (and, for a Deployment, ``kube_replicaset_owner``)."""
    ns = _namespaced(plan)
    name = Matcher("owner_name", "=", plan.deployment_name)
    if plan.workload_kind == "StatefulSet":
        return ((KSM_POD_OWNER, (*ns, Matcher("owner_kind", "=", "StatefulSet"), name)),)
    return (
        (KSM_POD_OWNER, (*ns, Matcher("owner_kind", "=", "ReplicaSet"))),
        (KSM_REPLICASET_OWNER, (*ns, Matcher("owner_kind", "=", "Deployment"), name)),
    )


def ksm_owner_expr(plan: ServicePlan) -> str:
    """``(namespace, pod)`` of the workload's pods by kube-state-metrics owner series (value 1)."""
    found = ksm_owner_selectors(plan)
    pods_by_key = by(plan.keeping(*POD_KEYS))
    if plan.workload_kind == "StatefulSet":
        return f"group{pods_by_key} ({selector(*found[0])})"
    (pod_owner, pods_by), (rs_owner, replicasets_by) = found
    # kube_pod_owner names the ReplicaSet in owner_name; copy it to kube_replicaset_owner's
    # replicaset label to join (a label copy, not a name pattern).
    pods = (
        f'label_replace({selector(pod_owner, pods_by)}, "replicaset", "$1", "owner_name", "(.+)")'
    )
    replicasets = selector(rs_owner, replicasets_by)
    replicaset_keys = ", ".join(plan.keeping("namespace", "replicaset"))
    return (
        f"group{pods_by_key} ({pods} and on ({replicaset_keys}) "
        f"group by ({replicaset_keys}) ({replicasets}))"
    )


def target_pods_selector(plan: ServicePlan) -> tuple[str, tuple[Matcher, ...]]:
    """(metric, matchers) of the service's scrape targets that carry a ``pod`` label."""
    return "up", (*plan.matchers, Matcher("pod", "!=", ""))


def target_pods_expr(plan: ServicePlan) -> str:
    """``(namespace, pod)`` of the service's scrape targets that carry a ``pod`` label."""
    return f"group{by(plan.keeping(*POD_KEYS))} ({selector(*target_pods_selector(plan))})"


def owner_expr(plan: ServicePlan) -> str:
    """The expression of :data:`OWNER_RECORD`: owner series, or else the targets' pod labels.

    Without a namespace in ``spec.selector`` the owner series are kept to the namespaces the
    service's targets are in (a same-named workload elsewhere is another service).
    """
    ksm = ksm_owner_expr(plan)
    if plan.namespace is None:
        ns = ", ".join(plan.keeping("namespace"))
        ksm = f"({ksm} and on ({ns}) group by ({ns}) ({selector('up', plan.matchers)}))"
    return f"{ksm} or {target_pods_expr(plan)}"


def owner_record(plan: ServicePlan) -> Rule:
    """The recording rule of :data:`OWNER_RECORD` for ``plan`` (labels namespace, pod, service)."""
    return record_rule(plan, OWNER_RECORD, owner_expr(plan))


def owned(plan: ServicePlan, expr: str, *extra: Matcher) -> str:
    """``expr`` kept to the service's pods: ``(expr and on (namespace, pod) <owner record>)``
    (plus the cluster label, :meth:`ServicePlan.keeping`).

    ``extra`` matchers narrow the owner record (dashboards: ``pod=~"$pod"``).
    """
    on = ", ".join(plan.keeping(*POD_KEYS))
    return f"({expr} and on ({on}) {recorded(plan, OWNER_RECORD, *extra)})"


def owned_selector(plan: ServicePlan, metric: str, *extra: Matcher) -> str:
    """``metric`` of the model's container (``container_matchers`` plus ``extra``) in its pods."""
    return owned(plan, selector(metric, (*plan.container_matchers, *extra)))


# Kubernetes object-name rules (apiserver names.SimpleNameGenerator; DNS-1123 label limit).
MAX_NAME_LENGTH = 63
RANDOM_SUFFIX_LENGTH = 5


def generated_name(prefix: str, suffix: str) -> str:
    """The name Kubernetes gives an object with ``generateName: prefix``: the prefix cut to
    63 − 5 = 58 characters, then the 5 random characters (here ``suffix``).

    Raises:
        ValueError: ``suffix`` is not 5 characters.
    """
    if len(suffix) != RANDOM_SUFFIX_LENGTH:
        raise ValueError(f"random suffix {suffix!r}: expected {RANDOM_SUFFIX_LENGTH} characters")
    return prefix[: MAX_NAME_LENGTH - RANDOM_SUFFIX_LENGTH] + suffix


def example_pods(plan: ServicePlan, count: int = 1) -> list[tuple[str, str]]:
    """``count`` (pod name, owner name) pairs as Kubernetes would make them for the workload:
    a Deployment's pods ``generated_name("<deployment>-<template hash>-", …)`` owned by the
    ReplicaSet ``<deployment>-<template hash>``; a StatefulSet's ``<name>-<ordinal>``."""
    if plan.workload_kind == "StatefulSet":
        return [(f"{plan.deployment_name}-{i}", plan.deployment_name) for i in range(count)]
    replicaset = f"{plan.deployment_name}-7d9f8b6c5d"
    suffixes = ("x2k4q", "b8n2m", "q7w3z", "h5t9r", "c4v6p")
    if count > len(suffixes):
        raise ValueError(f"at most {len(suffixes)} example pods")
    return [(generated_name(f"{replicaset}-", suffixes[i]), replicaset) for i in range(count)]


def replica_metrics(plan: ServicePlan) -> tuple[str, str, str]:
    """(desired, available, workload label) kube-state-metrics series of the workload kind."""
    if plan.workload_kind == "StatefulSet":
        return naming.KSM_STATEFULSET_DESIRED, naming.KSM_STATEFULSET_READY, "statefulset"
    return naming.KSM_DEPLOYMENT_DESIRED, naming.KSM_DEPLOYMENT_AVAILABLE, "deployment"
