"""Preset ``openai-http``: a generic OpenAI-compatible HTTP server instrumented with a
prometheus-client HTTP histogram.

Source: prometheus-client's default ``Histogram`` buckets (client_python ``metrics.py``,
``DEFAULT_BUCKETS``) extended to 120 s for LLM response times; the request counter is the
histogram's ``_count`` with an HTTP ``status`` label. No queue gauge: generic OpenAI-compatible
servers export none, so ``alerts.queueDepth`` needs ``metrics.queueDepth.name`` (the example
o1-preview spec declares its job queue's ``inference_queue_depth``).
"""

from __future__ import annotations

from generator.presets.model import HistogramDef, Preset, RequestsDef

# A generic server has no release line of its own: any serverVersion maps to the one entry.
CHECKED_THROUGH: tuple[str, ...] = ()

PRESETS: list[Preset] = [
    Preset(
        server="openai-http",
        since_version="0",
        latency={
            "requestDuration": HistogramDef(
                name="http_request_duration_seconds",
                buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
            ),
        },
        requests=RequestsDef(
            name="http_request_duration_seconds_count",
            error_matchers=(("status", "5.."),),
        ),
    )
]
