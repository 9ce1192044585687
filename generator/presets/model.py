"""Preset data model: what obsgen needs to know about a model server's metrics."""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class HistogramDef:
    """A latency histogram as the server exposes it.

    Attributes:
        name: base metric name (series are ``<name>_bucket``, ``_count``, ``_sum``).
        buckets: upper bounds in the metric's unit, ascending, without ``+Inf``.
        seconds_per_unit: 1 for seconds, 0.001 for milliseconds, 1e-6 for microseconds.
        native: True for a Prometheus native histogram (no ``_bucket`` series).
        also: the same histogram's names in other releases (a rename), same buckets and
            labels; the rules read ``name`` first and these where it is absent.
    """

    name: str
    buckets: tuple[float, ...]
    seconds_per_unit: float = 1.0
    native: bool = False
    also: tuple[str, ...] = ()


@dataclass(frozen=True)
class RequestsDef:
    """How finished requests and failed requests are counted.

    Either one counter with an outcome label (``name`` + ``error_matchers``, regexes matched
    with ``=~``), or two counters (``name`` counts successes, ``failure_name`` failures; the
    total is their sum). ``matchers`` (label, regex) narrow both counters to the requests that
    count (e.g. vLLM's HTTP counter to ``handler=~"/v1/.*"``, leaving out probes). ``source``
    says in words where the counter comes from (quoted by ``obsgen verify``).
    ``exclude_matchers`` (label, regex) mark failures that are not the service's (client
    aborts, ``CANCELED``): read as ``label!~"regex"`` on the failures (the failure counter's
    with ``failure_name``), which also matches series without the label (a release without
    it still counts its failures). An excluded request stays in the total as not failed.
    As an engine failure source (``Preset.failure_sources``) only the failures are read.
    """

    name: str
    error_matchers: tuple[tuple[str, str], ...] = ()
    failure_name: str | None = None
    matchers: tuple[tuple[str, str], ...] = ()
    source: str = ""
    exclude_matchers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class GaugeDef:
    """A gauge; ``scale`` converts its unit to the one obsgen uses (ratio 0–1, count).

    ``matchers`` (label, value) pick one series of a labelled family
    (``request_type="waiting"``). With ``denominator`` the value is the ratio of the
    ``matchers`` series to the same metric's ``denominator`` series, each aggregated by the
    same labels first (TensorRT-LLM KV cache: ``used`` blocks / ``max`` blocks). ``also``
    lists the gauge's names in other releases (a rename, same unit and labels): the rules read
    ``name`` first and these where it is absent.
    """

    name: str
    scale: float = 1.0
    matchers: tuple[tuple[str, str], ...] = ()
    denominator: tuple[tuple[str, str], ...] | None = None
    also: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.also and self.denominator is not None:
            raise ValueError(f"{self.name}: renamed gauges with a denominator are not supported")


@dataclass(frozen=True)
class PrefixCacheDef:
    """The prefix cache's hit ratio (0–1): counters of prompt tokens found in the cache
    (``hits``) over tokens looked up (``queries``), each a tuple of one metric's names across
    releases (a rename, the declared release's first); or, where the server has no counters,
    a 0–1 ``gauge`` of the hit rate."""

    hits: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()
    gauge: GaugeDef | None = None


@dataclass(frozen=True)
class MeanLatencyDef:
    """Mean latency from two counters, for servers with no latency histogram (Triton).

    Mean (seconds) = rate(``sum_name``) / rate(``count_name``) × ``seconds_per_unit``. A mean
    gives no percentile: it cannot back a latency SLO or ``latencyP99``.
    """

    sum_name: str
    count_name: str
    seconds_per_unit: float = 1.0


@dataclass(frozen=True)
class Preset:
    """Everything obsgen needs to know about one model server release line.

    Latency histograms are keyed by indicator: ``requestDuration`` (end to end),
    ``timeToFirstToken``, ``interTokenLatency``; a missing key means the server has no such
    histogram (and a spec asking for it is an error, never a fake); ``absent`` says why, keyed
    the same way, and that reason is quoted in the error. ``mean_latency`` holds counter-based
    means by the same keys. ``preemptions`` is the counter of requests the engine preempted
    (evicted from the running batch to free KV cache), None where the server has none;
    ``prefix_cache`` its prefix-cache hit ratio source (:class:`PrefixCacheDef`).
    ``model_label`` is the label naming the served model
    (``model_name`` for vLLM, ``model`` for Triton), the one to put in ``spec.groupBy``.

    Versions: the entry applies from ``since_version`` on (until the next entry of the same
    ``variant``); ``since_aliases`` spell the same release in the server's other numbering
    (Triton: container ``23.04`` = server ``2.33.0``). ``variant`` names the runtime variant
    the entry describes (vLLM ``v1``/``v0`` engine), None where the server has none.
    ``other_requests`` are the request counters the server exposes in other releases or
    variants: a spec naming one of them in ``spec.metrics.requests.name`` gets its matchers,
    and ``obsgen verify`` names them when the chosen counter is missing.
    """

    server: str
    since_version: str
    latency: dict[str, HistogramDef]
    requests: RequestsDef
    queue_depth: GaugeDef | None = None
    running_requests: GaugeDef | None = None
    kv_cache_usage: GaugeDef | None = None
    prompt_tokens: str | None = None
    generation_tokens: str | None = None
    preemptions: str | None = None
    prefix_cache: PrefixCacheDef | None = None
    model_label: str | None = None
    notes: tuple[str, ...] = field(default=())
    mean_latency: dict[str, MeanLatencyDef] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)
    since_aliases: tuple[str, ...] = ()
    variant: str | None = None
    other_requests: tuple[RequestsDef, ...] = ()
    # Speculative decoding: (draft tokens, accepted tokens) counters, present only while the
    # server runs with a draft model or method (generator.families.spec_decode).
    spec_decode: tuple[str, str] | None = None
    # LoRA adapter pool: an info gauge whose labels list the running and waiting adapters and
    # the pool's size (generator.families.lora_pool); None where the server has none.
    lora_info: str | None = None
    # Disaggregated prefill/decode KV transfer: (transfer-time histogram, failed-transfer
    # counter), exported by the role that pulls the KV cache (generator.families.kv_transfer).
    kv_transfer: tuple[str, str] | None = None
    # Further failure sources beside ``requests`` (the engine's finish reasons where the
    # HTTP status is sent before a streamed response fails): docs/spec.md, "What a failure is".
    failure_sources: tuple[RequestsDef, ...] = ()


def prefixed(preset: Preset, prefix: str) -> Preset:
    """``preset`` with ``prefix`` prepended to every metric name it supplies (histograms and
    their renames, request counters, gauges, token and preemption counters, mean-latency counters).

    For servers whose metrics another process re-exports under a prefix: Ray Serve writes
    vLLM's ``vllm:num_requests_running`` as ``ray_vllm:num_requests_running``. Labels and
    bucket bounds are unchanged; ``""`` returns ``preset`` itself.
    """
    if not prefix:
        return preset

    def name(value: str | None) -> str | None:
        return None if value is None else prefix + value

    def histogram(h: HistogramDef) -> HistogramDef:
        return replace(h, name=prefix + h.name, also=tuple(prefix + a for a in h.also))

    def gauge(g: GaugeDef | None) -> GaugeDef | None:
        if g is None:
            return None
        return replace(g, name=prefix + g.name, also=tuple(prefix + a for a in g.also))

    def requests(r: RequestsDef) -> RequestsDef:
        return replace(r, name=prefix + r.name, failure_name=name(r.failure_name))

    return replace(
        preset,
        latency={key: histogram(h) for key, h in preset.latency.items()},
        requests=requests(preset.requests),
        other_requests=tuple(requests(r) for r in preset.other_requests),
        failure_sources=tuple(requests(r) for r in preset.failure_sources),
        queue_depth=gauge(preset.queue_depth),
        running_requests=gauge(preset.running_requests),
        kv_cache_usage=gauge(preset.kv_cache_usage),
        prompt_tokens=name(preset.prompt_tokens),
        generation_tokens=name(preset.generation_tokens),
        preemptions=name(preset.preemptions),
        prefix_cache=None
        if preset.prefix_cache is None
        else PrefixCacheDef(
            tuple(prefix + n for n in preset.prefix_cache.hits),
            tuple(prefix + n for n in preset.prefix_cache.queries),
            gauge(preset.prefix_cache.gauge),
        ),
        spec_decode=None
        if preset.spec_decode is None
        else (prefix + preset.spec_decode[0], prefix + preset.spec_decode[1]),
        lora_info=name(preset.lora_info),
        kv_transfer=None
        if preset.kv_transfer is None
        else (prefix + preset.kv_transfer[0], prefix + preset.kv_transfer[1]),
        mean_latency={
            key: replace(m, sum_name=prefix + m.sum_name, count_name=prefix + m.count_name)
            for key, m in preset.mean_latency.items()
        },
    )


def metric_names(preset: Preset) -> tuple[str, ...]:
    """Every metric name ``preset`` supplies, in a fixed order (histogram base names and their
    renames, request counters, gauges, token, preemption and mean-latency counters)."""
    names: list[str] = []
    for _, h in sorted(preset.latency.items()):
        names += [h.name, *h.also]
    for r in (preset.requests, *preset.other_requests):
        names += [r.name, *([r.failure_name] if r.failure_name else [])]
    for g in (preset.queue_depth, preset.running_requests, preset.kv_cache_usage):
        if g is not None:
            names += [g.name, *g.also]
    names += [n for n in (preset.prompt_tokens, preset.generation_tokens, preset.preemptions) if n]
    if preset.prefix_cache is not None:
        cache = preset.prefix_cache
        names += [*cache.hits, *cache.queries, *([cache.gauge.name] if cache.gauge else [])]
    for _, m in sorted(preset.mean_latency.items()):
        names += [m.sum_name, m.count_name]
    return tuple(dict.fromkeys(names))
