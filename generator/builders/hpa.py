"""``spec.autoscaling.autoscaler: hpa``: an ``autoscaling/v2`` HorizontalPodAutoscaler on
prometheus-adapter's External metrics, and the adapter's rules that serve them.

Each target is an ``External`` metric (``AverageValue``) on one of obsgen's records, summed: the
HPA asks for ``ceil(total / averageValue)`` replicas, KEDA's arithmetic. The adapter rule
(prometheus-adapter v0.12.0 ``rules.external``) exposes it under :func:`metric_name`;
:func:`adapter_query` is what the adapter asks Prometheus (``pkg/naming/metrics_query.go``
``BuildExternal``). Served files and why: docs/spec.md, "Autoscaling".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from generator import naming
from generator.builders.kube import Obj, common_labels
from generator.plan import ServicePlan
from generator.promql import Matcher, equals
from generator.units import decimal_str

API_HPA = "autoscaling/v2"
# prometheus-adapter's chart: all services' rules in one values file (Helm replaces lists
# across -f files, so per-service files cannot be stacked).
FLEET_ADAPTER_VALUES = "helm/prometheus-adapter.yaml"
# The adapter's query template for an External metric (GroupBy is empty there).
METRICS_QUERY = "sum(<<.Series>>{<<.LabelMatchers>>})"


def adapter_values_file(service: str) -> str:
    """Repository path of one service's prometheus-adapter chart values."""
    return f"helm/prometheus-adapter-{service}.yaml"


def _records(plan: ServicePlan) -> list[tuple[str, str, float]]:
    """(metric name in the HPA, record read, per-replica target) for each target set."""
    auto = plan.autoscaling
    assert auto is not None
    out = []
    if auto.queue_per_replica is not None:
        record = naming.record(plan.group_by, naming.QUEUE_DEPTH, "sum")
        out.append((metric_name(record), record, auto.queue_per_replica))
    if auto.kv_cache_per_replica is not None:
        record = naming.record((*plan.group_by, "pod"), naming.KV_CACHE_USAGE, "max")
        out.append((metric_name(record), record, auto.kv_cache_per_replica))
    return out


def metric_name(record: str) -> str:
    """The External metric name the adapter serves ``record`` under: ``obsgen_`` and the record
    with ``:`` as ``_`` (a name that is one URL path segment of the external metrics API)."""
    return "obsgen_" + record.replace(":", "_")


def match_labels(plan: ServicePlan) -> dict[str, str]:
    """The HPA's ``metric.selector.matchLabels``: the service and, with a cluster label, the
    cluster the HPA runs in (the adapter adds the namespace itself)."""
    labels = {naming.SERVICE: plan.name}
    auto = plan.autoscaling
    if plan.cluster_label is not None and auto is not None and auto.cluster is not None:
        labels[plan.cluster_label] = auto.cluster
    return dict(sorted(labels.items()))


def adapter_rule(record: str) -> Obj:
    """One ``rules.external`` entry: every series of ``record`` with a namespace and service,
    namespaced by the HPA's namespace, served as :func:`metric_name`."""
    return {
        "seriesQuery": f'{record}{{namespace!="",service!=""}}',
        "resources": {"overrides": {"namespace": {"resource": "namespace"}}},
        "name": {"matches": f"^{re.escape(record)}$", "as": metric_name(record)},
        "metricsQuery": METRICS_QUERY,
    }


def adapter_query(record: str, labels: Mapping[str, str], namespace: str) -> str:
    """The PromQL prometheus-adapter sends for the External metric of ``record`` asked for by an
    HPA in ``namespace`` with ``matchLabels`` ``labels`` (selector sorted by key, then the
    namespace: ``BuildExternal``)."""
    parts = [m.render() for m in equals(labels)] + [Matcher("namespace", "=", namespace).render()]
    return METRICS_QUERY.replace("<<.Series>>", record).replace(
        "<<.LabelMatchers>>", ",".join(parts)
    )


def adapter_rules(plans: Sequence[ServicePlan]) -> list[Obj]:
    """The ``rules.external`` entries of every HPA-autoscaled plan, one per record, sorted."""
    records = {
        record
        for plan in plans
        if plan.autoscaling is not None and plan.autoscaling.autoscaler == "hpa"
        for _, record, _ in _records(plan)
    }
    return [adapter_rule(r) for r in sorted(records)]


def adapter_values(plans: Sequence[ServicePlan]) -> Obj | None:
    """prometheus-adapter chart values for ``plans`` (None when none uses an HPA): its
    Prometheus (``serverAddress`` split into ``prometheus.url``/``port``/``path``; left out
    when the services name different ones: one adapter reads one Prometheus) and
    ``rules.external``."""
    rules = adapter_rules(plans)
    if not rules:
        return None
    addresses = {
        p.autoscaling.server_address
        for p in plans
        if p.autoscaling is not None and p.autoscaling.autoscaler == "hpa"
    }
    values: Obj = {}
    if len(addresses) == 1:
        parts = urlsplit(addresses.pop())
        values["prometheus"] = {
            "url": f"{parts.scheme}://{parts.netloc.rpartition(':')[0] if parts.port else parts.netloc}",
            "port": parts.port or (443 if parts.scheme == "https" else 80),
            "path": parts.path.rstrip("/"),
        }
    values["rules"] = {"external": rules}
    return values


def hpa(plan: ServicePlan) -> Obj | None:
    """The HorizontalPodAutoscaler of ``plan``'s workload, in its namespace (None unless
    ``spec.autoscaling.autoscaler`` is ``hpa``)."""
    auto = plan.autoscaling
    if auto is None or auto.autoscaler != "hpa":
        return None
    meta: Obj = {"name": naming.k8s_name(plan.stem)}
    if plan.namespace:
        meta["namespace"] = plan.namespace
    meta["labels"] = common_labels(plan)
    metrics = [
        {
            "type": "External",
            "external": {
                "metric": {"name": name, "selector": {"matchLabels": match_labels(plan)}},
                "target": {"type": "AverageValue", "averageValue": decimal_str(target)},
            },
        }
        for name, _, target in _records(plan)
    ]
    return {
        "apiVersion": API_HPA,
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta,
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": plan.workload_kind,
                "name": plan.deployment_name,
            },
            "minReplicas": plan.replicas,
            "maxReplicas": plan.replicas_max,
            "metrics": metrics,
        },
    }
