"""``dashboard-unused-variable``: a templating variable nothing refers to."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from generator.lint.checks.dashboards import variable_names
from generator.lint.model import Severity
from generator.lint.registry import DashboardHit, dashboard_check


@dashboard_check(
    "dashboard-unused-variable",
    Severity.WARNING,
    "dashboards",
    "a templating variable nothing uses",
)
def dashboard_unused_variable(dashboard: Mapping[str, Any]) -> Iterator[DashboardHit]:
    """Every templating variable is referenced by a panel, a target, a link or another
    variable: an unused one is a selector on the dashboard that changes nothing."""
    variables = dashboard.get("templating", {}).get("list", [])
    rest = variable_names(json.dumps({k: v for k, v in dashboard.items() if k != "templating"}))
    for i, var in enumerate(variables):
        others = json.dumps([v for j, v in enumerate(variables) if j != i])
        if var.get("name") not in rest | variable_names(others):
            yield DashboardHit(f"templating.list[{i}]", f"${var.get('name')} is never used")


CHECK = dashboard_unused_variable
