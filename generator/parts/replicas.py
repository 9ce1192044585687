"""Desired replicas of a service's workload, read live from kube-state-metrics: "scaled to zero
on purpose" as one PromQL clause for any alert, and the requests an activator holds meanwhile.

An autoscaler (KEDA, KServe/Knative, an HPA) or an operator changes the desired count at run
time, so it is never taken from the spec. Shapes: each clause gives at most one series per
(namespace, cluster label) of the service; how to apply it: :func:`unless_scaled_to_zero`.
Why and the transitions: docs/spec.md, "Scale to zero (`spec.deployment.replicas`, `spec.scaleToZero`)".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.parts.pods import replica_metrics
from generator.promql import Matcher, by, selector
from generator.units import format_duration_ms

if TYPE_CHECKING:
    from generator.plan import ServicePlan


def keys(plan: ServicePlan) -> tuple[str, ...]:
    """The labels the clauses keep: ``namespace`` when ``spec.selector`` fixes it, and the
    cluster label (:meth:`ServicePlan.keeping`). Without a namespace in the selector a
    workload of that name counts in every namespace: scaled to zero only when all are."""
    return plan.keeping("namespace") if plan.namespace else plan.keeping()


def workload_matchers(plan: ServicePlan) -> tuple[Matcher, ...]:
    """Matchers of the workload's kube-state-metrics replica series: its namespace (when the
    spec's selector fixes one) and ``deployment``/``statefulset`` = ``spec.deployment.name``."""
    ns = (Matcher("namespace", "=", plan.namespace),) if plan.namespace else ()
    return (*ns, Matcher(replica_metrics(plan)[2], "=", plan.deployment_name))


def desired_selector(plan: ServicePlan) -> str:
    """``kube_deployment_spec_replicas{…}`` (StatefulSet: ``kube_statefulset_replicas``) of the
    workload: the replicas its controller is asked for now."""
    return selector(replica_metrics(plan)[0], workload_matchers(plan))


def desired(plan: ServicePlan) -> str:
    """Desired replicas per (namespace, cluster): the largest any kube-state-metrics instance
    reports (two instances of an HA pair report the same workload twice)."""
    return f"max{by(keys(plan))} ({desired_selector(plan)})"


def grace_range_ms(plan: ServicePlan, within_ms: int) -> int:
    """The range :func:`scaled_to_zero` reads for ``within_ms``: half a scrape interval short,
    so that the range's left end falls between the scrapes of a series scraped at
    ``spec.prometheus.scrapeInterval`` (Prometheus 2 counts a sample on that end, 3 does not;
    as :func:`generator.parts.common.held_for`); 0 (the instant value) when ``within_ms``
    is not longer than one scrape interval."""
    step = plan.scrape_interval_ms
    return within_ms - step // 2 if within_ms > step else 0


def scaled_to_zero(plan: ServicePlan, within_ms: int = 0) -> str:
    """1 series per (namespace, cluster) whose workload is desired at 0 replicas: now
    (``within_ms`` 0), or at any sample of the last ``within_ms`` (:func:`grace_range_ms`) —
    which also covers a start from zero still inside its grace (``plan.startup_grace_ms``).
    Value 0.

    Every kube-state-metrics instance must agree (``max``), so a stale duplicate that still
    says 0 hides nothing. Without kube-state-metrics it has no series: nothing is silenced.
    """
    series = desired_selector(plan)
    span = grace_range_ms(plan, within_ms)
    if span:
        series = f"min_over_time({series}[{format_duration_ms(span)}])"
    return f"(max{by(keys(plan))} ({series}) == 0)"


def unless_scaled_to_zero(plan: ServicePlan, expr: str, within_ms: int = 0) -> str:
    """``expr`` silenced while the service is scaled to zero on purpose:

        (<expr>)
        unless on (namespace[, cluster]) (max by (…) (<desired replicas>) == 0)

    ``expr`` must keep the labels of :func:`keys` on its series (``namespace`` and the
    cluster label), as every service aggregation and recorded series does; its other labels
    (``pod``, ``slo``) may stay.
    ``within_ms``: see :func:`scaled_to_zero` (the startup grace after a start from zero)."""
    on = ", ".join(keys(plan))
    return f"({expr})\nunless on ({on}) {scaled_to_zero(plan, within_ms)}"


def starting_from_zero(plan: ServicePlan) -> str:
    """Scaled to zero now or within the startup grace: :func:`scaled_to_zero` over
    ``plan.startup_grace_ms``."""
    return scaled_to_zero(plan, plan.startup_grace_ms)


def activator_keys(plan: ServicePlan) -> tuple[str, ...]:
    """Labels the activator clauses keep: the cluster label only. The activator runs in its
    own namespace, so its series' ``namespace`` is not the service's; the alert's own
    ``namespace`` label is the service's (:func:`generator.parts.common.identity`)."""
    return plan.keeping()


def activator_window_ms(plan: ServicePlan) -> int:
    """The look-back of the waiting requests: two scrape intervals, so one scrape between
    two requests (a client retrying after the activator's own timeout) is no gap."""
    return 2 * plan.scrape_interval_ms


def activator_waiting(plan: ServicePlan) -> str:
    """Requests the activator held for the service in the last two scrapes, summed over its
    replicas, per cluster: each of the source's names (newest release first) read with the
    spec's matchers; the first with series counts. Empty without an activator."""
    act = plan.activator
    if act is None:
        return ""
    per = by(activator_keys(plan))
    window = format_duration_ms(activator_window_ms(plan))
    return " or ".join(
        f"sum{per} (max_over_time({selector(name, act.matchers)}[{window}]))" for name in act.names
    )


def serving(plan: ServicePlan) -> str:
    """1 per cluster where a target of the service is up and the workload is not desired at
    0 (a pod still up while it scales down to zero serves no new request)."""
    keys = activator_keys(plan)
    up = selector("up", plan.matchers)
    return f"(group{by(keys)} ({up} == 1) unless on ({', '.join(keys)}) {scaled_to_zero(plan)})"
