"""``dashboard-rate-interval``: a range selector in a panel query that is not
``[$__rate_interval]``."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from generator.lint.checks.dashboards import STRING, targets
from generator.lint.model import Severity
from generator.lint.registry import DashboardHit, dashboard_check

_RANGE = re.compile(r"\[([^\]\[]*)\]")
_RATE_INTERVAL = ("$__rate_interval", "${__rate_interval}")


@dashboard_check(
    "dashboard-rate-interval",
    Severity.WARNING,
    "dashboards",
    "a range that is not [$__rate_interval]",
)
def dashboard_rate_interval(dashboard: Mapping[str, Any]) -> Iterator[DashboardHit]:
    """Every range selector of every target is ``[$__rate_interval]``: a fixed range breaks
    at a scrape interval it was not written for. Brackets inside string literals (label
    regexes such as ``"model-[a-z]+"``) are not ranges."""
    for path, target in targets(dashboard):
        expr = STRING.sub('""', str(target.get("expr", "")))
        for match in _RANGE.finditer(expr):
            if match.group(1).strip() not in _RATE_INTERVAL:
                yield DashboardHit(path, f"range [{match.group(1)}] should be [$__rate_interval]")


CHECK = dashboard_rate_interval
