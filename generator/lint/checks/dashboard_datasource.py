"""``dashboard-datasource``: a panel or a panel's target that names no datasource."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from generator.lint.checks.dashboards import panels
from generator.lint.model import Severity
from generator.lint.registry import DashboardHit, dashboard_check


@dashboard_check(
    "dashboard-datasource",
    Severity.WARNING,
    "dashboards",
    "a panel or target without a datasource",
)
def dashboard_datasource(dashboard: Mapping[str, Any]) -> Iterator[DashboardHit]:
    """Every panel but a row, and each of its targets, names a datasource (a dashboard that
    leaves it to Grafana's default queries whatever datasource an instance calls default)."""
    for path, panel in panels(dashboard):
        if panel.get("type") == "row":
            continue
        if not panel.get("datasource"):
            yield DashboardHit(path, "panel has no datasource")
        for k, target in enumerate(panel.get("targets", []) or []):
            if not target.get("datasource"):
                yield DashboardHit(f"{path}.targets[{k}]", "target has no datasource")


CHECK = dashboard_datasource
