"""``runningRequests``: requests in the running batch (a gauge, a count), summed over pods.

Recorded as ``<groupBy>:model_running_requests:sum``; a healthy idle batch is empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator import naming
from generator.parts.series_parts import labels_of
from generator.signals.base import Needs, Scope, Signal, gauge, gauge_guard, gauge_record

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.parts.promtool_series import Series
    from generator.plan import GaugePlan, ServicePlan

KEY = "running_requests"


def resolve(scope: Scope) -> GaugePlan | None:
    """The preset's ``running_requests`` gauge, or ``spec.metrics.runningRequests``'."""
    return gauge(scope.preset.running_requests, scope.metrics.running_requests, scope.base)


def reads(g: GaugePlan) -> tuple[str, ...]:
    return g.names


def records(plan: ServicePlan) -> list[Rule]:
    """Running requests summed over the service's pods."""
    return gauge_record(plan, plan.running_requests, naming.RUNNING_REQUESTS, "sum", False)


def healthy(plan: ServicePlan, s: Series, length: int) -> None:
    """Nothing running (the traffic of the test cases is counted, not batched)."""
    g = plan.running_requests
    if g is not None:
        s.gauge(g.name, labels_of(plan, g.matchers), f"0+0x{length}")


def guard(plan: ServicePlan, readers: tuple[str, ...]) -> list[SignalInput]:
    """The gauge."""
    return gauge_guard(plan, "runningRequests", plan.running_requests, readers)


SIGNAL = Signal(
    KEY,
    "runningRequests",
    resolve,
    reads,
    records,
    healthy,
    needs=Needs("runningRequests", KEY, "gauge"),
    guard=guard,
    verified="running requests",
)
