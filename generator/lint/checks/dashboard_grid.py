"""``dashboard-grid``: a top-level panel without a ``gridPos``, outside the grid, or overlapping."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from generator.lint.checks.dashboards import panel_path
from generator.lint.model import Severity
from generator.lint.registry import DashboardHit, dashboard_check

_COLUMNS = 24  # Grafana's grid is 24 columns wide


@dashboard_check(
    "dashboard-grid",
    Severity.WARNING,
    "dashboards",
    "panels overlap or leave the 24-column grid",
)
def dashboard_grid(dashboard: Mapping[str, Any]) -> Iterator[DashboardHit]:
    """Every top-level panel has a ``gridPos {x, y, w, h}`` (grid units) inside the 24 columns,
    and no two rectangles overlap (Grafana pushes overlapping panels around on load)."""
    boxes: list[tuple[str, int, int, int, int]] = []
    for i, panel in enumerate(dashboard.get("panels", [])):
        path = panel_path(i, panel)
        pos = panel.get("gridPos")
        if not isinstance(pos, dict) or not all(k in pos for k in ("x", "y", "w", "h")):
            yield DashboardHit(path, "no gridPos {x, y, w, h}")
            continue
        x, y, w, h = (int(pos[k]) for k in ("x", "y", "w", "h"))
        if x < 0 or w <= 0 or h <= 0 or x + w > _COLUMNS:
            yield DashboardHit(path, f"gridPos {pos} is outside the 24-column grid")
        for other, ox, oy, ow, oh in boxes:
            if x < ox + ow and ox < x + w and y < oy + oh and oy < y + h:
                yield DashboardHit(path, f"gridPos overlaps {other}")
        boxes.append((path, x, y, w, h))


CHECK = dashboard_grid
