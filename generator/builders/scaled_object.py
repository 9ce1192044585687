"""The KEDA ``ScaledObject`` of ``spec.autoscaling`` (``keda.sh/v1alpha1``).

Triggers are KEDA's Prometheus scaler (``pkg/scalers/prometheus_scaler.go`` at v2.20.2:
``serverAddress``, ``query``, ``threshold``, ``activationThreshold``, all strings),
``metricType: AverageValue``, each reading one total: the queue record, the KV-cache record
summed over pods, and from zero the activator's held requests (activation only). Served as
``manifests/<service>/scaledobject.yaml`` and in kube-prometheus-stack's ``extraManifests``
(rendered through ``tpl``: no ``{{``/``}}`` may reach it). More: docs/spec.md, "Autoscaling".
"""

from __future__ import annotations

from generator import naming
from generator.builders.kube import Obj, common_labels
from generator.parts.common import identity_matchers
from generator.parts.replicas import activator_window_ms
from generator.plan import ServicePlan
from generator.promql import Matcher, selector
from generator.units import decimal_str, format_duration_ms

API_KEDA = "keda.sh/v1alpha1"
# A per-replica target no activator's held requests reach: ceil(held / target) stays 1.
ACTIVATION_ONLY_TARGET = 1_000_000_000


def _cluster(plan: ServicePlan) -> tuple[Matcher, ...]:
    auto = plan.autoscaling
    if plan.cluster_label is None or auto is None or auto.cluster is None:
        return ()
    return (Matcher(plan.cluster_label, "=", auto.cluster),)


def queue_query(plan: ServicePlan) -> str:
    """Waiting requests of the service, summed over pods (and ``groupBy`` groups)."""
    record = naming.record(plan.group_by, naming.QUEUE_DEPTH, "sum")
    return f"sum({selector(record, (*identity_matchers(plan), *_cluster(plan)))})"


def kv_cache_query(plan: ServicePlan) -> str:
    """KV-cache usage (0–1) of every pod of the service, summed: replicas' worth of cache."""
    record = naming.record((*plan.group_by, "pod"), naming.KV_CACHE_USAGE, "max")
    return f"sum({selector(record, (*identity_matchers(plan), *_cluster(plan)))})"


def activator_query(plan: ServicePlan) -> str:
    """Requests the activator held for the service in the last two scrapes (each of its
    source's names, newest release first; the first with series counts)."""
    act = plan.activator
    if act is None:
        raise ValueError(f"plan {plan.name} has no activator")
    window = format_duration_ms(activator_window_ms(plan))
    matchers = (*act.matchers, *_cluster(plan))
    return " or ".join(
        f"sum(max_over_time({selector(name, matchers)}[{window}]))" for name in act.names
    )


def _trigger(name: str, address: str, query: str, target: float, activation: float) -> Obj:
    return {
        "type": "prometheus",
        "name": name,
        "metricType": "AverageValue",
        "metadata": {
            "serverAddress": address,
            "query": query,
            "threshold": decimal_str(target),
            "activationThreshold": decimal_str(activation),
        },
    }


def triggers(plan: ServicePlan) -> list[Obj]:
    """The Prometheus triggers of ``spec.autoscaling`` (none without it)."""
    auto = plan.autoscaling
    if auto is None:
        return []
    address = auto.server_address
    out = []
    if auto.queue_per_replica is not None:
        out.append(_trigger("queue", address, queue_query(plan), auto.queue_per_replica, 0))
    if auto.kv_cache_per_replica is not None:
        out.append(
            _trigger("kv-cache", address, kv_cache_query(plan), auto.kv_cache_per_replica, 0)
        )
    if plan.replicas == 0 and plan.activator is not None:
        out.append(
            _trigger(
                "activator",
                address,
                activator_query(plan),
                ACTIVATION_ONLY_TARGET,
                auto.activation_threshold,
            )
        )
    return out


def scaled_object(plan: ServicePlan) -> Obj | None:
    """The ``ScaledObject`` of ``plan``'s workload, in its namespace (None without
    ``spec.autoscaling`` or with ``autoscaler: hpa``: :mod:`generator.builders.hpa`)."""
    auto = plan.autoscaling
    if auto is None or auto.autoscaler != "keda":
        return None
    meta: Obj = {"name": naming.k8s_name(plan.stem)}
    if plan.namespace:
        meta["namespace"] = plan.namespace
    meta["labels"] = common_labels(plan)
    obj: Obj = {
        "apiVersion": API_KEDA,
        "kind": "ScaledObject",
        "metadata": meta,
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": plan.workload_kind,
                "name": plan.deployment_name,
            },
            "minReplicaCount": plan.replicas,
            "maxReplicaCount": plan.replicas_max,
            "pollingInterval": auto.polling_interval // 1000,
            "cooldownPeriod": auto.cooldown_period // 1000,
            "triggers": triggers(plan),
        },
    }
    return obj
