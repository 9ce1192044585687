"""Preset ``triton``: NVIDIA Triton Inference Server, with TensorRT-LLM backend gauges.

Sources: Triton ``docs/user_guide/metrics.md`` (triton-inference-server/server), core
``src/metric_model_reporter.h`` (triton-inference-server/core) and tensorrtllm_backend
``inflight_batcher_llm/src/custom_metrics_reporter/custom_metrics_reporter.cc``. Each series,
its units, and the two version numberings: docs/presets.md, "triton".
"""

from __future__ import annotations

from generator.presets.model import GaugeDef, HistogramDef, MeanLatencyDef, Preset, RequestsDef

# triton-inference-server/core src/metric_model_reporter.h: histogram_options_ default.
FIRST_RESPONSE_BUCKETS_MS = (100.0, 500.0, 2000.0, 5000.0)

# The newest release the entry was checked against, in both numberings.
CHECKED_THROUGH = ("25.06", "2.59")

PRESETS: list[Preset] = [
    Preset(
        server="triton",
        since_version="23.04",
        since_aliases=("2.33.0",),
        latency={
            "timeToFirstToken": HistogramDef(
                "nv_inference_first_response_histogram_ms",
                FIRST_RESPONSE_BUCKETS_MS,
                seconds_per_unit=0.001,
            ),
        },
        mean_latency={
            "requestDuration": MeanLatencyDef(
                "nv_inference_request_duration_us",
                "nv_inference_request_success",
                seconds_per_unit=0.000001,
            ),
        },
        requests=RequestsDef(
            name="nv_inference_request_success", failure_name="nv_inference_request_failure"
        ),
        queue_depth=GaugeDef("nv_inference_pending_request_count"),
        running_requests=GaugeDef(
            "nv_trt_llm_request_metrics", matchers=(("request_type", "active"),)
        ),
        kv_cache_usage=GaugeDef(
            "nv_trt_llm_kv_cache_block_metrics",
            matchers=(("kv_cache_block_type", "used"),),
            denominator=(("kv_cache_block_type", "max"),),
        ),
        model_label="model",
        absent={
            "requestDuration": "Triton's nv_inference_request_duration_us is a microsecond "
            "counter (mean latency only), not a histogram",
            "interTokenLatency": "Triton exposes no inter-token latency histogram",
        },
    )
]
