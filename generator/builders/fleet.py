"""The fleet overview: one table row per service, linking to each service's dashboard.

Each column is one instant query over the services' recording rules, joined on the ``service``
label (Grafana "merge" transformation). Record names depend on each service's ``groupBy``, so
a column is the ``or`` of one term per service. GPU series carry no ``service`` label: the
headroom column adds it with ``label_replace``. A helper query carries each service's
dashboard uid (uids hold a hash, so Grafana cannot derive them) for the data link.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grafanalib.core as g

from generator import naming
from generator.builders.common import recorded
from generator.builders.grafana_json import PanelDef, Query, RowDef, Step, datasource_variable
from generator.plan import ServicePlan
from generator.promql import Matcher, quote, regex_escape, selector

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


def _uid_query(plans: Sequence[ServicePlan]) -> str:
    return _either(
        [
            f'label_replace({_tag("vector(1)", p)}, "dashboard_uid", {quote(naming.dashboard_uid(p.name, p.namespace))}, "dashboard_uid", "")'
            for p in plans
        ]
    )


def _slo_term(plan: ServicePlan, metric: str, window: bool) -> list[str]:
    terms = []
    for s in plan.slos:
        op = f"ratio_rate{naming.window(s.window_ms)}" if window else "ratio"
        terms.append(
            recorded(
                plan, naming.record(plan.group_by, metric, op), Matcher(naming.SLO, "=", s.name)
            )
        )
    return [f"min by (service) ({' or '.join(terms)})"] if terms else []


def _p99(plan: ServicePlan) -> list[str]:
    for key in _INDICATOR_PREFERENCE:
        h = plan.histograms.get(key)
        if h is not None:
            rec = recorded(
                plan,
                naming.record(plan.group_by, naming.LATENCY, "quantile_rate5m"),
                Matcher(naming.INDICATOR, "=", h.indicator),
                Matcher(naming.QUANTILE, "=", "0.99"),
            )
            return [f"max by (service) ({rec})"]
    return []


def _error_ratio(plan: ServicePlan) -> list[str]:
    errors = recorded(plan, naming.record(plan.group_by, naming.REQUEST_ERRORS, "rate5m"))
    requests = recorded(plan, naming.record(plan.group_by, naming.REQUESTS, "rate5m"))
    return [f"sum by (service) ({errors}) / (sum by (service) ({requests}) > 0)"]


def _queue(plan: ServicePlan) -> list[str]:
    if plan.queue_depth is None:
        return []
    return [
        f"sum by (service) ({recorded(plan, naming.record(plan.group_by, naming.QUEUE_DEPTH, 'sum'))})"
    ]


def _gpu_headroom(plan: ServicePlan) -> list[str]:
    if not plan.gpu_exporter:
        return []
    free = selector(naming.GPU_MEMORY_FREE, plan.gpu_matchers)
    total = selector(naming.GPU_MEMORY_TOTAL, plan.gpu_matchers)
    ratio = f"min(max by (pod, uuid) ({free}) / (max by (pod, uuid) ({total}) > 0))"
    return [_tag(ratio, plan)]


def fleet_panel(plans: Sequence[ServicePlan]) -> PanelDef:
    """The services table; the ``service`` cell links to that service's dashboard."""
    names = "|".join(regex_escape(p.name) for p in plans)
    alerts = selector(
        naming.ALERTS_SERIES,
        (Matcher("alertstate", "=", "firing"), Matcher(naming.SERVICE, "=~", names)),
    )
    column_exprs = {
        "B": _either([t for p in plans for t in _slo_term(p, naming.SLO_SLI, True)]),
        "C": _either([t for p in plans for t in _slo_term(p, naming.SLO_BUDGET_REMAINING, False)]),
        "D": _either([t for p in plans for t in _p99(p)]),
        "E": _either([t for p in plans for t in _error_ratio(p)]),
        "F": _either([t for p in plans for t in _queue(p)]),
        "G": _either([t for p in plans for t in _gpu_headroom(p)]),
        "H": f"count by (service) ({alerts})",
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
                            "url": "/d/${__data.fields.dashboard_uid}/${__data.fields.service}?${__url_time_range}",
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
                        "indexByName": {"service": 0},
                        "renameByName": rename,
                    },
                },
            ],
        },
    )


def fleet_dashboard(plans: Sequence[ServicePlan]) -> tuple[list[RowDef], list[g.Template]]:
    """Rows and variables of the fleet overview (``plans`` non-empty)."""
    ordered = sorted(plans, key=lambda p: p.name)
    return [RowDef("Services", (fleet_panel(ordered),))], [datasource_variable()]
