"""Grafana dashboards: one per service (``dashboards/<service>.json``) and the fleet overview.

Panels come from :mod:`generator.builders.dashboard_panels` (per service) and
:mod:`generator.builders.fleet`; :mod:`generator.builders.grafana_json` lays them out with
grafanalib and normalises the JSON. Builders are pure: plans in, file contents out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grafanalib.core as g

from generator import naming
from generator.builders.common import recorded
from generator.builders.dashboard_panels import service_rows
from generator.builders.fleet import fleet_dashboard
from generator.builders.grafana_json import RowDef, datasource_variable, layout, to_modern
from generator.errors import Diagnostic, ObsgenError
from generator.plan import ServicePlan
from generator.promql import Matcher, selector
from generator.yamlio import dump_json, generated_header

TAGS = ("generated", "obsgen")


def _query_variable(name: str, label: str, query: str) -> g.Template:
    # allValue ".*" keeps `label=~"$var"` true for series without the label when "All" is chosen.
    return g.Template(
        name=name,
        label=label,
        query=query,
        dataSource="${datasource}",
        multi=True,
        includeAll=True,
        allValue=".*",
        default="$__all",
        refresh=2,
        sort=1,
    )


def variables(plan: ServicePlan) -> list[g.Template]:
    """``datasource``, ``namespace``, ``model_name`` (when the preset has a model label), ``pod``.

    All but ``datasource`` are multi-value with "All" = ``.*``; panels use them with ``=~``.
    """
    requests = recorded(plan, naming.record(plan.group_by, naming.REQUESTS, "rate5m"))
    found = [
        datasource_variable(),
        _query_variable("namespace", "Namespace", f"label_values({requests}, namespace)"),
    ]
    ns = Matcher("namespace", "=~", "$namespace")
    if plan.model_label:
        series = selector(plan.requests.name, (*plan.requests.matchers, ns))
        found.append(
            _query_variable("model_name", "Model", f"label_values({series}, {plan.model_label})")
        )
    pods = selector(naming.CADVISOR_WORKING_SET, (*plan.pod_matchers, ns))
    found.append(_query_variable("pod", "Pod", f"label_values({pods}, pod)"))
    return found


def _build(
    title: str, uid: str, rows: Sequence[RowDef], templates: list[g.Template], source: str
) -> dict[str, Any]:
    panels = layout(rows)
    dashboard = g.Dashboard(
        title=title,
        uid=uid,
        tags=list(TAGS),
        panels=panels,
        templating=g.Templating(list=templates),
        time=g.Time("now-6h", "now"),
        refresh="1m",
        timezone="browser",
        graphTooltip=1,
        editable=False,
        links=[],
    )
    sources = [p for row in rows for p in row.panels]
    return to_modern(dashboard, sources, generated_header(source))


def service_dashboard(plan: ServicePlan) -> dict[str, Any]:
    """The dashboard of one service as a Grafana JSON model (schemaVersion 39)."""
    out = _build(
        f"{plan.name} — model service",
        naming.dashboard_uid(plan.name),
        service_rows(plan),
        variables(plan),
        plan.source,
    )
    out["links"] = [
        {
            "title": "Fleet overview",
            "type": "link",
            "url": f"/d/{naming.dashboard_uid(FLEET_NAME)}/{FLEET_NAME}",
            "icon": "dashboard",
            "keepTime": True,
        }
    ]
    out["tags"] = [*TAGS, plan.team, plan.server]
    return out


FLEET_NAME = "fleet-overview"


def check_dashboard_names(plans: Sequence[ServicePlan]) -> None:
    """Refuse a service named ``fleet-overview`` (its dashboard would replace the overview).

    Raises:
        ObsgenError: one diagnostic per such spec.
    """
    clash = [p for p in plans if p.name == FLEET_NAME]
    if clash:
        raise ObsgenError(
            [
                Diagnostic(
                    p.source,
                    "metadata.name",
                    f"{FLEET_NAME!r} is reserved for the fleet overview dashboard; choose another name",
                )
                for p in clash
            ]
        )


def service_dashboard_output(plan: ServicePlan) -> dict[str, str]:
    """``{dashboards/<service>.json: text}`` of one plan."""
    return {naming.dashboard_file(plan.name): dump_json(service_dashboard(plan))}


def fleet_dashboard_output(plans: Sequence[ServicePlan]) -> dict[str, str]:
    """``{dashboards/fleet-overview.json: text}`` for ``plans`` (nothing without plans)."""
    if not plans:
        return {}
    rows, templates = fleet_dashboard(plans)
    fleet = _build(
        "Model services — fleet overview",
        naming.dashboard_uid(FLEET_NAME),
        rows,
        templates,
        "specs/",
    )
    return {naming.fleet_dashboard_file(): dump_json(fleet)}


def dashboard_outputs(plans: Sequence[ServicePlan]) -> dict[str, str]:
    """``dashboards/<service>.json`` per plan and ``dashboards/fleet-overview.json``.

    Raises:
        ObsgenError: a service is named ``fleet-overview`` (its dashboard would replace the
            fleet overview).
    """
    check_dashboard_names(plans)
    outputs: dict[str, str] = {}
    for plan in sorted(plans, key=lambda p: p.name):
        outputs.update(service_dashboard_output(plan))
    outputs.update(fleet_dashboard_output(plans))
    return outputs
