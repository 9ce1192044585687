"""``runningRequests``: requests in the running batch (a gauge, a count), summed over pods.

Recorded as ``<groupBy>:model_running_requests:sum``; a healthy idle batch is empty.
"""

from __future__ import annotations

from generator import naming
from generator.signals.base import gauge_signal

KEY = "running_requests"

SIGNAL = gauge_signal(
    KEY,
    "runningRequests",
    naming.RUNNING_REQUESTS,
    "sum",
    per_pod=False,
    verified="running requests",
)
