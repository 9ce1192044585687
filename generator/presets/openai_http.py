"""Preset ``openai-http``: a generic OpenAI-compatible HTTP server (FastAPI) instrumented
with prometheus-fastapi-instrumentator's defaults.

Source: prometheus-fastapi-instrumentator 8.1.0 (PyPI), ``prometheus_fastapi_instrumentator/
metrics.py`` ``default()``; buckets: client_python ``metrics.py`` ``DEFAULT_BUCKETS``, extended.
What is read and why: docs/presets.md, "openai-http".
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
            name="http_requests_total",
            error_matchers=(("status", "5.."),),
            source="prometheus-fastapi-instrumentator's request counter, by status",
        ),
    )
]
