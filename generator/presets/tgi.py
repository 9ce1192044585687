"""Preset ``tgi``: Hugging Face Text Generation Inference (router metrics).

Source: ``router/src/server.rs`` (bucket setup) and ``router/src/infer/mod.rs`` /
``router/src/server.rs`` (the ``metrics::`` calls) of huggingface/text-generation-inference.
Names without suffixes, the geometric buckets and the signals TGI lacks: docs/presets.md, "tgi".
"""

from __future__ import annotations

from generator.presets.model import GaugeDef, HistogramDef, Preset, RequestsDef


def duration_buckets() -> tuple[float, ...]:
    """TGI's 35 duration bounds in seconds: 0.0001 × 1.5^k, k = 1…35, by repeated multiplication."""
    bounds = []
    value = 0.0001
    for _ in range(35):
        value *= 1.5
        bounds.append(value)
    return tuple(bounds)


# The same block ("Duration buckets", router/src/server.rs) at every tag v1.0.0 … v3.3.7: one
# list for the one entry (docs/presets.md, "Bucket bounds per release").
DURATION_BUCKETS = duration_buckets()

# The newest release line the entry was checked against (tests/fixtures/metrics/tgi-3.0.prom).
CHECKED_THROUGH = ("3.0",)

PRESETS: list[Preset] = [
    Preset(
        server="tgi",
        since_version="1.0",
        latency={
            "requestDuration": HistogramDef("tgi_request_duration", DURATION_BUCKETS),
            "interTokenLatency": HistogramDef(
                "tgi_request_mean_time_per_token_duration", DURATION_BUCKETS
            ),
        },
        requests=RequestsDef(name="tgi_request_success", failure_name="tgi_request_failure"),
        queue_depth=GaugeDef("tgi_queue_size"),
        running_requests=GaugeDef("tgi_batch_current_size"),
        kv_cache_usage=None,
        prompt_tokens="tgi_request_input_length_sum",
        generation_tokens="tgi_request_generated_tokens_sum",
        model_label=None,
        absent={
            "timeToFirstToken": "TGI exposes no time-to-first-token histogram (only queue, "
            "inference and mean per-token durations)",
            "kvCacheUsage": "TGI exposes no KV-cache usage gauge",
        },
    )
]
