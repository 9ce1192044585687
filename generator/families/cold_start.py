"""``spec.alerts.coldStart``: ``ModelColdStartSlow``, requests held at the activator
(``spec.scaleToZero.activator``) while no pod of the service is up, longer than ``for`` (the
cold-start budget).

Reads the activator's gauge of held requests (KEDA HTTP add-on interceptor, Knative
activator, or a gateway's; names in :data:`generator.naming.ACTIVATOR_METRICS`), the
service's ``up`` and kube-state-metrics' desired replicas; page text in
``templates/runbooks/ModelColdStartSlow.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families.base import Family, Resolving, Role
from generator.families.memory import runbook_cluster
from generator.parts import replicas
from generator.parts.common import alert_rule
from generator.parts.grafana_json import PanelDef, Query
from generator.parts.panel_parts import cluster_filter, kept_by, named, panel_runbook, scope
from generator.parts.pods import replica_metrics
from generator.parts.promtool_series import (
    INTERVAL_MS,
    Series,
    alert_test,
    expected_alert,
    healthy_replicas,
    steps_until,
    up_labels,
)
from generator.parts.replica_series import (
    activator_labels,
    set_replicas,
    steady,
    switch,
)
from generator.parts.windowed_series import Minutes, gauge_group, values_text
from generator.promql import Matcher, selector
from generator.units import format_duration_ms

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import ServicePlan

KEY = "cold_start"
ALERT = naming.ALERT_COLD_START

SOURCES = {
    "keda-http": "KEDA HTTP add-on's interceptor",
    "knative": "Knative's activator",
    "custom": "the gateway",
}


def expr(plan: ServicePlan) -> str:
    """Requests the activator held for the service (max over the last two scrapes, summed
    over its replicas, per cluster) above 0 while no target of the service is up or its
    workload is desired at 0 replicas (:func:`generator.parts.replicas.serving`). Value:
    requests held."""
    on = ", ".join(replicas.activator_keys(plan))
    return f"({replicas.activator_waiting(plan)}) > 0\nunless on ({on}) {replicas.serving(plan)}"


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelColdStartSlow`` after :func:`expr` held for ``for`` (the cold-start budget);
    none without ``spec.scaleToZero.activator``."""
    alert = plan.alerts.get(KEY)
    act = plan.activator
    if alert is None or act is None:
        return []
    return [
        alert_rule(
            plan,
            ALERT,
            expr(plan),
            alert.for_ms,
            alert.severity,
            source=SOURCES[act.source],
            metric=" or ".join(act.names),
            workload=f"{plan.workload_kind}/{plan.deployment_name}",
        )
    ]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Requests held while scaled to zero page after ``for`` (and under an older release's
    name, where the source has one); requests held while a start from zero has no pod up
    page after ``for``, and so do requests held while desired stays 0 with a pod still up; a
    cold start whose pod is up within ``for`` stays quiet; requests in flight through the
    activator while a pod serves stay quiet; scaled to zero without requests stays quiet."""
    alert = plan.alerts.get(KEY)
    act = plan.activator
    if alert is None or act is None:
        return []
    rule = rules(plan)[0]
    name = rule["alert"]
    budget = -(-alert.for_ms // INTERVAL_MS)  # whole minutes
    start = 5  # requests arrive (and the autoscaler may act) at 5m
    t0 = start * INTERVAL_MS
    length = steps_until(t0 + (budget + 10) * INTERVAL_MS)
    end = (length - 5) * INTERVAL_MS
    n = healthy_replicas(plan)
    cluster = {k: v for k, v in activator_labels(plan).items() if k == plan.cluster_label}
    # Held requests rise at t0 and never fall before a check: both Prometheus lines see the
    # same maximum over the look-back (a fall would linger one sample longer on 2).
    held: Minutes = [0.0] * start + [2.0] * (length - start)

    def series(
        desired: Minutes, up: Minutes | None = None, waiting: Minutes = held, name_index: int = 0
    ) -> Series:
        s = Series()
        # Available replicas: the pods up (the rule reads none of it; context only).
        set_replicas(s, plan, desired, [v or 0.0 for v in (up or steady(0, length))])
        if up is not None:
            s.gauge("up", up_labels(plan), values_text(up))
        for replica in (0, 1):  # two activator replicas, one held request each
            s.gauge(
                act.names[name_index],
                activator_labels(plan, replica),
                values_text([None if v is None else v / 2 for v in waiting]),
            )
        return s

    def pages(at: int) -> list[dict[str, Any]]:
        # Pending from t0 (the first held sample): quiet one evaluation before `for` is up.
        before = [alert_test(at - INTERVAL_MS, name, [])] if alert.for_ms else []
        return [*before, alert_test(at, name, [expected_alert(rule, cluster, 2.0)])]

    fire = t0 + budget * INTERVAL_MS
    budget_text = format_duration_ms(alert.for_ms)
    zero = steady(0, length)
    groups = [
        gauge_group(
            f"{name}: requests held by the activator while scaled to zero (desired 0) page "
            f"after {budget_text}",
            series(zero),
            length,
            pages(fire),
        ),
        gauge_group(
            f"{name}: requests held while a start from zero (desired {n:g}) has no pod up "
            f"(pending, then loading) page after {budget_text}",
            series(
                switch(0, n, start, length),
                [None] * (start + 2) + [0.0] * (length - start - 2),
            ),
            length,
            pages(fire),
        ),
        gauge_group(
            f"{name}: requests in flight through the activator while a pod serves stay quiet",
            series(steady(n, length), steady(1, length)),
            length,
            [alert_test(t, name, []) for t in (fire, end)],
        ),
        gauge_group(
            f"{name}: requests held while the workload is desired at 0 replicas, its last pod "
            f"still up, page after {budget_text} (the autoscaler does not scale back up)",
            series(zero, steady(1, length)),
            length,
            pages(fire),
        ),
        gauge_group(
            f"{name}: scaled to zero without requests stays quiet",
            series(zero, waiting=zero),
            length,
            [alert_test(t, name, []) for t in (fire, end)],
        ),
    ]
    if budget >= 2:
        ready = start + budget - 1  # the pod up a minute before the budget is spent
        groups.append(
            gauge_group(
                f"{name}: a cold start whose pod is up within {budget_text} stays quiet",
                series(
                    switch(0, n, start, length),
                    [None] * (start + 1) + [0.0] * (ready - start - 1) + [1.0] * (length - ready),
                ),
                length,
                [alert_test(t, name, []) for t in (fire, fire + INTERVAL_MS, end)],
            )
        )
    if len(act.names) > 1:
        groups.append(
            gauge_group(
                f"{name}: requests held while scaled to zero, read under an older release's "
                f"name ({act.names[-1]}), page after {budget_text}",
                series(zero, name_index=len(act.names) - 1),
                length,
                pages(fire),
            )
        )
    return groups


def panels(plan: ServicePlan) -> list[PanelDef]:
    """Cold starts: requests held at the activator, desired replicas and targets up, one
    graph; none without ``spec.scaleToZero.activator``."""
    act = plan.activator
    if act is None:
        return []
    by_cluster = kept_by(plan)
    waiting = " or ".join(
        f"sum{by_cluster} ({selector(name, (*act.matchers, *cluster_filter(plan)))})"
        for name in act.names
    )
    want, _, workload = replica_metrics(plan)
    desired = selector(want, (*scope(plan), Matcher(workload, "=", plan.deployment_name)))
    up = selector("up", (*plan.matchers, *scope(plan)))
    alert = plan.alerts.get(KEY)
    budget = (
        f"; {ALERT} pages when requests are held with no pod up for "
        f"{format_duration_ms(alert.for_ms)}"
        if alert is not None
        else ""
    )
    return [
        PanelDef(
            title="Cold starts",
            key="cold-starts",
            description=f"Requests held by {SOURCES[act.source]} ({' or '.join(act.names)}), "
            f"the replicas kube-state-metrics reports desired for "
            f"{plan.workload_kind}/{plan.deployment_name}, and the service's targets up: a "
            f"cold start is held requests while desired leaves 0 and before a target is "
            f"up{budget}.",
            kind="timeseries",
            queries=(
                Query(waiting, named(plan, "held at the activator")),
                Query(f"max{by_cluster} ({desired})", named(plan, "desired replicas")),
                Query(f"sum{by_cluster} ({up})", named(plan, "targets up")),
            ),
            unit="short",
            min_value=0,
            runbook=panel_runbook(plan, ALERT),
            width=12,
        )
    ]


def runbook_queries(plan: ServicePlan, rec: Callable[..., str]) -> dict[str, str | None]:
    """``activator_held``: the activator's held requests of the service, in the alert's
    cluster (None without an activator)."""
    act = plan.activator
    if act is None:
        return {"activator_held": None}
    cluster: tuple[Matcher, ...] = runbook_cluster(plan)
    return {
        "activator_held": " or ".join(
            selector(name, (*act.matchers, *cluster)) for name in act.names
        )
    }


def unavailable(r: Resolving) -> str | None:
    """Left out without ``spec.scaleToZero.activator``: the alert reads where requests wait."""
    if r.body.scale_to_zero.activator is not None:
        return None
    return (
        f"{ALERT} alert left out: it reads where requests wait while no pod is up; name it "
        "in spec.scaleToZero.activator"
    )


FAMILY = Family(
    key=KEY,
    spec_field="coldStart",
    alerts=(ALERT,),
    # A large model's cold start (schedule, pull, load weights) takes minutes.
    for_ms=600_000,
    severity="critical",
    params={},
    role=Role.SYMPTOM,
    group="targets",
    rules=rules,
    cases=cases,
    row="traffic",
    rank=2,
    panels=panels,
    runbook_queries=runbook_queries,
    unavailable=unavailable,
)
