"""Preset ``vllm``: vLLM 0.8 and later, V1 engine (default) and V0 engine, keyed by release.

Source: ``vllm/v1/metrics/loggers.py`` (``PrometheusStatLogger``) and the V0 engine's
``vllm/engine/metrics.py``, 0.8 to 0.13 (the release or wheel of each name: docs/presets.md,
"vllm", with the renames, preemptions, prefix cache and request counters); bounds per release:
docs/presets.md, "Bucket bounds per release". Checked against ``tests/fixtures/metrics/vllm-*.prom``
by ``tests/test_preset_fixtures.py``.
"""

from __future__ import annotations

from generator.presets.model import GaugeDef, HistogramDef, PrefixCacheDef, Preset, RequestsDef

# Bucket bounds per release: vllm/v1/metrics/loggers.py (V1) and vllm/engine/metrics.py (V0),
# read in the wheel of every release 0.8.0 … 0.11.2 on PyPI (tags v0.8.0 … v0.11.2; table:
# docs/presets.md, "Bucket bounds per release"). V1 and V0 agree in every release.
# From 0.8.4: request_latency_buckets (e2e and vllm:request_queue_time_seconds, the WAITING phase).
E2E_BUCKETS = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
    40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
)  # fmt: skip
# From 0.8.4: histogram_time_to_first_token.
TTFT_BUCKETS = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
    1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip
# From 0.8.4: histogram_time_per_output_token (and inter_token_latency's, which reuses it).
ITL_BUCKETS = (
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
    1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
)  # fmt: skip
# 0.8.0 … 0.8.3: the lists before they were extended (e2e and queue to 60 s, TTFT to 10 s, ITL
# to 2.5 s).
E2E_BUCKETS_0_8 = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
)  # fmt: skip
TTFT_BUCKETS_0_8 = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
)  # fmt: skip
ITL_BUCKETS_0_8 = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)
# (e2e and queue, TTFT, ITL) bounds of one release line.
SHORT = (E2E_BUCKETS_0_8, TTFT_BUCKETS_0_8, ITL_BUCKETS_0_8)
LONG = (E2E_BUCKETS, TTFT_BUCKETS, ITL_BUCKETS)

HTTP_REQUESTS = RequestsDef(
    name="http_requests_total",
    error_matchers=(("status", "5.."),),
    matchers=(("handler", "/v1/.*"),),
    source="vLLM's OpenAI server HTTP counter (prometheus-fastapi-instrumentator, vLLM ≥ 0.8.3, V1 engine)",
)
# Finish reasons (vllm/v1/engine/__init__.py FINISH_REASON_STRINGS / FinishReason; vLLM
# pre-creates one vllm:request_success_total child per FinishReason, so a reason's series
# exists exactly from the release that adds it):
# - v0.8.0 … v0.12.0: "stop", "length", "abort"; "abort - aborted for another reason". A
#   request that fails mid-generation is aborted and counted nowhere: V1 (read at v0.11.1)
#   AsyncLLM.generate() catches the exception, calls abort() and raises EngineGenerateError;
#   OutputProcessor.abort_requests() records no stats and Scheduler.finish_requests() emits no
#   EngineCoreOutput, so no finished_reason child increments (the same path drops a client
#   disconnect). V0 (read at v0.10.2: LLMEngine._get_stats counts scheduled groups only;
#   abort_seq_group removes the group first; an engine-loop error kills the engine) likewise.
#   So no engine counter of these releases sees a failure after the HTTP 200, and the abort
#   exclusion below hides none: there is nothing to read.
# - v0.13.0: adds "error" ("retryable request-level internal error (e.g., KV load failure).
#   Invariant: always converted to 500 Internal Server Error"), set by the scheduler when a KV
#   load fails under kv_load_failure_policy "fail"; "abort" becomes "aborted by client". Other
#   errors mid-generation still take the abort path above and stay uncounted.
# So "error" is a failure, "abort" the client's doing and excluded; "stop", "length" (and a
# later "repetition") are answers. Only entries from 0.13 read the engine as a failure source.
ENGINE_ERRORS = (("finished_reason", "error"),)
ENGINE_EXCLUDED = (("finished_reason", "abort"),)
# First release whose FinishReason has ERROR (the pip sdist of vllm 0.13.0; 0.11.1, 0.11.2 and
# 0.12.0 still end at ABORT).
ENGINE_ERROR_SINCE = "0.13"
ENGINE_REQUESTS = RequestsDef(
    name="vllm:request_success_total",
    error_matchers=ENGINE_ERRORS,
    exclude_matchers=ENGINE_EXCLUDED,
    source="the engine's finished-request counter (every release and engine; "
    'finished_reason="error" from 0.13: before it the counter counts no failure)',
)
# Streamed responses send HTTP 200 before generating: an engine error mid-stream reaches the
# HTTP counter as a 200. From 0.13 the engine's finish reasons are read beside the status (V1
# with HTTP); before 0.13 such a failure is visible nowhere (above).
ENGINE_FAILURES = RequestsDef(
    name="vllm:request_success_total",
    error_matchers=ENGINE_ERRORS,
    exclude_matchers=ENGINE_EXCLUDED,
    source='the engine\'s finish reasons (finished_reason="error", vLLM ≥ 0.13; streamed '
    "failures after the 200)",
)

KV_OLD, KV_NEW = "vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"
ITL_OLD, ITL_NEW = "vllm:time_per_output_token_seconds", "vllm:inter_token_latency_seconds"
RENAMED = {KV_OLD: KV_NEW, KV_NEW: KV_OLD, ITL_OLD: ITL_NEW, ITL_NEW: ITL_OLD}
# Prefix-cache counters (V1): the 0.8 names, then those of 0.9.2 on.
CACHE_OLD = PrefixCacheDef(
    ("vllm:gpu_prefix_cache_hits_total", "vllm:prefix_cache_hits_total"),
    ("vllm:gpu_prefix_cache_queries_total", "vllm:prefix_cache_queries_total"),
)
CACHE_NEW = PrefixCacheDef(CACHE_OLD.hits[::-1], CACHE_OLD.queries[::-1])
# Speculative decoding (V1): vllm/v1/spec_decode/metrics.py, SpecDecodingProm — counters
# vllm:spec_decode_num_draft_tokens and vllm:spec_decode_num_accepted_tokens (exposed with
# _total), labels [model_name, engine], created only with a speculative config. V0 has other
# names (vllm:spec_decode_draft_acceptance_rate gauge …): not read.
SPEC_DECODE = (
    "vllm:spec_decode_num_draft_tokens_total",
    "vllm:spec_decode_num_accepted_tokens_total",
)
# LoRA (V1): vllm/v1/metrics/loggers.py, gauge "vllm:lora_requests_info" ("Running stats on
# lora requests."), labelnames [max_lora, waiting_lora_adapters, running_lora_adapters]: the
# adapters comma-joined, the value set_to_current_time() on every logged step, created only
# with --enable-lora; read at tags v0.10.2, v0.11.1, v0.13.0 and v0.14.0. No tag up to v0.14.0
# exports an adapter load time. Entries from 0.11 read it.
LORA_INFO = "vllm:lora_requests_info"
# NIXL KV transfer (disaggregated prefill/decode, V1): NixlPromMetrics in
# vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py, histogram
# vllm:nixl_xfer_time_seconds and counter vllm:nixl_num_failed_transfers (exposed with _total),
# labelnames [model_name, engine], observed by the worker that reads the KV cache (decode:
# _pop_done_transfers, _read_blocks); at tags v0.11.1, v0.11.2, v0.12.0, v0.13.0, v0.14.0, not
# at v0.10.2. Entries from 0.11 read them (absent without NixlConnector: silent).
NIXL = ("vllm:nixl_xfer_time_seconds", "vllm:nixl_num_failed_transfers_total")

# The newest release line the entries were checked against; newer ones get a warning. 0.13:
# the metric names and bucket lists of vllm/v1/metrics/loggers.py and FinishReason in the
# 0.13.0 sdist are those of the 0.11 entry, plus finished_reason="error".
CHECKED_THROUGH = ("0.13",)
# Runtime variants (spec.serverVariant): the first is the default.
VARIANTS = {
    "v1": "V1 engine behind vLLM's OpenAI server (the default from 0.8)",
    "v0": "V0 engine (VLLM_USE_V1=0, CPU and other builds that fall back to it): no HTTP metrics",
}
# A variant that ended: (first release without it, why).
VARIANT_UNTIL = {"v0": ("0.11", "vLLM 0.11.0 removed the V0 engine")}


def _entry(
    since: str,
    variant: str,
    requests: RequestsDef,
    kv_cache: str,
    itl: str,
    cache: PrefixCacheDef | None,
    bounds: tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]],
    engine_failures: bool = False,
    pools: bool = False,
) -> Preset:
    """One release's entry; ``engine_failures``: the release has finished_reason="error" and
    reads it beside the HTTP status (V1 with HTTP metrics only); ``pools``: it reads the LoRA
    pool gauge and the NIXL transfer series (:data:`LORA_INFO`, :data:`NIXL`)."""
    e2e, ttft, itl_bounds = bounds
    return Preset(
        server="vllm",
        since_version=since,
        variant=variant,
        latency={
            "requestDuration": HistogramDef("vllm:e2e_request_latency_seconds", e2e),
            "timeToFirstToken": HistogramDef("vllm:time_to_first_token_seconds", ttft),
            "interTokenLatency": HistogramDef(itl, itl_bounds, also=(RENAMED[itl],)),
            "requestQueueTime": HistogramDef("vllm:request_queue_time_seconds", e2e),
        },
        requests=requests,
        other_requests=tuple(r for r in (HTTP_REQUESTS, ENGINE_REQUESTS) if r != requests),
        failure_sources=(ENGINE_FAILURES,) if engine_failures and requests == HTTP_REQUESTS else (),
        queue_depth=GaugeDef("vllm:num_requests_waiting"),
        running_requests=GaugeDef("vllm:num_requests_running"),
        # already a 0–1 fraction despite "perc"
        kv_cache_usage=GaugeDef(kv_cache, also=(RENAMED[kv_cache],)),
        prompt_tokens="vllm:prompt_tokens_total",
        generation_tokens="vllm:generation_tokens_total",
        preemptions="vllm:num_preemptions_total",
        prefix_cache=cache,
        model_label="model_name",
        spec_decode=SPEC_DECODE if variant == "v1" else None,
        lora_info=LORA_INFO if pools else None,
        kv_transfer=NIXL if pools else None,
    )


PRESETS: list[Preset] = [
    _entry("0.8", "v1", ENGINE_REQUESTS, KV_OLD, ITL_OLD, CACHE_OLD, SHORT),
    _entry("0.8.3", "v1", HTTP_REQUESTS, KV_OLD, ITL_OLD, CACHE_OLD, SHORT),
    _entry("0.8.4", "v1", HTTP_REQUESTS, KV_OLD, ITL_OLD, CACHE_OLD, LONG),
    _entry("0.9.2", "v1", HTTP_REQUESTS, KV_NEW, ITL_OLD, CACHE_NEW, LONG),
    _entry("0.11", "v1", HTTP_REQUESTS, KV_NEW, ITL_NEW, CACHE_NEW, LONG, pools=True),
    _entry(ENGINE_ERROR_SINCE, "v1", HTTP_REQUESTS, KV_NEW, ITL_NEW, CACHE_NEW, LONG, True, True),
    # V0 keeps vllm/engine/metrics.py's names (same buckets as V1 in each release).
    _entry("0.8", "v0", ENGINE_REQUESTS, KV_OLD, ITL_OLD, None, SHORT),
    _entry("0.8.4", "v0", ENGINE_REQUESTS, KV_OLD, ITL_OLD, None, LONG),
]
