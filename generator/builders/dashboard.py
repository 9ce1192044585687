"""Grafana dashboards: one per service (``dashboards/<service>.json``) and the fleet overview.

Panels come from :mod:`generator.builders.dashboard_panels` (per service) and
:mod:`generator.builders.fleet`; :mod:`generator.parts.grafana_json` lays them out with
grafanalib and normalises the JSON. Builders are pure: plans in, file contents out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grafanalib.core as g

from generator import dedup, naming
from generator.builders.dashboard_panels import service_rows
from generator.builders.fleet import fleet_cluster_label, fleet_dashboard
from generator.errors import Diagnostic, ObsgenError
from generator.parts.common import recorded
from generator.parts.grafana_json import (
    RowDef,
    cluster_variable,
    datasource_variable,
    layout,
    query_variable,
    to_modern,
)
from generator.parts.pods import OWNER_RECORD
from generator.plan import ServicePlan
from generator.promql import Matcher, selector
from generator.yamlio import dump_dashboard_json, generated_header

TAGS = ("generated", "obsgen")


def variables(plan: ServicePlan) -> list[g.Template]:
    """``datasource``, ``cluster`` (when the spec names a cluster label), ``namespace``,
    ``model_name`` (when the preset has a model label), ``pod``; each variable's values are
    those of the clusters (and namespaces) chosen before it.

    All but ``datasource`` are multi-value with "All" = ``.*``; panels use them with ``=~``.
    """
    requests = naming.record(plan.group_by, naming.REQUESTS, "rate5m")
    found = [datasource_variable()]
    cluster: tuple[Matcher, ...] = ()
    if plan.cluster_label:
        found.append(cluster_variable(plan.cluster_label, recorded(plan, requests)))
        cluster = (Matcher(plan.cluster_label, "=~", "$cluster"),)
    found.append(
        query_variable(
            "namespace",
            "Namespace",
            f"label_values({recorded(plan, requests, *cluster)}, namespace)",
        )
    )
    ns = Matcher("namespace", "=~", "$namespace")
    if plan.model_label:
        series = selector(plan.requests.name, (*plan.requests.matchers, ns, *cluster))
        found.append(
            query_variable("model_name", "Model", f"label_values({series}, {plan.model_label})")
        )
    pods = recorded(plan, OWNER_RECORD, ns, *cluster)
    found.append(query_variable("pod", "Pod", f"label_values({pods}, pod)"))
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
    return to_modern(dashboard, rows, generated_header(source))


FLEET_NAME = "fleet-overview"
# Tag of every fleet overview; a service dashboard links to them by tag, not by uid, so it does
# not depend on which fleet (repository) it belongs to and renders alone from its own spec.
FLEET_TAG = "obsgen-fleet"


def service_title(plan: ServicePlan) -> str:
    """``<service> (<namespace>) — model service``: Grafana refuses two dashboards of one title
    in one folder, and two teams may both name a service ``chat``."""
    where = f" ({plan.namespace})" if plan.namespace else ""
    return f"{plan.name}{where} — model service"


def fleet_title(fleet: str) -> str:
    """Title of the fleet overview named ``fleet`` (see :func:`generator.naming.fleet_name`)."""
    return f"Model services — fleet overview ({fleet})"


def _fleet_link() -> dict[str, Any]:
    return {
        "asDropdown": False,
        "icon": "dashboard",
        "includeVars": False,
        "keepTime": True,
        "tags": [FLEET_TAG],
        "targetBlank": False,
        "title": "Fleet overview",
        "tooltip": "",
        "type": "dashboards",
    }


def service_dashboard(plan: ServicePlan) -> dict[str, Any]:
    """The dashboard of one service as a Grafana JSON model (schemaVersion 39), uid
    :func:`generator.naming.dashboard_uid` (unique per cluster label and namespace)."""
    out = _build(
        service_title(plan),
        naming.dashboard_uid(plan.name, plan.namespace, plan.cluster_label),
        service_rows(plan),
        variables(plan),
        plan.source,
    )
    out["links"] = [_fleet_link()]
    out["tags"] = [*TAGS, plan.team, plan.server]
    return _collapsed(out, plan.copy_labels, plan.replica_labels)


def _collapsed(
    dashboard: dict[str, Any], copy_labels: Sequence[str], replica_labels: Sequence[str]
) -> dict[str, Any]:
    """``dashboard`` with every panel query collapsed over the copy labels
    (``ruler.deduplication: rules``, :func:`generator.dedup.collapse_panel`): Grafana reads
    the same copies the ruler does. Unchanged (the same object) without copy labels."""
    if not copy_labels:
        return dashboard
    stack = list(dashboard.get("panels", []))
    while stack:
        panel = stack.pop()
        stack.extend(panel.get("panels", []))
        for target in panel.get("targets", []):
            if target.get("expr"):
                target["expr"] = dedup.collapse_panel(target["expr"], copy_labels, replica_labels)
    return dashboard


def fleet_overview(plans: Sequence[ServicePlan], fleet_name: str | None = None) -> dict[str, Any]:
    """The fleet overview of ``plans`` (non-empty): uid and title from
    :func:`generator.naming.fleet_name` (``render.fleetName`` or the services' namespaces)."""
    fleet = naming.fleet_name(fleet_name, (p.namespace for p in plans))
    rows, templates = fleet_dashboard(plans)
    out = _build(
        fleet_title(fleet),
        naming.fleet_dashboard_uid(fleet, fleet_cluster_label(plans)),
        rows,
        templates,
        "specs/",
    )
    out["tags"] = [*TAGS, FLEET_TAG]
    ruled = next((p for p in plans if p.copy_labels), None)  # obsgen.yaml's: one for all
    return out if ruled is None else _collapsed(out, ruled.copy_labels, ruled.replica_labels)


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
    return {naming.dashboard_file(plan.stem): dump_dashboard_json(service_dashboard(plan))}


def fleet_dashboard_output(
    plans: Sequence[ServicePlan], fleet_name: str | None = None
) -> dict[str, str]:
    """``{dashboards/fleet-overview.json: text}`` for ``plans`` (nothing without plans);
    ``fleet_name`` is ``render.fleetName`` of obsgen.yaml (None: derived from namespaces)."""
    if not plans:
        return {}
    return {naming.fleet_dashboard_file(): dump_dashboard_json(fleet_overview(plans, fleet_name))}


def dashboard_outputs(
    plans: Sequence[ServicePlan], fleet_name: str | None = None
) -> dict[str, str]:
    """``dashboards/<service>.json`` per plan and ``dashboards/fleet-overview.json``.

    ``fleet_name`` is ``render.fleetName`` of obsgen.yaml (None: derived from namespaces).

    Raises:
        ObsgenError: a service is named ``fleet-overview`` (its dashboard would replace the
            fleet overview).
    """
    check_dashboard_names(plans)
    outputs: dict[str, str] = {}
    for plan in sorted(plans, key=lambda p: p.name):
        outputs.update(service_dashboard_output(plan))
    outputs.update(fleet_dashboard_output(plans, fleet_name))
    return outputs
