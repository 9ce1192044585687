"""``kvCacheUsage``: the share (0–1) of KV-cache blocks in use, per pod (a gauge, or used over
total blocks where the server counts blocks: TensorRT-LLM).

Recorded as ``<groupBy>:pod:model_kv_cache_usage:max``; a healthy cache is empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator import naming
from generator.parts.series_parts import example_pod, labels_of
from generator.signals.base import Needs, Scope, Signal, gauge, gauge_guard, gauge_record

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.parts.promtool_series import Series
    from generator.plan import GaugePlan, ServicePlan

KEY = "kv_cache_usage"


def resolve(scope: Scope) -> GaugePlan | None:
    """The preset's ``kv_cache_usage`` gauge, or ``spec.metrics.kvCacheUsage``'."""
    return gauge(scope.preset.kv_cache_usage, scope.metrics.kv_cache_usage, scope.base)


def reads(g: GaugePlan) -> tuple[str, ...]:
    return g.names


def records(plan: ServicePlan) -> list[Rule]:
    """The fullest cache per pod (``max``; a per-pod gauge is one series per pod already)."""
    return gauge_record(plan, plan.kv_cache_usage, naming.KV_CACHE_USAGE, "max", True)


def healthy(plan: ServicePlan, s: Series, length: int) -> None:
    """An empty cache on the example pod (0 of 1000 blocks where it counts blocks)."""
    kv = plan.kv_cache_usage
    if kv is None:
        return
    steady = f"+0x{length}"
    s.gauge(kv.name, labels_of(plan, kv.matchers, pod=example_pod(plan)), "0" + steady)
    if kv.denominator is not None:
        s.gauge(kv.name, labels_of(plan, kv.denominator, pod=example_pod(plan)), "1000" + steady)


def guard(plan: ServicePlan, readers: tuple[str, ...]) -> list[SignalInput]:
    """The gauge (and a ratio gauge's denominator series)."""
    return gauge_guard(plan, "kvCacheUsage", plan.kv_cache_usage, readers)


SIGNAL = Signal(
    KEY,
    "kvCacheUsage",
    resolve,
    reads,
    records,
    healthy,
    needs=Needs("kvCacheUsage", KEY, "gauge"),
    guard=guard,
    verified="KV-cache usage",
)
