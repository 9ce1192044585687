"""What ``obsgen verify`` reports: :class:`Status`, :class:`Row` and the report each check of
:mod:`generator.verify` adds its rows to (here so that checks in other modules share them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from generator.plan import ServicePlan
from generator.prometheus_api import PrometheusAPI
from generator.promql import Matcher, selector


class Status(StrEnum):
    """Outcome of one check; ``missing`` and ``wrong`` make ``obsgen verify`` exit 1."""

    OK = "ok"
    WARNING = "warning"
    MISSING = "missing"
    WRONG = "wrong"

    @property
    def failed(self) -> bool:
        """Whether this outcome fails the verification."""
        return self in (Status.MISSING, Status.WRONG)


@dataclass(frozen=True)
class Row:
    """One line of the report: which check, on what (a selector or name), outcome, details."""

    service: str
    check: str
    subject: str
    status: Status
    detail: str


class _Report:
    def __init__(self, plan: ServicePlan, api: PrometheusAPI) -> None:
        self.plan = plan
        self.api = api
        self.rows: list[Row] = []
        self.pods_attributed = False  # set by _pods; _kubernetes reads it

    def add(self, check: str, subject: str, status: Status, detail: str) -> None:
        self.rows.append(Row(self.plan.name, check, subject, status, detail))

    def series(
        self, check: str, metric: str, matchers: Sequence[Matcher], missing: Status, why: str
    ) -> bool:
        return self.exists(check, selector(metric, matchers), missing, why)

    def count(self, expr: str) -> int:
        """Number of series ``expr`` returns now."""
        found = self.api.query(f"count({expr})")
        return int(float(found[0]["value"][1])) if found else 0

    def exists(
        self, check: str, expr: str, missing: Status, why: str, subject: str | None = None
    ) -> bool:
        count = self.count(expr)
        if count:
            self.add(check, subject or expr, Status.OK, f"{count} series")
        else:
            self.add(check, subject or expr, missing, f"no series; {why}")
        return bool(count)
