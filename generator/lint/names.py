"""What metric names tell: counters, recording-rule names, windows, and ``le`` spellings.

Sources: Prometheus "Metric and label naming" and "Recording rules" (``level:metric:operations``)
pages; OpenMetrics for the counter suffixes; Prometheus 3 migration guide for ``le``/``quantile``
normalisation (bucket bounds are stored as Go's shortest float, with ``.0`` on whole numbers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

# Suffixes of series that only go up (OpenMetrics counters and histogram/summary parts).
COUNTER_SUFFIXES = ("_total", "_count", "_sum", "_bucket", "_created")
# The series of a classic histogram besides its base name.
HISTOGRAM_SUFFIXES = ("_bucket", "_count", "_sum")
# Counters written before the `_total` convention, still exported under these names. Each is a
# regex matched against the whole name; users add more with `counters:` in the config.
LEGACY_COUNTERS = (
    r"node_vmstat_.+",  # /proc/vmstat counters (pgmajfault, oom_kill, ...)
    r"kubelet_evictions",
    r".+_renew_errors",  # kubelet certificate manager
    # TGI router counters (text-generation-inference router/src/metrics): no `_total`.
    r"tgi_(?:batch_concat|request_count|request_success|request_failure"
    r"|batch_inference_(?:count|success|failure))",
)
_RECORDED = re.compile(
    r"^(?P<level>[a-zA-Z0-9_]*):(?P<metric>[a-zA-Z_][a-zA-Z0-9_]*):(?P<ops>[a-zA-Z0-9_]+)$"
)
_WINDOW = re.compile(r"(?:^|_|[a-z])(?P<window>\d+(?:ms|[smhdwy]))$")
# The short `metric:operations` form: a last part made only of operations, each maybe with a
# window (`burnrate1h`, `ratio_rate5m`, `availability30d`, `sum_irate`).
_OP_WORD = (
    r"(?:sum|avg|min|max|count|group|ratio|burnrate|availability|increase|irate|rate|deriv"
    r"|delta|quantile|histogram_quantile|p\d{2,4}|stddev|stdvar|topk|bottomk)"
    r"(?:\d+(?:ms|[smhdwy]))?"
)
_OPERATIONS = re.compile(rf"{_OP_WORD}(?:_{_OP_WORD})*")
_RATE_OPS = re.compile(
    r"(?:^|_)(?:i?rate|increase|burnrate|ratio_rate)\d|(?:^|_)(?:i?rate|increase)(?:$|_)"
)
_DURATION_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_GO_FLOAT = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


def preset_counters() -> tuple[str, ...]:
    """Counters that obsgen's model-server presets know, several without a ``_total`` suffix
    (TGI's ``tgi_request_success``, Triton's ``nv_inference_request_success``)."""
    from generator.presets import PRESETS

    names: set[str] = set()
    for entries in PRESETS.values():
        for preset in entries:
            names.update(n for n in (preset.requests.name, preset.requests.failure_name) if n)
            tokens = (preset.prompt_tokens, preset.generation_tokens, preset.preemptions)
            names.update(n for n in tokens if n)
            for mean in preset.mean_latency.values():
                names.update((mean.sum_name, mean.count_name))
    return tuple(sorted(re.escape(n) for n in names))


@lru_cache(maxsize=1)
def preset_raw_names() -> frozenset[str]:
    """Every series name a server preset knows as scraped (not recorded): its metrics, each
    classic histogram's ``_bucket``/``_count``/``_sum`` series, in every release."""
    from generator.presets import PRESETS
    from generator.presets.model import metric_names

    names: set[str] = set()
    for entries in PRESETS.values():
        for preset in entries:
            names.update(metric_names(preset))
            for histogram in preset.latency.values():
                for base in (histogram.name, *histogram.also):
                    names.update(base + suffix for suffix in HISTOGRAM_SUFFIXES)
    return frozenset(names)


@lru_cache(maxsize=1)
def preset_namespaces() -> frozenset[str]:
    """Namespaces that servers write before a colon in scraped names (``vllm``, ``sglang``,
    ``trtllm``): the part before the one colon of a preset's metric names."""
    return frozenset(name.split(":")[0] for name in preset_raw_names() if name.count(":") == 1)


class SeriesNames:
    """The one classifier of series names every check asks: recorded or scraped, counter or
    not, and what a recorded name says (its level, operations, window).

    A name is *recorded* when a recording rule of the lint run writes it; else when it has the
    ``level:metric:operations`` shape (three parts or more, Prometheus "Recording rules"), or
    the short ``metric:operations`` form whose last part is made of operations
    (``apiserver_request:burnrate1h``). A name a server preset knows, or one colon after a
    server's namespace (``vllm:…``, ``sglang:…``, ``trtllm:…``, re-exported as
    ``ray_vllm:…``), is scraped: a colon alone never makes a name recorded.

    Args:
        extra: more whole-name regexes of counters (the config's ``counters``).
        written: the names recording rules of this run write.
    """

    def __init__(self, extra: Iterable[str] = (), written: Iterable[str] = ()) -> None:
        patterns = (*LEGACY_COUNTERS, *preset_counters(), *extra)
        self._legacy = re.compile("|".join(f"(?:{p})" for p in patterns))
        self._written = frozenset(written)

    def is_recorded(self, name: str) -> bool:
        """True for a recorded series name (see the class doc), False for a scraped one."""
        if not name:
            return False
        if name in self._written:
            return True
        if ":" not in name or scraped_by_server(name):
            return False
        parts = name.split(":")
        if len(parts) >= 3:
            return bool(parts[1]) and bool(parts[-1])
        return bool(parts[0]) and _OPERATIONS.fullmatch(parts[1]) is not None

    def split(self, name: str) -> tuple[str, str, str] | None:
        """``(level, metric, operations)`` of a recorded name (level ``""`` in the short
        ``metric:operations`` form; operations keep any further colons), else ``None``."""
        if not self.is_recorded(name):
            return None
        pieces = name.split(":")
        if len(pieces) == 1:
            return None
        if len(pieces) == 2:
            return "", pieces[0], pieces[1]
        return pieces[0], pieces[1], ":".join(pieces[2:])

    def is_known(self, name: str) -> bool:
        """True for a name on the legacy list, a preset's counter or the config's list."""
        return self._legacy.fullmatch(name) is not None

    def is_counter(self, name: str) -> bool:
        """True for a scraped (not recorded) name with a counter suffix or on the legacy list."""
        if not name or self.is_recorded(name):
            return False
        return name.endswith(COUNTER_SUFFIXES) or self._legacy.fullmatch(name) is not None

    def says_rate(self, name: str) -> bool:
        """True when a recorded name's operations say it holds a rate or increase (``rate5m``)."""
        parts = self.split(name)
        return parts is not None and _RATE_OPS.search(parts[2]) is not None

    def says_ratio(self, name: str) -> bool:
        """True when a recorded name says it holds a ratio (``slo:sli_error:ratio_rate5m``).

        The word must stand alone between ``_``/``:`` (``…_duration_…`` is not a ratio).
        """
        parts = self.split(name)
        return parts is not None and "ratio" in re.split(r"[_:]", f"{parts[1]}:{parts[2]}")

    def window(self, name: str) -> float | None:
        """Window in seconds written at the end of a recorded name (``…:rate5m`` -> 300)."""
        parts = self.split(name)
        if parts is None:
            return None
        match = _WINDOW.search(parts[2])
        if match is None:
            return None
        window = match.group("window")
        unit = "ms" if window.endswith("ms") else window[-1]
        return float(window[: -len(unit)]) * _DURATION_UNITS[unit]


def scraped_by_server(name: str) -> bool:
    """True for a name a server preset knows, or a ``namespace:metric`` name in a preset
    server's namespace (also behind a re-exporter's prefix: ``ray_vllm:``)."""
    if name in preset_raw_names():
        return True
    if name.count(":") != 1:
        return False
    namespace = name.split(":")[0]
    return any(
        namespace == known or namespace.endswith("_" + known) for known in preset_namespaces()
    )


def split_recorded(name: str) -> tuple[str, str, str] | None:
    """``(level, metric, operations)`` of a name of the ``level:metric:operations`` shape
    (two colons), else ``None``: the shape alone, for judging how a record is named."""
    match = _RECORDED.match(name)
    if match is None:
        return None
    return match.group("level"), match.group("metric"), match.group("ops")


def parse_go_float(text: str) -> float | None:
    """Parse a label value the way Prometheus parses ``le`` (Go ``strconv.ParseFloat``).

    Returns ``None`` for anything that is not a number (``"0.5s"``, ``""``, ``"1_0"``).
    """
    lowered = text.lower().lstrip("+-")
    if lowered in ("inf", "infinity", "nan"):
        return float(text.replace("inity", ""))
    if _GO_FLOAT.match(text):
        return float(text)
    if lowered.startswith("0x"):
        try:
            return float.fromhex(text)
        except ValueError:
            return None
    return None
