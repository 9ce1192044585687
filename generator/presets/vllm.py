"""Preset ``vllm``: vLLM's V1 engine (0.8 and later), keyed by release.

Source: ``vllm/v1/metrics/loggers.py`` (``PrometheusStatLogger``): every series carries labels
``model_name`` (the served model name) and ``engine``; histogram bucket lists below are copied
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

Errors. ``vllm:request_success_total{finished_reason}`` counts only requests the engine
*finished* (``stop``, ``length``, ``abort``); a request that fails before or outside the
engine is never counted, and ``abort`` is mostly a client that hung up, not a server fault.
So availability is read from the OpenAI server's HTTP counter instead:
``http_requests_total{handler,method,status}`` from prometheus-fastapi-instrumentator, which
vLLM's ``vllm/entrypoints/openai/api_server.py`` installs, with status codes grouped
(``5xx``). Only ``/v1/...`` handlers count, so health probes and scrapes do not dilute the
ratio. Cost: that counter has no ``model_name`` label, so with ``groupBy: [model_name]`` the
error ratio and availability SLO stay per service while latency and saturation go per model.
"""

from __future__ import annotations

from generator.presets.model import GaugeDef, HistogramDef, Preset, RequestsDef

# vllm/v1/metrics/loggers.py: request_latency_buckets (e2e, queue, prefill, decode, inference).
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

_REQUESTS = RequestsDef(
    name="http_requests_total",
    error_matchers=(("status", "5.."),),
    matchers=(("handler", "/v1/.*"),),
)


def _entry(since: str, kv_cache: str, itl: str) -> Preset:
    return Preset(
        server="vllm",
        since_version=since,
        latency={
            "requestDuration": HistogramDef("vllm:e2e_request_latency_seconds", E2E_BUCKETS),
            "timeToFirstToken": HistogramDef("vllm:time_to_first_token_seconds", TTFT_BUCKETS),
            "interTokenLatency": HistogramDef(itl, ITL_BUCKETS),
        },
        requests=_REQUESTS,
        queue_depth=GaugeDef("vllm:num_requests_waiting"),
        running_requests=GaugeDef("vllm:num_requests_running"),
        kv_cache_usage=GaugeDef(kv_cache),  # already a 0–1 fraction despite "perc"
        prompt_tokens="vllm:prompt_tokens_total",
        generation_tokens="vllm:generation_tokens_total",
        model_label="model_name",
    )


PRESETS: list[Preset] = [
    _entry("0.8", "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds"),
    _entry("0.9.2", "vllm:kv_cache_usage_perc", "vllm:time_per_output_token_seconds"),
    _entry("0.11", "vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds"),
]
