"""Preset ``trtllm``: TensorRT-LLM's OpenAI server ``trtllm-serve`` (PyTorch backend).

Source: ``tensorrt_llm/metrics/collector.py`` (``MetricsCollector``) of NVIDIA/TensorRT-LLM, and
``tensorrt_llm/executor/result.py`` for the finish reasons; Dynamo's TensorRT-LLM page dates the
unprefixed names. The three spellings, labels and failures: docs/presets.md, "trtllm".
"""

from __future__ import annotations

from generator.presets.model import GaugeDef, HistogramDef, Preset, RequestsDef
from generator.presets.vllm import E2E_BUCKETS, ITL_BUCKETS, TTFT_BUCKETS

# Bounds: vLLM's lists from 0.8.4 on, in every stored version of tensorrt_llm/metrics/
# collector.py (unprefixed and trtllm_ names); not read at the 1.1 and 1.2 tags themselves
# (docs/presets.md, "Bucket bounds per release").
# tensorrt_llm/executor/result.py finish reasons: stop, length, timeout, cancelled. "cancelled"
# is a request cancelled through the API (the client's abort): excluded; "timeout"
# is the server giving up: a failure.
ERRORS = (("finished_reason", "timeout"),)
EXCLUDED = (("finished_reason", "cancelled"),)
PREFIXES = ("", "trtllm_", "trtllm:")

# The newest release line the entries were checked against; newer ones get a warning.
CHECKED_THROUGH = ("1.2",)


def _requests(prefix: str) -> RequestsDef:
    return RequestsDef(
        name=f"{prefix}request_success_total",
        error_matchers=ERRORS,
        exclude_matchers=EXCLUDED,
        source="trtllm-serve's finished-request counter, by finished_reason",
    )


def _histogram(prefix: str, base: str, buckets: tuple[float, ...]) -> HistogramDef:
    others = tuple(f"{p}{base}" for p in PREFIXES if p != prefix)
    return HistogramDef(f"{prefix}{base}", buckets, also=others)


def _entry(since: str, prefix: str, gauges: bool) -> Preset:
    return Preset(
        server="trtllm",
        since_version=since,
        latency={
            "requestDuration": _histogram(prefix, "e2e_request_latency_seconds", E2E_BUCKETS),
            "timeToFirstToken": _histogram(prefix, "time_to_first_token_seconds", TTFT_BUCKETS),
            "timePerOutputToken": _histogram(prefix, "time_per_output_token_seconds", ITL_BUCKETS),
            "requestQueueTime": _histogram(prefix, "request_queue_time_seconds", E2E_BUCKETS),
        },
        requests=_requests(prefix),
        other_requests=tuple(_requests(p) for p in PREFIXES if p != prefix),
        queue_depth=GaugeDef(f"{prefix}num_requests_waiting") if gauges else None,
        running_requests=GaugeDef(f"{prefix}num_requests_running") if gauges else None,
        kv_cache_usage=GaugeDef(f"{prefix}kv_cache_utilization") if gauges else None,
        model_label="model_name",
        absent={
            "interTokenLatency": "trtllm-serve exposes no inter-token latency histogram; its "
            "time_per_output_token_seconds is per request: use timePerOutputToken (tpot)",
            **(
                {}
                if gauges
                else {
                    "queueDepth": "TensorRT-LLM 1.1 exposes no queue gauge",
                    "kvCacheUsage": "TensorRT-LLM 1.1 exposes no KV-cache gauge",
                }
            ),
        },
    )


PRESETS: list[Preset] = [
    _entry("1.1", "", gauges=False),
    _entry("1.2", "trtllm_", gauges=True),
]
