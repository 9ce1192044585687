"""``kvCacheUsage``: the share (0–1) of KV-cache blocks in use, per pod (a gauge, or used over
total blocks where the server counts blocks: TensorRT-LLM).

Recorded as ``<groupBy>:pod:model_kv_cache_usage:max``; a healthy cache is empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator import naming
from generator.parts.series_parts import example_pod, labels_of
from generator.signals.base import gauge_signal

if TYPE_CHECKING:
    from generator.parts.promtool_series import Series
    from generator.plan import ServicePlan

KEY = "kv_cache_usage"


def healthy(plan: ServicePlan, s: Series, length: int) -> None:
    """An empty cache on the example pod (0 of 1000 blocks where it counts blocks)."""
    kv = plan.kv_cache_usage
    if kv is None:
        return
    steady = f"+0x{length}"
    s.gauge(kv.name, labels_of(plan, kv.matchers, pod=example_pod(plan)), "0" + steady)
    if kv.denominator is not None:
        s.gauge(kv.name, labels_of(plan, kv.denominator, pod=example_pod(plan)), "1000" + steady)


# The fullest cache per pod (``max``; a per-pod gauge is one series per pod already).
SIGNAL = gauge_signal(
    KEY,
    "kvCacheUsage",
    naming.KV_CACHE_USAGE,
    "max",
    per_pod=True,
    verified="KV-cache usage",
    healthy=healthy,
)
