"""What obsgen's server presets (generator/presets/) know about single metrics, for the checks.

Classic histograms: base name, unit (``seconds_per_unit``: 1 s, 0.001 ms, 1e-6 µs) and the
largest finite bucket bound of any release, in the metric's unit (``histogram_quantile`` never
returns more: a quantile in the ``+Inf`` bucket is that bound). Gauges: kind (``ratio``: 0–1,
``percent``: 0–100, ``count``) and what they measure. Names also match behind a re-exporter's
prefix (``ray_vllm:`` for ``vllm:``). The generic ``openai-http`` preset's histogram
(``http_request_duration_seconds``) is left out: other exporters use that name with other
buckets, or as a native histogram.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from generator.lint.names import preset_namespaces

# Presets whose metric names many other exporters share.
GENERIC_SERVERS = frozenset({"openai-http"})


@dataclass(frozen=True)
class KnownHistogram:
    """A latency histogram a preset knows (``name`` is its base name)."""

    name: str
    server: str
    seconds_per_unit: float
    top: float
    native: bool


@dataclass(frozen=True)
class KnownGauge:
    """A gauge a preset knows: ``kind`` is ``ratio`` (0–1), ``percent`` (0–100) or ``count``."""

    name: str
    server: str
    kind: str
    what: str


@lru_cache(maxsize=1)
def _histograms() -> dict[str, KnownHistogram]:
    from generator.presets import PRESETS

    found: dict[str, KnownHistogram] = {}
    for server, entries in sorted(PRESETS.items()):
        if server in GENERIC_SERVERS:
            continue
        for preset in entries:
            for histogram in preset.latency.values():
                top = max(histogram.buckets)
                for name in (histogram.name, *histogram.also):
                    old = found.get(name)
                    top_now = max(top, old.top) if old else top
                    found[name] = KnownHistogram(
                        name, server, histogram.seconds_per_unit, top_now, histogram.native
                    )
    return found


@lru_cache(maxsize=1)
def _gauges() -> dict[str, KnownGauge]:
    from generator.presets import PRESETS
    from generator.presets.model import GaugeDef

    found: dict[str, KnownGauge] = {}

    def add(server: str, gauge: GaugeDef | None, kind: str, what: str) -> None:
        if gauge is None:
            return
        if kind == "ratio" and (gauge.denominator is not None or gauge.matchers):
            kind = "count"  # a block count the rules divide: not a ratio by itself
        elif kind == "ratio" and abs(gauge.scale - 0.01) < 1e-12:
            kind = "percent"
        for name in (gauge.name, *gauge.also):
            found.setdefault(name, KnownGauge(name, server, kind, what))

    for server, entries in sorted(PRESETS.items()):
        for preset in entries:
            add(server, preset.kv_cache_usage, "ratio", "KV-cache usage")
            cache = preset.prefix_cache
            add(server, cache.gauge if cache else None, "ratio", "prefix-cache hit rate")
            add(server, preset.queue_depth, "count", "requests waiting")
            add(server, preset.running_requests, "count", "requests running")
    return found


def _unprefixed(name: str) -> str:
    """``vllm:x`` for ``ray_vllm:x`` (a re-exporter's prefix before a server namespace)."""
    if name.count(":") != 1:
        return name
    namespace, rest = name.split(":")
    for known in preset_namespaces():
        if namespace.endswith("_" + known):
            return f"{known}:{rest}"
    return name


def histogram(name: str) -> KnownHistogram | None:
    """The preset histogram whose base name is ``name``, else ``None``."""
    return _histograms().get(name) or _histograms().get(_unprefixed(name))


def gauge(name: str) -> KnownGauge | None:
    """The preset gauge named ``name``, else ``None``."""
    return _gauges().get(name) or _gauges().get(_unprefixed(name))


def histogram_of_series(name: str) -> tuple[KnownHistogram, str] | None:
    """``(histogram, suffix)`` for a preset histogram's ``_bucket``/``_count``/``_sum`` series
    or its bare name (suffix ``""``), else ``None``."""
    for suffix in ("_bucket", "_count", "_sum", ""):
        if name.endswith(suffix):
            found = histogram(name.removesuffix(suffix) if suffix else name)
            if found is not None:
                return found, suffix
    return None
