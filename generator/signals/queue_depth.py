"""``queueDepth``: requests waiting for a batch slot (a gauge, a count), summed over pods.

Recorded as ``<groupBy>:model_queue_depth:sum``; a healthy service's queue is empty.
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

KEY = "queue_depth"


def resolve(scope: Scope) -> GaugePlan | None:
    """The preset's ``queue_depth`` gauge, or ``spec.metrics.queueDepth``'s."""
    return gauge(scope.preset.queue_depth, scope.metrics.queue_depth, scope.base)


def reads(g: GaugePlan) -> tuple[str, ...]:
    return g.names


def records(plan: ServicePlan) -> list[Rule]:
    """Waiting requests summed over the service's pods."""
    return gauge_record(plan, plan.queue_depth, naming.QUEUE_DEPTH, "sum", False)


def healthy(plan: ServicePlan, s: Series, length: int) -> None:
    """Nothing waiting."""
    g = plan.queue_depth
    if g is not None:
        s.gauge(g.name, labels_of(plan, g.matchers), f"0+0x{length}")


def guard(plan: ServicePlan, readers: tuple[str, ...]) -> list[SignalInput]:
    """The gauge."""
    return gauge_guard(plan, "queueDepth", plan.queue_depth, readers)


SIGNAL = Signal(
    KEY,
    "queueDepth",
    resolve,
    reads,
    records,
    healthy,
    needs=Needs("queueDepth", KEY, "gauge"),
    guard=guard,
    verified="queue depth",
)
