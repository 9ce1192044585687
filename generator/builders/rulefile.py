"""The whole rule file of one service: every rule family, in one fixed order."""

from __future__ import annotations

from typing import Any

from generator import dedup
from generator.builders import (
    efficiency_rules,
    fleet_rules,
    goodput_rules,
    gpu_rules,
    guard_rules,
    model_slo_rules,
    service_rules,
    slo_rules,
)
from generator.families import FAMILIES, memory
from generator.parts.common import Group, Rule, group
from generator.plan import ServicePlan


def rule_groups(plan: ServicePlan) -> list[Group]:
    """All rule groups of ``plan`` (Prometheus rule-file ``groups``), deterministic order.

    Groups: ``traffic`` (request/error/latency/saturation records, then their alerts),
    ``memory`` (the service's pods first), ``targets`` (target down), ``gpu``, ``guards``
    (replicas unavailable, input guards), one ``slo.<name>`` per SLO, then ``fleet`` (the fleet
    overview's per-service records). Empty groups are left out.
    """
    groups = [
        group(
            plan,
            "traffic",
            [
                *service_rules.traffic_records(plan),
                *service_rules.latency_records(plan),
                *service_rules.traffic_alerts(plan),
            ],
        ),
        group(
            plan,
            "memory",
            [
                *memory.records(plan),
                *(r for f in FAMILIES if f.group == "memory" for r in f.rules(plan)),
            ],
        ),
        group(
            plan, "targets", [r for f in FAMILIES if f.group == "targets" for r in f.rules(plan)]
        ),
        group(plan, "gpu", [*gpu_rules.gpu_alerts(plan), *efficiency_rules.records(plan)]),
        group(plan, "guards", guard_rules.guard_alerts(plan)),
        *slo_rules.slo_groups(plan),
        *goodput_rules.goodput_groups(plan),
        *model_slo_rules.model_groups(plan),
        group(plan, "fleet", fleet_rules.fleet_records(plan)),
    ]
    kept = [g for g in groups if g["rules"]]
    if plan.copy_labels:
        kept = [_collapsed(g, plan) for g in kept]
    return kept


def _collapsed(group: Group, plan: ServicePlan) -> Group:
    """``group`` with every expression reading copies collapsed (``ruler.deduplication:
    rules``, :func:`generator.dedup.collapse`)."""
    rules = [
        {**r, "expr": dedup.collapse(r["expr"], plan.copy_labels, plan.replica_labels)}
        for r in group["rules"]
    ]
    return {**group, "rules": rules}


def rule_file(plan: ServicePlan) -> dict[str, Any]:
    """The rule-file document: ``{"groups": [...]}``."""
    return {"groups": rule_groups(plan)}


def alert_rules(plan: ServicePlan, groups: list[Group] | None = None) -> list[Rule]:
    """The alerting rules of ``plan`` in rule-file order (read-only: shared by every caller),
    built once per plan (:meth:`ServicePlan.derive`) from ``groups`` when the caller has
    them, else from :func:`rule_groups`."""
    return plan.derive(
        "alert_rules",
        lambda: [
            r
            for g in (rule_groups(plan) if groups is None else groups)
            for r in g["rules"]
            if "alert" in r
        ],
    )
