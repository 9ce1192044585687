"""Fleet recording rules: one series per service under names shared by every service.

The records and why they are shared: docs/dashboards.md, "How the fleet overview is built".
"""

from __future__ import annotations

from generator import naming
from generator.builders import goodput_rules
from generator.families import gpu
from generator.parts.common import Rule, record_rule, recorded
from generator.plan import ServicePlan
from generator.promql import Matcher, by

# Latency indicator the overview shows, in order of preference.
INDICATOR_PREFERENCE = (
    "requestDuration",
    "timeToFirstToken",
    "interTokenLatency",
    "timePerOutputToken",
    "requestQueueTime",
)


def _worst_slo(plan: ServicePlan, metric: str, window: bool) -> str | None:
    """The lowest SLI (``window``) or budget left over every SLO of ``plan``; a goodput SLO
    takes part with its union bound's lower bound of goodput and the budget left by it
    (:mod:`generator.builders.goodput_rules`), so the worst it can be is what the row shows."""
    terms = []
    for s in plan.slos:
        op = f"ratio_rate{naming.window(s.window_ms)}" if window else "ratio"
        rec = naming.record(plan.group_by, metric, op)
        terms.append(recorded(plan, rec, Matcher(naming.SLO, "=", s.name)))
    for s in plan.goodput:
        rec = (
            goodput_rules.lower_bound_record(plan, s.window_ms)
            if window
            else goodput_rules.budget_record(plan)
        )
        terms.append(recorded(plan, rec, Matcher(naming.SLO, "=", s.name)))
    return f"min{by(plan.keeping())} ({' or '.join(terms)})" if terms else None


def _p99(plan: ServicePlan) -> str | None:
    for key in INDICATOR_PREFERENCE:
        h = plan.histograms.get(key)
        if h is not None:
            rec = recorded(
                plan,
                naming.record(plan.group_by, naming.LATENCY, "quantile_rate5m"),
                Matcher(naming.INDICATOR, "=", h.indicator),
                Matcher(naming.QUANTILE, "=", "0.99"),
            )
            return f"max{by(plan.keeping())} ({rec})"
    return None


def _error_ratio(plan: ServicePlan) -> str:
    errors = recorded(plan, naming.record(plan.group_by, naming.REQUEST_ERRORS, "rate5m"))
    requests = recorded(plan, naming.record(plan.group_by, naming.REQUESTS, "rate5m"))
    keep = by(plan.keeping())
    return f"sum{keep} ({errors}) / (sum{keep} ({requests}) > 0)"


def _queue(plan: ServicePlan) -> str | None:
    if plan.queue_depth is None:
        return None
    queue = recorded(plan, naming.record(plan.group_by, naming.QUEUE_DEPTH, "sum"))
    return f"sum{by(plan.keeping())} ({queue})"


def _gpu_headroom(plan: ServicePlan) -> str | None:
    if not plan.gpu_exporter:
        return None
    free = gpu.read(plan, naming.GPU_MEMORY_FREE)
    total = gpu.read(plan, naming.GPU_MEMORY_TOTAL)
    gpus = by(plan.keeping("pod", "uuid"))
    return f"min{by(plan.keeping())} (max{gpus} ({free}) / (max{gpus} ({total}) > 0))"


def _info(plan: ServicePlan) -> str:
    """Value 1 per row of the service: ``vector(1)``, or one per cluster its requests come
    from (a ``vector(1)`` has no cluster label to join on)."""
    if not plan.cluster_label:
        return "vector(1)"
    requests = recorded(plan, naming.record(plan.group_by, naming.REQUESTS, "rate5m"))
    return f"group{by(plan.keeping())} ({requests})"


def fleet_records(plan: ServicePlan) -> list[Rule]:
    """The fleet recording rules of ``plan``: info first, then each column it can fill."""
    rules = [
        record_rule(
            plan,
            naming.FLEET_INFO,
            _info(plan),
            {
                "dashboard_uid": naming.dashboard_uid(
                    plan.name, plan.namespace, plan.cluster_label
                ),
                naming.TEAM: plan.team,
                "server": plan.server,
            },
        )
    ]
    for record, expr in (
        (naming.FLEET_SLI, _worst_slo(plan, naming.SLO_SLI, True)),
        (naming.FLEET_BUDGET, _worst_slo(plan, naming.SLO_BUDGET_REMAINING, False)),
        (naming.FLEET_P99, _p99(plan)),
        (naming.FLEET_ERROR_RATIO, _error_ratio(plan)),
        (naming.FLEET_QUEUE, _queue(plan)),
        (naming.FLEET_GPU_HEADROOM, _gpu_headroom(plan)),
    ):
        if expr is not None:
            rules.append(record_rule(plan, record, expr))
    return rules
