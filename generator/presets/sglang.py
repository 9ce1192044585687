"""Preset ``sglang``: SGLang's runtime (``--enable-metrics``), keyed by release.

Source: ``sglang/srt/metrics/collector.py`` of the sglang wheels on PyPI (the tagged releases
0.3.6 … 0.5.3; ``sglang/srt/observability/metrics_collector.py`` from 0.5.2x), and the
``labels`` dicts of ``sglang/srt/managers/tokenizer_manager.py`` / ``scheduler*.py``. Every
series carries ``model_name`` (the served model name); the scheduler's gauges add
``engine_type``, ``tp_rank``, ``pp_rank`` (and ``dp_rank``), recent request counters and
histograms ``is_streaming``. Every released name has the ``sglang:`` prefix and ``model_name``:
the ``sglang_`` prefix and a ``name`` label never shipped in a release (0.3.5 and older have no
metrics at all). ``tests/fixtures/metrics/sglang-*.prom`` hold expositions written from it.

Availability. SGLang has no HTTP status counter. ``sglang:num_requests_total`` (from 0.4.2)
counts requests that finished; ``sglang:num_aborted_requests_total`` (from 0.4.7: a
``Counter`` named ``sglang:num_aborted_requests``, which prometheus-client exposes with
``_total``, renamed in source to the exposed name in 0.5.3) counts aborts — a client that hung
up or a request the server gave up on. Failures are the aborts, and the total is the sum
of both counters (an abort after the first token is counted in both, which reads the ratio
low by at most a factor 1/(1 + ratio)). Releases before 0.4.7 expose no failure counter, so
no entry covers them: an availability SLO there would have nothing to count.

Renames and buckets: the inter-token histogram is ``sglang:inter_token_latency_seconds``
from 0.4.4 (``time_per_output_token_seconds`` beside it until 0.4.5); its bounds and TTFT's are
the same 0.4.5 … 0.5.23; the e2e bounds grew past 800 s in 0.5.2 (to 2400 s). The prefix cache's hit
rate is the 0–1 gauge ``sglang:cache_hit_rate`` (every checked release). The KV pool's
usage is ``sglang:token_usage`` (used / total KV tokens, a 0–1 ratio). Bucket lists below are
the defaults; ``--bucket-*`` server flags replace them (declare those in ``spec.metrics``).
Queue time (indicator ``queue``): ``sglang:queue_time_s`` in 0.5.2, ``sglang:queue_time_seconds``
from 0.5.3 (both read). No ``tpot`` histogram is read (``request_time_per_output_token_seconds``
appears only in late 0.5 releases, unchecked).
"""

from __future__ import annotations

from generator.presets.model import GaugeDef, HistogramDef, PrefixCacheDef, Preset, RequestsDef

# collector.py TokenizerMetricsCollector defaults (0.4.5 and later).
TTFT_BUCKETS = (
    0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
    200.0, 400.0,
)  # fmt: skip
ITL_BUCKETS = (
    0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
    0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0,
)  # fmt: skip
# e2e: 0.4.5 … 0.5.1 stop at 800 s; 0.5.2 and later go on to 2400 s.
E2E_BUCKETS_0_4 = (
    0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
    200.0, 400.0, 800.0,
)  # fmt: skip
E2E_BUCKETS_0_5_2 = (*E2E_BUCKETS_0_4[:-1], 600.0, 1200.0, 1800.0, 2400.0)

REQUESTS = RequestsDef(
    name="sglang:num_requests_total",
    failure_name="sglang:num_aborted_requests_total",
    source="SGLang's finished-request and aborted-request counters (no HTTP status counter)",
)

# The newest release line the entries were checked against; newer ones get a warning.
CHECKED_THROUGH = ("0.5",)


# collector.py SchedulerMetricsCollector queue_time (0.5.2 ``sglang:queue_time_s``, 0.5.3 on
# ``sglang:queue_time_seconds``); later 0.5 releases add 0.001 … 0.05 s bounds below 0.1 s.
QUEUE_BUCKETS = (
    0.0, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
    70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0, 1000.0,
    1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0,
)  # fmt: skip
QUEUE_OLD, QUEUE_NEW = "sglang:queue_time_s", "sglang:queue_time_seconds"


def _entry(since: str, e2e: tuple[float, ...], queue: str | None = None) -> Preset:
    latency = {
        "requestDuration": HistogramDef("sglang:e2e_request_latency_seconds", e2e),
        "timeToFirstToken": HistogramDef("sglang:time_to_first_token_seconds", TTFT_BUCKETS),
        "interTokenLatency": HistogramDef("sglang:inter_token_latency_seconds", ITL_BUCKETS),
    }
    if queue is not None:
        other = QUEUE_NEW if queue == QUEUE_OLD else QUEUE_OLD
        latency["requestQueueTime"] = HistogramDef(queue, QUEUE_BUCKETS, also=(other,))
    return Preset(
        server="sglang",
        since_version=since,
        latency=latency,
        requests=REQUESTS,
        queue_depth=GaugeDef("sglang:num_queue_reqs"),
        running_requests=GaugeDef("sglang:num_running_reqs"),
        kv_cache_usage=GaugeDef("sglang:token_usage"),
        # collector.py SchedulerMetricsCollector (0.3.6 … 0.5.3): "The prefix cache hit rate."
        prefix_cache=PrefixCacheDef(gauge=GaugeDef("sglang:cache_hit_rate")),
        prompt_tokens="sglang:prompt_tokens_total",
        generation_tokens="sglang:generation_tokens_total",
        model_label="model_name",
    )


PRESETS: list[Preset] = [
    _entry("0.4.7", E2E_BUCKETS_0_4),
    _entry("0.5.2", E2E_BUCKETS_0_5_2, QUEUE_OLD),
    _entry("0.5.3", E2E_BUCKETS_0_5_2, QUEUE_NEW),
]
