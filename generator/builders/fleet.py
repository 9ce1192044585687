"""The fleet overview: one table row per service, linking to each service's dashboard.

Why no query names a service, and the cluster label: docs/dashboards.md, "How the fleet
overview is built".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grafanalib.core as g

from generator import naming
from generator.errors import Diagnostic, ObsgenError, capped_list
from generator.parts.grafana_json import (
    PanelDef,
    Query,
    RowDef,
    Step,
    cluster_variable,
    datasource_variable,
)
from generator.parts.grafana_json import query_variable as variable
from generator.plan import ServicePlan
from generator.promql import Matcher, by, selector

# (refId, column title, unit, record) in table order; refId "A" is the info helper.
COLUMNS: tuple[tuple[str, str, str, str], ...] = (
    ("B", "SLO attainment (worst SLO)", "percentunit", naming.FLEET_SLI),
    ("C", "Error budget left (worst SLO)", "percentunit", naming.FLEET_BUDGET),
    ("D", "p99 latency", "s", naming.FLEET_P99),
    ("E", "Error ratio", "percentunit", naming.FLEET_ERROR_RATIO),
    ("F", "Queue depth", "short", naming.FLEET_QUEUE),
    ("G", "GPU memory headroom", "percentunit", naming.FLEET_GPU_HEADROOM),
)
_SERVICE = Matcher(naming.SERVICE, "=~", "$service")
_TEAM = Matcher(naming.TEAM, "=~", "$team")
# Rows the table is sized for; more scroll inside the panel.
_VISIBLE_ROWS = 20


def _cluster(cluster: str | None) -> tuple[Matcher, ...]:
    """The ``cluster`` variable's filter, when the fleet has a cluster label."""
    return (Matcher(cluster, "=~", "$cluster"),) if cluster else ()


def _identity_keys(cluster: str | None) -> tuple[str, ...]:
    """The labels naming one service in the fleet: namespace, ``service`` and the cluster
    label (:func:`generator.parts.common.identity`), so two services of one name in two
    namespaces are two rows."""
    return ("namespace", naming.SERVICE, *((cluster,) if cluster else ()))


def _in_selection(expr: str, cluster: str | None) -> str:
    """``expr`` (per service identity: namespace, ``service``, and cluster) kept for the
    services the ``team`` variable selects."""
    info = selector(naming.FLEET_INFO, (_TEAM, *_cluster(cluster)))
    keys = _identity_keys(cluster)
    return f"{expr} and on{by(keys).removeprefix(' by')} {info}"


def fleet_panel(plans: Sequence[ServicePlan]) -> PanelDef:
    """The services table; the ``service`` cell links to that service's dashboard.

    Every column is one query over a fleet record (:mod:`generator.builders.fleet_rules`),
    so the panel is the same size for 4 services or 1,000.
    """
    cluster = fleet_cluster_label(plans)
    where = _cluster(cluster)
    alerts = selector(
        naming.ALERTS_SERIES, (Matcher("alertstate", "=", "firing"), _SERVICE, *where)
    )
    by_service = by(_identity_keys(cluster))
    queries = (
        Query(selector(naming.FLEET_INFO, (_SERVICE, _TEAM, *where)), instant=True),
        *(
            Query(_in_selection(selector(record, (_SERVICE, *where)), cluster), instant=True)
            for _, _, _, record in COLUMNS
        ),
        Query(_in_selection(f"count{by_service} ({alerts})", cluster), instant=True),
    )
    titles = [
        *((ref, title, unit) for ref, title, unit, _ in COLUMNS),
        ("H", "Firing alerts", "short"),
    ]
    rename = {f"Value #{ref}": title for ref, title, _ in titles}
    overrides: list[dict[str, Any]] = [
        {
            "matcher": {"id": "byName", "options": title},
            "properties": [{"id": "unit", "value": unit}],
        }
        for _, title, unit in titles
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
        description="One row per service of the selected teams and services, from the fleet "
        f"recording rules every service's rule file holds: worst SLI over its SLO window "
        f"({naming.FLEET_SLI}), worst error budget left ({naming.FLEET_BUDGET}), p99 of the "
        f"end-to-end (else first) latency indicator ({naming.FLEET_P99}), error ratio "
        f"({naming.FLEET_ERROR_RATIO}), queue depth ({naming.FLEET_QUEUE}), lowest GPU memory "
        f"headroom ({naming.FLEET_GPU_HEADROOM}) and firing alerts (ALERTS). Click a service "
        "to open its dashboard; sort by a column to find the worst.",
        kind="table",
        queries=queries,
        unit="none",
        steps=(Step(None, "green"),),
        runbook=(
            naming.ALERT_ERROR_BUDGET_BURN,
            plans[0].runbook_url(naming.ALERT_ERROR_BUDGET_BURN),
        ),
        width=24,
        height=3 + min(len(plans), _VISIBLE_ROWS),
        overrides=tuple(overrides),
        extra={
            "transformations": [
                {"id": "merge", "options": {}},
                {
                    "id": "organize",
                    "options": {
                        "excludeByName": {
                            "Time": True,
                            "Value #A": True,
                            "dashboard_uid": True,
                            "server": True,
                        },
                        "indexByName": (
                            {cluster: 0, "namespace": 1, "service": 2, naming.TEAM: 3}
                            if cluster
                            else {"namespace": 0, "service": 1, naming.TEAM: 2}
                        ),
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
        shown = capped_list([f"{label} in {source}" for label, source in sorted(named.items())])
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


def fleet_dashboard(plans: Sequence[ServicePlan]) -> tuple[list[RowDef], list[g.Template]]:
    """Rows and variables (``datasource``, ``cluster`` when the fleet has a cluster label,
    ``team``, ``service``) of the fleet overview (``plans`` non-empty)."""
    ordered = sorted(plans, key=lambda p: p.name)
    cluster = fleet_cluster_label(ordered)
    where = _cluster(cluster)
    info = naming.FLEET_INFO
    templates = [datasource_variable()]
    if cluster:
        templates.append(cluster_variable(cluster, info))
    templates += [
        variable(
            "team",
            "Team",
            f"label_values({selector(info, where) if where else info}, {naming.TEAM})",
        ),
        variable(
            "service",
            "Service",
            f"label_values({selector(info, (_TEAM, *where))}, {naming.SERVICE})",
        ),
    ]
    return [RowDef("Services", (fleet_panel(ordered),))], templates
