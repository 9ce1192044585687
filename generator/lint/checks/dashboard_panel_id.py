"""``dashboard-panel-id``: panel ids that are not unique, or a null id among numeric ones."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from generator.lint.checks.dashboards import panels
from generator.lint.model import Severity
from generator.lint.registry import DashboardHit, dashboard_check


@dashboard_check(
    "dashboard-panel-id",
    Severity.WARNING,
    "dashboards",
    "panel ids are not unique (or not all null)",
)
def dashboard_panel_id(dashboard: Mapping[str, Any]) -> Iterator[DashboardHit]:
    """Panel ids (rows' nested panels included) are unique, or null on every panel (Grafana
    assigns them on import); a second panel with an id links and repeats the first one."""
    ids = [(path, panel.get("id")) for path, panel in panels(dashboard)]
    if all(panel_id is None for _, panel_id in ids):
        return
    seen: dict[Any, str] = {}
    for path, panel_id in ids:
        if panel_id is None:
            yield DashboardHit(path, "null id mixed with numeric ids")
        elif panel_id in seen:
            yield DashboardHit(path, f"id {panel_id} already used by {seen[panel_id]}")
        else:
            seen[panel_id] = path


CHECK = dashboard_panel_id
