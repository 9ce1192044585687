"""``spec.autoscaling``: is the autoscaler consistent with the alerts?

A KEDA trigger (``AverageValue``) gives the HPA a total and a per-replica target; the HPA asks
for ``ceil(total / target)`` replicas within its 10 % tolerance, so at ``maxReplicas`` it holds
at most ``target × max × 1.1``, compared with the alert's service-level threshold. At or above
it the page fires while replicas are left to add: :func:`problems` refuses that, a poll slower
than the page's ``for``, and scaling from zero without an activator. ``autoscaler: hpa``
(prometheus-adapter External metrics, the same arithmetic) refuses scale from zero and
KEDA-only fields. Why, with the promtool proof: docs/spec.md, "Autoscaling".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from generator.errors import Diagnostic
from generator.families import kv_cache, queue_depth
from generator.families.ceiling import Ceiling
from generator.units import decimal_str, format_duration_ms

if TYPE_CHECKING:
    from generator.plan import AlertPlan, ServicePlan

# kube-controller-manager --horizontal-pod-autoscaler-tolerance (default 0.1): the HPA leaves
# the replica count alone while the ratio of metric to target is within 10 % of 1.
HPA_TOLERANCE = 0.1
# Targets obsgen scales on: spec field, its attribute, the alert family key, the alert's spec
# field and the gauge's spec.metrics field.
TRIGGERS = (
    ("queuePerReplica", "queue_per_replica", "queue_depth", "queueDepth", "queueDepth"),
    ("kvCachePerReplica", "kv_cache_per_replica", "kv_cache", "kvCache", "kvCacheUsage"),
)


# kube-controller-manager --horizontal-pod-autoscaler-sync-period (default 15s): how often the
# HPA reads its metrics (through prometheus-adapter, which queries Prometheus on each read).
HPA_SYNC_PERIOD_MS = 15_000
# A Kubernetes label value (the HPA's metric selector carries the cluster label's value).
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
# ScaledObject fields an HPA has no place for, by attribute: spec name, and why.
KEDA_ONLY = (
    ("activation_threshold", "activationThreshold", "an HPA does not scale from zero"),
    (
        "polling_interval",
        "pollingInterval",
        "the HPA reads its metrics every 15s (controller-wide)",
    ),
    ("cooldown_period", "cooldownPeriod", "it is KEDA's delay before scaling to zero"),
)


def _hpa_problems(plan: ServicePlan) -> list[Diagnostic]:
    """What ``autoscaler: hpa`` cannot do: scale from zero (minReplicas 0 needs the alpha
    ``HPAScaleToZero`` feature gate, off by default), KEDA's own fields, a cluster value that is
    no Kubernetes label value (it goes into the HPA's metric selector)."""
    auto = plan.autoscaling
    assert auto is not None
    out: list[Diagnostic] = []
    if plan.replicas == 0:
        out.append(
            Diagnostic(
                plan.source,
                "spec.deployment.replicas",
                "autoscaler hpa cannot scale from zero: an HPA's minReplicas must be at least 1 "
                "(0 needs the alpha HPAScaleToZero feature gate, off by default, and the "
                "model's pods export nothing at zero); set replicas.min to 1 or more, or use "
                "autoscaler: keda with spec.scaleToZero.activator",
            )
        )
    for attr, field, why in KEDA_ONLY:
        if attr in auto.model_fields_set:
            out.append(
                Diagnostic(
                    plan.source,
                    f"spec.autoscaling.{field}",
                    f"is KEDA's; autoscaler hpa has no such field ({why}): drop it",
                )
            )
    if auto.cluster is not None and (
        len(auto.cluster) > 63 or not LABEL_VALUE.fullmatch(auto.cluster)
    ):
        out.append(
            Diagnostic(
                plan.source,
                "spec.autoscaling.cluster",
                f"{auto.cluster!r} is not a Kubernetes label value (at most 63 of A-Z a-z 0-9 "
                "- _ ., starting and ending alphanumeric): the HPA's metric selector carries it",
            )
        )
    return out


# The typed parameters of the families an autoscaler's target is checked against.
_CEILINGS: dict[str, Callable[[AlertPlan], Ceiling]] = {
    "queue_depth": queue_depth.params,
    "kv_cache": kv_cache.params,
}


def service_threshold(plan: ServicePlan, key: str) -> float | None:
    """The service-level total at which alert family ``key`` pages (None: the alert is off).

    ``queue_depth``: its ``max`` (queued requests summed over pods); ``kv_cache``: its per-pod
    ``max`` (0–1) on each of ``replicas_max`` pods."""
    alert = plan.alerts.get(key)
    if alert is None:
        return None
    limit = _CEILINGS[key](alert).max
    return limit * plan.replicas_max if key == "kv_cache" else limit


def saturation(target: float, replicas_max: int) -> float:
    """The largest total the autoscaler holds at ``replicas_max`` without asking for more:
    ``target × replicas_max × (1 + HPA_TOLERANCE)``."""
    return target * replicas_max * (1 + HPA_TOLERANCE)


def problems(plan: ServicePlan) -> list[Diagnostic]:
    """Every inconsistency of ``spec.autoscaling`` with the workload, its metrics and its alerts,
    each naming the spec file and field."""
    auto = plan.autoscaling
    if auto is None:
        return []
    out: list[Diagnostic] = []

    def add(path: str, message: str) -> None:
        out.append(Diagnostic(plan.source, path, message))

    if plan.replicas_max < 1 or plan.replicas >= plan.replicas_max:
        add(
            "spec.deployment.replicas",
            f"autoscaling needs a range with min < max (got min {plan.replicas}, max "
            f"{plan.replicas_max}), e.g. replicas: {{min: 1, max: 4}}",
        )
        return out
    if plan.namespace is None:
        add(
            "spec.selector.namespace",
            "autoscaling needs the workload's namespace: the ScaledObject must be created "
            "beside the Deployment it scales, and its queries read the service's records there",
        )
    hpa = auto.autoscaler == "hpa"
    if hpa:
        out.extend(_hpa_problems(plan))
    elif plan.replicas == 0 and plan.activator is None:
        add(
            "spec.autoscaling",
            "replicas.min is 0, but at zero replicas the model's own pods export nothing, so "
            "nothing could scale it back up; name where requests wait outside the pods in "
            "spec.scaleToZero.activator (keda-http, knative or a custom gateway gauge)",
        )
    if plan.cluster_label is not None and auto.cluster is None:
        add(
            "spec.autoscaling.cluster",
            f"spec.prometheus.clusterLabel is {plan.cluster_label!r}: name the cluster KEDA "
            "runs in, or its queries would sum every cluster's series",
        )
    if plan.cluster_label is None and auto.cluster is not None:
        add(
            "spec.autoscaling.cluster",
            "names a cluster, but spec.prometheus.clusterLabel is not set: set the label that "
            "tells clusters apart, or drop cluster",
        )
    gauges = {"queue_depth": plan.queue_depth, "kv_cache": plan.kv_cache_usage}
    for field, attr, key, alert_field, metric_field in TRIGGERS:
        target = getattr(auto, attr)
        if target is None:
            continue
        path = f"spec.autoscaling.{field}"
        if gauges[key] is None:
            add(
                path,
                f"server {plan.server} has no {metric_field} gauge; set "
                f"spec.metrics.{metric_field} or drop {field}",
            )
            continue
        limit = service_threshold(plan, key)
        if limit is None:
            continue
        held = saturation(target, plan.replicas_max)
        if held >= limit:
            per_pod = " per pod" if key == "kv_cache" else ""
            alert_max = _CEILINGS[key](plan.alerts[key]).max
            most = limit / plan.replicas_max / (1 + HPA_TOLERANCE)
            add(
                path,
                f"{decimal_str(target)} × {plan.replicas_max} replicas × {1 + HPA_TOLERANCE:g} "
                f"(HPA tolerance) = {held:.6g} reaches the page's service-level threshold "
                f"{limit:.6g} (spec.alerts.{alert_field}.max {decimal_str(alert_max)}{per_pod}"
                f"{f' × {plan.replicas_max} replicas' if per_pod else ''}): the alert would "
                f"fire while the autoscaler still had replicas to add; expected {field} below "
                f"{most:.6g}, or a higher alert max",
            )
            continue
        alert = plan.alerts[key]
        if hpa:
            if alert.for_ms <= HPA_SYNC_PERIOD_MS:
                add(
                    f"spec.alerts.{alert_field}.for",
                    f"{format_duration_ms(alert.for_ms)} is not longer than the HPA's "
                    f"{format_duration_ms(HPA_SYNC_PERIOD_MS)} sync period: the page would fire "
                    "before the HPA read the metric once; page after a longer for",
                )
        elif alert.for_ms <= auto.polling_interval:
            add(
                "spec.autoscaling.pollingInterval",
                f"{format_duration_ms(auto.polling_interval)} is not shorter than "
                f"spec.alerts.{alert_field}.for ({format_duration_ms(alert.for_ms)}): the page "
                "would fire before KEDA polled once; poll more often",
            )
    return out
