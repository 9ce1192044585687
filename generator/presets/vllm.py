"""Preset ``vllm``: vLLM 0.8 and later, V1 engine (default) and V0 engine, keyed by release.

Source: ``vllm/v1/metrics/loggers.py`` (``PrometheusStatLogger``): every series carries labels
``model_name`` (the served model name) and ``engine``; the V0 engine's
``vllm/engine/metrics.py`` has the same ``vllm:`` names with ``model_name`` only (vLLM's
``docs/design/v1/metrics.md`` lists them). Histogram bucket lists below are copied
from that file as numbers (``request_latency_buckets`` for e2e, the TTFT list, the
time-per-output-token list, which the inter-token histogram reuses); checked against 0.8/0.9-era
and 0.11 copies of that file. ``tests/fixtures/metrics/vllm-*.prom`` hold expositions written
from it, and ``tests/test_preset_fixtures.py`` checks this preset against them.

Renames between releases (one preset entry per release line):

- 0.9.2: ``vllm:gpu_cache_usage_perc`` → ``vllm:kv_cache_usage_perc``. The new gauge first shipped
  in 0.9.2 (vllm PR #18354; PR #24245 says so and dates the deprecation), so 0.9.0 and 0.9.1 expose
  only the old name; the old one stays exposed through 0.10 and is hidden from 0.11 on (shown
  again only with ``--show-hidden-metrics-for-version=0.10``). We read the new one from 0.9.2 on.
- 0.11: ``vllm:time_per_output_token_seconds`` → ``vllm:inter_token_latency_seconds``.

Queue time (indicator ``queue``): ``vllm:request_queue_time_seconds``, in every entry. No entry
has a ``tpot`` histogram: the per-request ``vllm:request_time_per_output_token_seconds`` of
recent ``loggers.py`` was not checked against a tagged release, so declare it in
``spec.metrics.timePerOutputToken`` (name and buckets) where your release exposes it.

Preemptions: ``vllm:num_preemptions_total`` (requests evicted from the running batch to free KV
cache), in every entry and both engines: V1 ``loggers.py`` declares ``Counter("vllm:num_preemptions_total")``
in 0.8.0 and ``Counter("vllm:num_preemptions")`` from 0.9.2 (prometheus-client exposes both as
``…_total``), V0 ``vllm/engine/metrics.py`` ``vllm:num_preemptions_total`` (read in the 0.8.0,
0.9.2 and 0.11.0 wheels on PyPI). Created with its labels at start-up, so it is there at 0.

Prefix cache (V1 only): counters of prompt tokens looked up in the prefix cache and found there,
``vllm:gpu_prefix_cache_queries_total`` / ``…_hits_total`` in 0.8.0, renamed
``vllm:prefix_cache_queries_total`` / ``…_hits_total`` by 0.9.2 (``loggers.py`` of the 0.9.2
wheel declares both, the old ones "Deprecated in 0.9"; 0.11.0 hides the old ones behind
``--show-hidden-metrics-for-version``). Both names are read, the declared release's first. V0's
gauge ``vllm:gpu_prefix_cache_hit_rate`` (0.8.0 ``vllm/engine/metrics.py``) is gone from the
0.9.2 V0 file, so the V0 entry reads no prefix cache.

Every entry also reads the other name of each renamed series (``also``): the rules take the
declared release's name per series and the other where it is absent, so a spec that lags the
pods (``serverVersion: 0.9.1`` on 0.11 pods) still alerts; where both are exposed (the
deprecation overlap) only the declared one counts, never both.

Request counters and variants. Availability and errors are read from the OpenAI server's HTTP
counter ``http_requests_total{handler,method,status}`` (prometheus-fastapi-instrumentator,
statuses grouped as ``5xx``) wherever vLLM exposes it: it sees every request, also those that
fail before or outside the engine. Only ``/v1/...`` handlers count, so health probes and scrapes
do not dilute the ratio. It has no ``model_name`` label, so with ``groupBy: [model_name]`` the
error ratio and availability SLO stay per service while latency and saturation go per model.

The HTTP counter is not always there:

- before 0.8.3 vLLM exposes no HTTP metrics at all: they were (re)added by vllm PR #15657
  (opened 2025-03-28, after 0.8.2 was released) and PR #15894 (2025-04-01, for the V1 engine);
- the V0 engine (``VLLM_USE_V1=0``, and the CPU and other builds that fall back to it) does not
  expose them from 0.8.3 on either (vllm issue #17406, "http metrics missing when running with
  V0 engine"); V0 is gone from 0.11 (removed completely in 0.11.0).

There the engine's own counter is read: ``vllm:request_success_total{finished_reason}``, which
despite its name counts every finished request, by reason ``stop``, ``length``, ``abort`` (and,
in recent releases, ``error``: a request-level internal error, always answered with HTTP 500).
Failures are ``abort`` and ``error``: an aborted request is one the engine gave up on, and a
client hanging up is counted the same way (as Triton's ``CANCELED`` is). A request that fails
before it reaches the engine is not counted at all. It carries ``model_name``.

``spec.serverVariant`` picks the engine: ``v1`` (default) or ``v0`` (0.8 ≤ version < 0.11).
Other frontends without the HTTP counter (a custom API server in front of the engine) can name
the engine counter in ``spec.metrics.requests.name``; it gets the matchers above.
"""

from __future__ import annotations

from generator.presets.model import GaugeDef, HistogramDef, PrefixCacheDef, Preset, RequestsDef

# vllm/v1/metrics/loggers.py: request_latency_buckets (e2e, queue, prefill, decode, inference);
# vllm:request_queue_time_seconds (time in the WAITING phase) uses it in V1 and V0 alike.
E2E_BUCKETS = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
    40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
)  # fmt: skip
# vllm/v1/metrics/loggers.py: histogram_time_to_first_token.
TTFT_BUCKETS = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
    1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip
# vllm/v1/metrics/loggers.py: histogram_time_per_output_token (and inter_token_latency from 0.11).
ITL_BUCKETS = (
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
    1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
)  # fmt: skip

HTTP_REQUESTS = RequestsDef(
    name="http_requests_total",
    error_matchers=(("status", "5.."),),
    matchers=(("handler", "/v1/.*"),),
    source="vLLM's OpenAI server HTTP counter (prometheus-fastapi-instrumentator, vLLM ≥ 0.8.3, V1 engine)",
)
ENGINE_REQUESTS = RequestsDef(
    name="vllm:request_success_total",
    error_matchers=(("finished_reason", "abort|error"),),
    source="the engine's finished-request counter (every release and engine)",
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

# The newest release line the entries were checked against; newer ones get a warning.
CHECKED_THROUGH = ("0.11",)
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
) -> Preset:
    return Preset(
        server="vllm",
        since_version=since,
        variant=variant,
        latency={
            "requestDuration": HistogramDef("vllm:e2e_request_latency_seconds", E2E_BUCKETS),
            "timeToFirstToken": HistogramDef("vllm:time_to_first_token_seconds", TTFT_BUCKETS),
            "interTokenLatency": HistogramDef(itl, ITL_BUCKETS, also=(RENAMED[itl],)),
            "requestQueueTime": HistogramDef("vllm:request_queue_time_seconds", E2E_BUCKETS),
        },
        requests=requests,
        other_requests=tuple(r for r in (HTTP_REQUESTS, ENGINE_REQUESTS) if r != requests),
        queue_depth=GaugeDef("vllm:num_requests_waiting"),
        running_requests=GaugeDef("vllm:num_requests_running"),
        # already a 0–1 fraction despite "perc"
        kv_cache_usage=GaugeDef(kv_cache, also=(RENAMED[kv_cache],)),
        prompt_tokens="vllm:prompt_tokens_total",
        generation_tokens="vllm:generation_tokens_total",
        preemptions="vllm:num_preemptions_total",
        prefix_cache=cache,
        model_label="model_name",
    )


PRESETS: list[Preset] = [
    _entry("0.8", "v1", ENGINE_REQUESTS, KV_OLD, ITL_OLD, CACHE_OLD),
    _entry("0.8.3", "v1", HTTP_REQUESTS, KV_OLD, ITL_OLD, CACHE_OLD),
    _entry("0.9.2", "v1", HTTP_REQUESTS, KV_NEW, ITL_OLD, CACHE_NEW),
    _entry("0.11", "v1", HTTP_REQUESTS, KV_NEW, ITL_NEW, CACHE_NEW),
    # V0 keeps vllm/engine/metrics.py's names (same buckets as V1 in each release).
    _entry("0.8", "v0", ENGINE_REQUESTS, KV_OLD, ITL_OLD, None),
]
