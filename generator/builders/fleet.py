"""The fleet overview: one table row per service, linking to each service's dashboard.

Each column is one instant query over the services' recording rules, joined on the ``service``
label (Grafana "merge" transformation). Record names depend on each service's ``groupBy``, so
a column is the ``or`` of one term per service. GPU series carry no ``service`` label: the
headroom column adds it with ``label_replace``. A helper query carries each service's
dashboard uid (uids hold a hash, so Grafana cannot derive them) for the data link.

Services whose spec names a cluster label (``spec.prometheus.clusterLabel``) get one row per
cluster: every term groups by ``cluster`` too and is filtered by the ``cluster`` variable, and
the link opens the service dashboard on that cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grafanalib.core as g

from generator import naming
from generator.builders.common import recorded
from generator.builders.grafana_json import PanelDef, Query, RowDef, Step, datasource_variable
from generator.errors import Diagnostic, ObsgenError
from generator.plan import ServicePlan
from generator.promql import Matcher, by, quote, regex_escape, selector

# (refId, column title, unit) in table order; refId "A" is the dashboard-uid helper.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("B", "SLO attainment (worst SLO)", "percentunit"),
    ("C", "Error budget left (worst SLO)", "percentunit"),
    ("D", "p99 latency", "s"),
    ("E", "Error ratio", "percentunit"),
    ("F", "Queue depth", "short"),
    ("G", "GPU memory headroom", "percentunit"),
    ("H", "Firing alerts", "short"),
)
_INDICATOR_PREFERENCE = ("requestDuration", "timeToFirstToken", "interTokenLatency")


def _tag(expr: str, plan: ServicePlan) -> str:
    """``expr`` (no labels) with ``service="<name>"`` added."""
    return f"label_replace({expr}, {quote(naming.SERVICE)}, {quote(plan.name)}, {quote(naming.SERVICE)}, {quote('')})"


def _either(terms: Sequence[str]) -> str:
    return " or ".join(terms) if terms else "vector(0) < 0"


def _cluster(plan: ServicePlan) -> tuple[Matcher, ...]:
    """The ``cluster`` variable's filter for a service with a cluster label."""
    return (Matcher(plan.cluster_label, "=~", "$cluster"),) if plan.cluster_label else ()


def _rows(plan: ServicePlan) -> str:
    """One sample per row of the service: ``vector(1)`` tagged with it, or one per cluster."""
    if not plan.cluster_label:
        return _tag("vector(1)", plan)
    requests = naming.record(plan.group_by, naming.REQUESTS, "rate5m")
    by_cluster = by(plan.keeping(naming.SERVICE))
    return f"group{by_cluster} ({recorded(plan, requests, *_cluster(plan))})"


def _uid_query(plans: Sequence[ServicePlan]) -> str:
    return _either(
        [
            f'label_replace({_rows(p)}, "dashboard_uid", {quote(naming.dashboard_uid(p.name, p.namespace, p.cluster_label))}, "dashboard_uid", "")'
            for p in plans
        ]
    )


def _slo_term(plan: ServicePlan, metric: str, window: bool) -> list[str]:
    terms = []
    for s in plan.slos:
        op = f"ratio_rate{naming.window(s.window_ms)}" if window else "ratio"
        terms.append(
            recorded(
                plan,
                naming.record(plan.group_by, metric, op),
                Matcher(naming.SLO, "=", s.name),
                *_cluster(plan),
            )
        )
    return [f"min{_by_service(plan)} ({' or '.join(terms)})"] if terms else []


def _by_service(plan: ServicePlan) -> str:
    return by(plan.keeping(naming.SERVICE))


def _p99(plan: ServicePlan) -> list[str]:
    for key in _INDICATOR_PREFERENCE:
        h = plan.histograms.get(key)
        if h is not None:
            rec = recorded(
                plan,
                naming.record(plan.group_by, naming.LATENCY, "quantile_rate5m"),
                Matcher(naming.INDICATOR, "=", h.indicator),
                Matcher(naming.QUANTILE, "=", "0.99"),
                *_cluster(plan),
            )
            return [f"max{_by_service(plan)} ({rec})"]
    return []


def _error_ratio(plan: ServicePlan) -> list[str]:
    errors = recorded(
        plan, naming.record(plan.group_by, naming.REQUEST_ERRORS, "rate5m"), *_cluster(plan)
    )
    requests = recorded(
        plan, naming.record(plan.group_by, naming.REQUESTS, "rate5m"), *_cluster(plan)
    )
    by_service = _by_service(plan)
    return [f"sum{by_service} ({errors}) / (sum{by_service} ({requests}) > 0)"]


def _queue(plan: ServicePlan) -> list[str]:
    if plan.queue_depth is None:
        return []
    queue = recorded(plan, naming.record(plan.group_by, naming.QUEUE_DEPTH, "sum"), *_cluster(plan))
    return [f"sum{_by_service(plan)} ({queue})"]


def _gpu_headroom(plan: ServicePlan) -> list[str]:
    if not plan.gpu_exporter:
        return []
    free = selector(naming.GPU_MEMORY_FREE, (*plan.gpu_matchers, *_cluster(plan)))
    total = selector(naming.GPU_MEMORY_TOTAL, (*plan.gpu_matchers, *_cluster(plan)))
    gpus = by(plan.keeping("pod", "uuid"))
    ratio = f"max{gpus} ({free}) / (max{gpus} ({total}) > 0)"
    ratio = f"min{by(plan.keeping())} ({ratio})" if plan.cluster_label else f"min({ratio})"
    return [_tag(ratio, plan)]


def fleet_panel(plans: Sequence[ServicePlan]) -> PanelDef:
    """The services table; the ``service`` cell links to that service's dashboard."""
    names = "|".join(regex_escape(p.name) for p in plans)
    cluster = fleet_cluster_label(plans)
    alerts = selector(
        naming.ALERTS_SERIES,
        (
            Matcher("alertstate", "=", "firing"),
            Matcher(naming.SERVICE, "=~", names),
            *((Matcher(cluster, "=~", "$cluster"),) if cluster else ()),
        ),
    )
    by_service = by((naming.SERVICE, *((cluster,) if cluster else ())))
    column_exprs = {
        "B": _either([t for p in plans for t in _slo_term(p, naming.SLO_SLI, True)]),
        "C": _either([t for p in plans for t in _slo_term(p, naming.SLO_BUDGET_REMAINING, False)]),
        "D": _either([t for p in plans for t in _p99(p)]),
        "E": _either([t for p in plans for t in _error_ratio(p)]),
        "F": _either([t for p in plans for t in _queue(p)]),
        "G": _either([t for p in plans for t in _gpu_headroom(p)]),
        "H": f"count{by_service} ({alerts})",
    }
    queries = (
        Query(_uid_query(plans), instant=True),
        *(Query(column_exprs[ref], instant=True) for ref, _, _ in COLUMNS),
    )
    rename = {f"Value #{ref}": title for ref, title, _ in COLUMNS}
    overrides: list[dict[str, Any]] = [
        {
            "matcher": {"id": "byName", "options": title},
            "properties": [{"id": "unit", "value": unit}],
        }
        for _, title, unit in COLUMNS
    ]
    overrides.append(
        {
            "matcher": {"id": "byName", "options": "service"},
            "properties": [
                {
                    "id": "links",
                    "value": [
                        {
                            "title": "Open ${__data.fields.service} dashboard",
                            "url": "/d/${__data.fields.dashboard_uid}/${__data.fields.service}?${__url_time_range}"
                            + (f"&var-cluster=${{__data.fields.{cluster}}}" if cluster else ""),
                        }
                    ],
                }
            ],
        }
    )
    return PanelDef(
        title="Model services",
        key="services",
        description="One row per service, from each service's recording rules: worst SLI over its "
        f"SLO window ({naming.SLO_SLI}), worst error budget left ({naming.SLO_BUDGET_REMAINING}), "
        f"p99 of the end-to-end (else first) latency indicator ({naming.LATENCY}), error ratio "
        f"({naming.REQUEST_ERRORS} / {naming.REQUESTS}), queue depth ({naming.QUEUE_DEPTH}), lowest GPU "
        f"memory headroom ({naming.GPU_MEMORY_FREE} / {naming.GPU_MEMORY_TOTAL}) and firing alerts "
        "(ALERTS). Click a service to open its dashboard.",
        kind="table",
        queries=queries,
        unit="none",
        steps=(Step(None, "green"),),
        runbook=(
            naming.ALERT_ERROR_BUDGET_BURN,
            plans[0].runbook_url(naming.ALERT_ERROR_BUDGET_BURN),
        ),
        width=24,
        height=max(6, 3 + len(plans)),
        overrides=tuple(overrides),
        extra={
            "transformations": [
                {"id": "merge", "options": {}},
                {
                    "id": "organize",
                    "options": {
                        "excludeByName": {"Time": True, "Value #A": True, "dashboard_uid": True},
                        "indexByName": {cluster: 0, "service": 1} if cluster else {"service": 0},
                        "renameByName": rename,
                    },
                },
            ],
        },
    )


def fleet_cluster_label(plans: Sequence[ServicePlan]) -> str | None:
    """The cluster label the fleet overview groups by: the one every spec that sets
    ``clusterLabel`` names (None when none does).

    Raises:
        ObsgenError: two specs name different cluster labels (one variable cannot filter both).
    """
    named = {p.cluster_label: p.source for p in plans if p.cluster_label}
    if len(named) > 1:
        shown = ", ".join(f"{label} in {source}" for label, source in sorted(named.items()))
        raise ObsgenError(
            [
                Diagnostic(
                    source,
                    "spec.prometheus.clusterLabel",
                    f"every spec of one fleet must name the same cluster label ({shown}); "
                    "the fleet overview filters all services by one cluster variable",
                )
                for source in sorted(named.values())
            ]
        )
    return next(iter(named), None)


def fleet_variables(plans: Sequence[ServicePlan]) -> list[g.Template]:
    """``datasource``, and ``cluster`` over every clustered service's request rate."""
    from generator.builders.dashboard import cluster_variable

    cluster = fleet_cluster_label(plans)
    if cluster is None:
        return [datasource_variable()]
    clustered = [p for p in plans if p.cluster_label]
    names = sorted({naming.record(p.group_by, naming.REQUESTS, "rate5m") for p in clustered})
    series = selector(
        "",
        (
            Matcher("__name__", "=~", "|".join(regex_escape(n) for n in names)),
            Matcher(naming.SERVICE, "=~", "|".join(regex_escape(p.name) for p in clustered)),
        ),
    )
    return [datasource_variable(), cluster_variable(cluster, series)]


def fleet_dashboard(plans: Sequence[ServicePlan]) -> tuple[list[RowDef], list[g.Template]]:
    """Rows and variables of the fleet overview (``plans`` non-empty)."""
    ordered = sorted(plans, key=lambda p: p.name)
    return [RowDef("Services", (fleet_panel(ordered),))], fleet_variables(ordered)
