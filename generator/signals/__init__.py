"""The signals obsgen reads from a model server, one module each (:class:`base.Signal`), in
output order (their records follow this order in the ``traffic`` group).

Adding a signal: a module holding its ``SIGNAL``, its field in :class:`generator.plan.ServicePlan`
and :class:`generator.presets.Preset`, and one line in :data:`SIGNALS`.
"""

from __future__ import annotations

from generator.signals import (
    kv_cache_usage,
    kv_transfer,
    lora_info,
    preemptions,
    prefix_cache,
    queue_depth,
    running_requests,
    spec_decode,
    tokens,
)
from generator.signals.base import Scope, Signal

SIGNALS: tuple[Signal, ...] = (
    queue_depth.SIGNAL,
    running_requests.SIGNAL,
    kv_cache_usage.SIGNAL,
    tokens.PROMPT,
    tokens.GENERATION,
    preemptions.SIGNAL,
    prefix_cache.SIGNAL,
    spec_decode.SIGNAL,
    lora_info.SIGNAL,
    kv_transfer.SIGNAL,
)
BY_KEY: dict[str, Signal] = {s.key: s for s in SIGNALS}

__all__ = ["BY_KEY", "SIGNALS", "Scope", "Signal"]
