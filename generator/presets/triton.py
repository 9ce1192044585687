"""Preset ``triton``: NVIDIA Triton Inference Server, with TensorRT-LLM backend gauges.

Sources: Triton ``docs/user_guide/metrics.md`` (triton-inference-server/server), core
``src/metric_model_reporter.h`` (triton-inference-server/core) and tensorrtllm_backend
``inflight_batcher_llm/src/custom_metrics_reporter/custom_metrics_reporter.cc``. Each series,
its units, and the two version numberings: docs/presets.md, "triton".
"""

from __future__ import annotations

from generator.presets.model import GaugeDef, HistogramDef, MeanLatencyDef, Preset, RequestsDef

# triton-inference-server/core src/metric_model_reporter.h: histogram_options_ default, the
# same on every release branch r24.11 … r26.06; branches r23.04 … r24.10 have no histogram at
# all (core commit c815a13, "Add histogram support and TTFT histogram metric", first in r24.11,
# the core of server v2.52.0 = container 24.11: build.py TRITON_VERSION_MAP at tag v2.52.0).
FIRST_RESPONSE_BUCKETS_MS = (100.0, 500.0, 2000.0, 5000.0)
FIRST_RESPONSE = HistogramDef(
    "nv_inference_first_response_histogram_ms", FIRST_RESPONSE_BUCKETS_MS, seconds_per_unit=0.001
)
NO_FIRST_RESPONSE = (
    "Triton before 24.11 (server 2.52.0) exposes no first-response histogram: "
    "nv_inference_first_response_histogram_ms came with the histogram support of core r24.11"
)

# nv_inference_request_failure{reason}: core src/metric_model_reporter.{h,cc} on r24.08 (core
# commit a07169e): REJECTED (queue full or timed out: the user gets no answer, a failure),
# CANCELED (the client cancelled: excluded), BACKEND, OTHER. Before r24.08 the counter has no
# reason label; reason!~"CANCELED" matches those series too, so every failure still counts.
CANCELED = (("reason", "CANCELED"),)

# The newest release the entries were checked against, in both numberings.
CHECKED_THROUGH = ("25.06", "2.59")


def _entry(since: str, alias: str, first_response: bool) -> Preset:
    return Preset(
        server="triton",
        since_version=since,
        since_aliases=(alias,),
        latency={"timeToFirstToken": FIRST_RESPONSE} if first_response else {},
        mean_latency={
            "requestDuration": MeanLatencyDef(
                "nv_inference_request_duration_us",
                "nv_inference_request_success",
                seconds_per_unit=0.000001,
            ),
        },
        requests=RequestsDef(
            name="nv_inference_request_success",
            failure_name="nv_inference_request_failure",
            exclude_matchers=CANCELED,
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
            **({} if first_response else {"timeToFirstToken": NO_FIRST_RESPONSE}),
        },
    )


PRESETS: list[Preset] = [
    _entry("23.04", "2.33.0", first_response=False),
    _entry("24.11", "2.52.0", first_response=True),
]
