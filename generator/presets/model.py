"""Preset data model: what obsgen needs to know about a model server's metrics."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class HistogramDef:
    """A latency histogram as the server exposes it.

    Attributes:
        name: base metric name (series are ``<name>_bucket``, ``_count``, ``_sum``).
        buckets: upper bounds in the metric's unit, ascending, without ``+Inf``.
        seconds_per_unit: 1 for seconds, 0.001 for milliseconds, 1e-6 for microseconds.
        native: True for a Prometheus native histogram (no ``_bucket`` series).
    """

    name: str
    buckets: tuple[float, ...]
    seconds_per_unit: float = 1.0
    native: bool = False


@dataclass(frozen=True)
class RequestsDef:
    """How finished requests and failed requests are counted.

    Either one counter with an outcome label (``name`` + ``error_matchers``, regexes matched
    with ``=~``), or two counters (``name`` counts successes, ``failure_name`` failures; the
    total is their sum).
    """

    name: str
    error_matchers: tuple[tuple[str, str], ...] = ()
    failure_name: str | None = None


@dataclass(frozen=True)
class GaugeDef:
    """A gauge; ``scale`` converts its unit to the one obsgen uses (ratio 0–1, count)."""

    name: str
    scale: float = 1.0


@dataclass(frozen=True)
class Preset:
    """Everything obsgen needs to know about one model server release line.

    Latency histograms are keyed by indicator: ``requestDuration`` (end to end),
    ``timeToFirstToken``, ``interTokenLatency``; a missing key means the server has no such
    histogram (and a spec asking for it is an error, never a fake).
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
    model_label: str | None = None
    notes: tuple[str, ...] = field(default=())
