"""Preset ``triton``: NVIDIA Triton Inference Server, with TensorRT-LLM backend gauges.

Sources: Triton ``docs/user_guide/metrics.md`` (triton-inference-server/server) for the core
per-model metrics, labelled ``model`` and ``version``; tensorrtllm_backend
``inflight_batcher_llm/src/custom_metrics_reporter/custom_metrics_reporter.cc`` and its
``README`` for the ``nv_trt_llm_*`` gauges.

- Requests: ``nv_inference_request_success`` and ``nv_inference_request_failure`` (the latter
  with a ``reason`` label in recent releases: ``REJECTED``, ``CANCELED``, ``BACKEND``, ``OTHER``,
  per core ``MetricModelReporter::failure_reasons_map``); total = their sum. Every reason counts
  as an error, client cancellations included.
- End-to-end latency: ``nv_inference_request_duration_us`` is a *counter* of microseconds, not a
  histogram. Divided by ``nv_inference_request_success`` it gives the mean request time, which
  obsgen records (``…:model_latency_seconds:mean_rate5m``) but cannot turn into a percentile:
  a ``requestDuration`` SLO or ``latencyP99`` on Triton is an error.
- Time to first response: ``nv_inference_first_response_histogram_ms`` exists only with
  ``--metrics-config histogram_latencies=true`` and only for *decoupled* models (core
  ``MetricModelReporter::InitializeHistograms``); its bounds are milliseconds
  (``seconds_per_unit`` 0.001), so a ``200ms`` threshold selects ``le="200"`` — if that bucket
  exists. Default bounds 100, 500, 2000, 5000 ms: confirmed in triton-inference-server/core
  ``src/metric_model_reporter.h`` (``MetricReporterConfig::histogram_options_`` =
  ``{{kFirstResponseHistogram, {100, 500, 2000, 5000}}}``). A model's ``model_metrics``
  (``metric_control`` / ``histogram_options.buckets``) in ``config.pbtxt`` may change them: then
  declare them (in seconds) in ``spec.metrics.timeToFirstToken.buckets``. prometheus-cpp writes
  them ``le="100"`` (no ``.0``). For a streaming LLM backend it is the time to the first response
  chunk.
- Queue: ``nv_inference_pending_request_count`` (core, every backend).
- Running: TensorRT-LLM ``nv_trt_llm_request_metrics{request_type="active"}``.
- KV cache: TensorRT-LLM ``nv_trt_llm_kv_cache_block_metrics``: ``used`` / ``max`` blocks (ratio
  0–1; both types exist in every backend release, ``fraction`` only in recent ones). Without
  the TensorRT-LLM backend these series do not exist and ``ModelKVCacheNearFull`` never fires.

Versions. Triton has two numberings: the server release (``2.33.0``) and the monthly NGC
container (``23.04``); ``spec.serverVersion`` takes either, and each entry carries both, as
NVIDIA pairs them: 23.04 = 2.33.0 (triton-inference-server/server PR #5470, "Update 'main' to
track development of 2.33.0 / r23.04"), 25.06 = 2.59.0 (GitHub release v2.59.0, "Release
2.59.0 corresponding to NGC container 25.06"). No formula maps one to the other (no main 25.07
release exists), so none is applied: a version is compared only with entries of its own kind.
The metric names above were checked against the user guide's metrics page of the 25.06 era.
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
