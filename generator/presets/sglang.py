"""Preset ``sglang``: SGLang's runtime (``--enable-metrics``), keyed by release.

Source: ``sglang/srt/metrics/collector.py`` of the sglang wheels on PyPI (tagged releases 0.3.6
… 0.5.3; ``sglang/srt/observability/metrics_collector.py`` from 0.5.10) and the ``labels`` of
``sglang/srt/managers/tokenizer_manager.py`` / ``scheduler*.py``. Names, labels, renames,
buckets and how availability is counted: docs/presets.md, "sglang".
"""

from __future__ import annotations

from generator.presets.model import GaugeDef, HistogramDef, PrefixCacheDef, Preset, RequestsDef

# Bucket bounds per release, read in each wheel on PyPI 0.4.7 … 0.5.23 (tags v0.4.7 …;
# table: docs/presets.md, "Bucket bounds per release"). TTFT and ITL: collector.py
# TokenizerMetricsCollector defaults, the same in every release 0.4.5 … 0.5.23.
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
# ``sglang:queue_time_seconds``), 0.5.2 … 0.5.11.
QUEUE_BUCKETS = (
    0.0, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
    70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0, 1000.0,
    1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0,
)  # fmt: skip
# observability/metrics_collector.py from 0.5.12 (checked through 0.5.23): 0.001, 0.005, 0.01
# and 0.05 s added below 0.1 s.
QUEUE_BUCKETS_0_5_12 = (
    0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0,
    30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0,
    800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0,
)  # fmt: skip
QUEUE_OLD, QUEUE_NEW = "sglang:queue_time_s", "sglang:queue_time_seconds"


def _entry(
    since: str,
    e2e: tuple[float, ...],
    queue: str | None = None,
    queue_bounds: tuple[float, ...] = QUEUE_BUCKETS,
) -> Preset:
    latency = {
        "requestDuration": HistogramDef("sglang:e2e_request_latency_seconds", e2e),
        "timeToFirstToken": HistogramDef("sglang:time_to_first_token_seconds", TTFT_BUCKETS),
        "interTokenLatency": HistogramDef("sglang:inter_token_latency_seconds", ITL_BUCKETS),
    }
    if queue is not None:
        other = QUEUE_NEW if queue == QUEUE_OLD else QUEUE_OLD
        latency["requestQueueTime"] = HistogramDef(queue, queue_bounds, also=(other,))
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
    _entry("0.5.12", E2E_BUCKETS_0_5_2, QUEUE_NEW, QUEUE_BUCKETS_0_5_12),
]
