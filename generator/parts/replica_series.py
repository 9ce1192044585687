"""Synthetic series of a workload that scales to zero and back, for the promtool cases of the
families that read its desired replicas (:mod:`generator.parts.replicas`).

One sample per test step (minute, :data:`~generator.parts.windowed_series.Minutes`); a start
from zero switches the desired count at a whole minute chosen so that no query step falls on
the edge of the grace's range, where Prometheus 2 (closed ranges) and 3 (left-open) disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from generator.parts.pods import replica_metrics
from generator.parts.promtool_series import INTERVAL_MS, Series, container_labels
from generator.parts.replicas import grace_range_ms, keys
from generator.parts.windowed_series import Minutes, held_seconds, values_text

if TYPE_CHECKING:
    from generator.plan import ServicePlan


def workload_labels(plan: ServicePlan) -> dict[str, str]:
    """Labels of the workload's kube-state-metrics replica series (namespace, cluster, name)."""
    kept = plan.keeping("namespace")
    ns = {k: v for k, v in container_labels(plan).items() if k in kept}
    return {**ns, replica_metrics(plan)[2]: plan.deployment_name}


def identity_labels(plan: ServicePlan) -> dict[str, str]:
    """Labels an alert keyed by the clauses' keys carries from its series (namespace, cluster)."""
    kept = keys(plan)
    return {k: v for k, v in workload_labels(plan).items() if k in kept}


def set_replicas(s: Series, plan: ServicePlan, desired: Minutes, available: Minutes) -> None:
    """kube-state-metrics' desired and available (StatefulSet: ready) replicas, per minute."""
    want, have, _ = replica_metrics(plan)
    labels = workload_labels(plan)
    s.gauge(want, labels, values_text(desired))
    s.gauge(have, labels, values_text(available))


def steady(value: float, length: int) -> Minutes:
    """``value`` at every one of ``length`` steps."""
    return [value] * length


def switch(before: float, after: float, at_min: int, length: int) -> Minutes:
    """``before`` up to minute ``at_min`` (excluded), ``after`` from it on."""
    return [before] * at_min + [after] * (length - at_min)


def grace_edge(plan: ServicePlan, start_ms: int) -> int | None:
    """When the last 0 sample before ``start_ms`` leaves the grace's range: at that instant
    Prometheus 2 (closed ranges) still sees it, 3 (left-open) does not; None for an instant
    clause (a grace of one scrape interval or less)."""
    span = grace_range_ms(plan, plan.startup_grace_ms)
    return start_ms - INTERVAL_MS + span if span else None


def start_minute(plan: ServicePlan, earliest_min: int) -> int:
    """The first whole minute from ``earliest_min`` on (within an hour) at which the desired
    count may leave 0 with its :func:`grace_edge` on no query step (a multiple of the scrape
    interval, the windowed rules' subquery step, or of a minute, the evaluation step), so
    that both Prometheus lines agree at every step; ``earliest_min`` when none is (the cases
    then assert only where they agree, :func:`starting`)."""
    for minute in range(earliest_min, earliest_min + 60):
        edge = grace_edge(plan, minute * INTERVAL_MS)
        if edge is None or (edge % plan.scrape_interval_ms and edge % INTERVAL_MS):
            return minute
    return earliest_min


def starting(plan: ServicePlan, start_ms: int, t_ms: int, closed: bool = False) -> bool:
    """Whether :func:`~generator.parts.replicas.starting_from_zero` holds at ``t_ms`` for a
    desired count 0 before ``start_ms`` (a whole minute) and above 0 from it on: at zero now,
    or a 0 sample within the grace's range, its left end included when ``closed``
    (Prometheus 2) and excluded otherwise (3)."""
    if t_ms < start_ms:
        return True
    edge = grace_edge(plan, start_ms)
    return edge is not None and (t_ms < edge or (closed and t_ms == edge))


def activator_labels(plan: ServicePlan, replica: int = 0) -> dict[str, str]:
    """Labels of one activator replica's series: the spec's activator matchers, the cluster
    label (as every synthetic series of the service), a namespace of its own unless the
    matchers fix one (never the service's) and the replica's pod."""
    assert plan.activator is not None
    labels = {"namespace": "activator-system"}
    if plan.cluster_label:
        labels[plan.cluster_label] = f"test-{plan.cluster_label}"
    labels.update({m.label: m.value for m in plan.activator.matchers})
    return {**labels, "pod": f"activator-{replica}"}


def first_unsuppressed(plan: ServicePlan, start_ms: int, length: int, closed: bool) -> int:
    """The first evaluation (whole minute, ms) from ``start_ms`` at which a start from zero
    at ``start_ms`` no longer silences a rule (:func:`starting`; ``closed``: Prometheus 2)."""
    return next(
        m * INTERVAL_MS
        for m in range(start_ms // INTERVAL_MS, length)
        if not starting(plan, start_ms, m * INTERVAL_MS, closed)
    )


def held_after_start(
    plan: ServicePlan, condition: Callable[[int], bool], start_ms: int, at_ms: int, window_ms: int
) -> tuple[float, float]:
    """What a windowed rule whose steps a start from zero at ``start_ms`` silences counts at
    ``at_ms`` (seconds): on Prometheus 3, and on 2 (:func:`starting`)."""

    def counted(closed: bool) -> float:
        return held_seconds(
            plan,
            lambda t: condition(t) and not starting(plan, start_ms, t, closed),
            at_ms,
            window_ms,
        )

    return counted(False), counted(True)


def agreed_firing(
    plan: ServicePlan,
    condition: Callable[[int], bool],
    start_ms: int,
    window_ms: int,
    least_s: float,
    length: int,
) -> tuple[int, float]:
    """The first evaluation at which a windowed rule (steps silenced by a start from zero at
    ``start_ms``) holds at least ``least_s`` plus one step on both Prometheus lines, with the
    same count on both, and that count (s).

    Raises:
        ValueError: no such evaluation within ``length`` steps (the case would prove nothing).
    """
    margin = least_s + plan.scrape_interval_ms / 1000
    for i in range(start_ms // INTERVAL_MS, length):
        at = i * INTERVAL_MS
        open_, closed = held_after_start(plan, condition, start_ms, at, window_ms)
        if open_ == closed >= margin:
            return at, open_
    raise ValueError("a windowed case after a start from zero never fires on both lines")
