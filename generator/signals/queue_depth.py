"""``queueDepth``: requests waiting for a batch slot (a gauge, a count), summed over pods.

Recorded as ``<groupBy>:model_queue_depth:sum``; a healthy service's queue is empty.
"""

from __future__ import annotations

from generator import naming
from generator.signals.base import gauge_signal

KEY = "queue_depth"

SIGNAL = gauge_signal(
    KEY, "queueDepth", naming.QUEUE_DEPTH, "sum", per_pod=False, verified="queue depth"
)
