"""``dashboard-unit``: a panel that does not set ``fieldConfig.defaults.unit``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from generator.lint.checks.dashboards import panels
from generator.lint.model import Severity
from generator.lint.registry import DashboardHit, dashboard_check


@dashboard_check(
    "dashboard-unit",
    Severity.WARNING,
    "dashboards",
    "a panel without fieldConfig.defaults.unit",
)
def dashboard_unit(dashboard: Mapping[str, Any]) -> Iterator[DashboardHit]:
    """Every panel but a row sets a unit: without one, seconds, bytes and ratios all read as
    bare numbers."""
    for path, panel in panels(dashboard):
        if panel.get("type") == "row":
            continue
        if not panel.get("fieldConfig", {}).get("defaults", {}).get("unit"):
            yield DashboardHit(path, "fieldConfig.defaults.unit is not set")


CHECK = dashboard_unit
