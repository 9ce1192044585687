"""Resolution's defaults: each alert's ``for``, severity and parameters, and the constants the
resolution steps share (budget levels, windows, the spec-to-plan parameter names).
"""

from __future__ import annotations

from typing import Any

from generator.families import FAMILIES
from generator.families.kinds import KINDS

# Alert defaults: (for, severity, params). Thresholds are sensible starting points for an
# LLM service; the spec overrides each. Durations in ms, ratios 0–1. The families of
# generator/families/ hold their own, and so does the input guard (families/kinds.py).
ALERT_DEFAULTS: dict[str, tuple[int, str, dict[str, Any]]] = {
    **{f.key: f.defaults for f in FAMILIES},
    **{k.key: k.defaults for k in KINDS if k.key is not None},
}
# Shares of an SLO's error budget left at which ErrorBudgetLow tickets (spec.slos[].alerting).
BUDGET_LEVELS = (0.5, 0.25)
# spec.metrics keys that are not latency histograms (no buckets, unit or histogram type).
_NOT_HISTOGRAMS = (
    "requests",
    "failures",
    "queueDepth",
    "runningRequests",
    "kvCacheUsage",
    "promptTokens",
    "generationTokens",
    "preemptions",
)
_GPU_ALERTS = {f.key for f in FAMILIES if f.sidecar}
# The default window of a windowed family (Family.windowed) as a multiple of `for`: a full
# outage fires after `for`, as a plain `for` would.
WINDOW_FACTOR = 3
# A series must be gone for this many scrape intervals before a guard may call it absent.
SIGNAL_MISSING_MIN_SCRAPES = 4
# spec.scaleToZero.startupGrace: a large model's pod is scheduled, pulls its image and loads
# its weights in minutes; none missing pages before this after the desired count leaves 0.
DEFAULT_STARTUP_GRACE_MS = 600_000
_SPEC_PARAM = {
    "threshold": "threshold_seconds",
    "max_ratio": "max_ratio",
    "indicator": "indicator",
    "min_events": "min_events",
    "max": "max",
    "min_free": "min_free",
    "horizon": "horizon_ms",
    "lookback": "lookback_ms",
    "window": "window_ms",
    "min_restarts": "min_restarts",
    "min": "min",
    "ignore": "ignore",
    "max_drop": "max_drop",
    "max_increase": "max_increase",
    "baseline": "baseline_ms",  # "1d" | "7d", turned into ms below
    "min_tokens_per_second": "min_tokens_per_second",
    "measure": "measure",
    "max_loras": "max_loras",
}
