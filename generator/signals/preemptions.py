"""``preemptions``: requests the engine preempted (a counter): evicted from the running batch to
free KV cache, to be recomputed later.

Recorded as ``<groupBy>:model_preemptions:rate5m``; a healthy service preempts none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator import naming
from generator.parts.common import counter_target, record_rule
from generator.parts.guard_inputs import (
    SERVICE_KEYS,
    SignalInput,
    Source,
    server_remedy,
    targets_up,
)
from generator.parts.series_parts import labels_of
from generator.promql import selector, sum_rate
from generator.signals.base import (
    RATE_WINDOW,
    RATE_WINDOW_SECONDS,
    Needs,
    Scope,
    Signal,
    counter,
)

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.promtool_series import Series
    from generator.plan import CounterPlan, ServicePlan

KEY = "preemptions"


def resolve(scope: Scope) -> CounterPlan | None:
    """The preset's ``preemptions`` counter, or ``spec.metrics.preemptions``'."""
    return counter(scope.preset.preemptions, scope.metrics.preemptions, scope.base)


def reads(c: CounterPlan) -> tuple[str, ...]:
    return (c.name,)


def preemptions_rate(plan: ServicePlan, c: CounterPlan) -> str:
    """Requests the engine preempted per second (5m rate) by ``c`` (the plan's
    ``preemptions``), summed by the service's aggregation labels; a series born late counts
    from its first value (:func:`generator.promql.born_rate`)."""
    target = counter_target(plan, c.matchers)
    series = selector(c.name, c.matchers)
    return sum_rate(series, RATE_WINDOW, plan.agg_labels, target, RATE_WINDOW_SECONDS)


def records(plan: ServicePlan) -> list[Rule]:
    """The preemption rate, none without the counter."""
    if plan.preemptions is None:
        return []
    name = naming.record(plan.group_by, naming.PREEMPTIONS, "rate5m")
    return [record_rule(plan, name, preemptions_rate(plan, plan.preemptions))]


def healthy(plan: ServicePlan, s: Series, length: int) -> None:
    """No preemption."""
    if plan.preemptions is not None:
        s.add(plan.preemptions.name, labels_of(plan, plan.preemptions.matchers), 0)


def guard(plan: ServicePlan, readers: tuple[str, ...]) -> list[SignalInput]:
    """The preemptions counter."""
    c = plan.preemptions
    if c is None:
        return []
    return [
        SignalInput(
            "preemptions",
            c.name,
            SERVICE_KEYS,
            ((Source(c.name, c.matchers),),),
            (targets_up(plan),),
            readers,
            remedy=server_remedy("preemptions"),
        )
    ]


SIGNAL = Signal(
    KEY,
    "preemptions",
    resolve,
    reads,
    records,
    healthy,
    needs=Needs("preemptions", KEY, "counter"),
    guard=guard,
)
