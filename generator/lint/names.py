"""What metric names tell: counters, recording-rule names, windows, and ``le`` spellings.

Sources: Prometheus "Metric and label naming" and "Recording rules" (``level:metric:operations``)
pages; OpenMetrics for the counter suffixes; Prometheus 3 migration guide for ``le``/``quantile``
normalisation (bucket bounds are stored as Go's shortest float, with ``.0`` on whole numbers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Suffixes of series that only go up (OpenMetrics counters and histogram/summary parts).
COUNTER_SUFFIXES = ("_total", "_count", "_sum", "_bucket", "_created")
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


class CounterNames:
    """Decides whether a raw metric name is a counter.

    Args:
        extra: more whole-name regexes of counters (the config's ``counters``).
    """

    def __init__(self, extra: Iterable[str] = ()) -> None:
        patterns = (*LEGACY_COUNTERS, *preset_counters(), *extra)
        self._legacy = re.compile("|".join(f"(?:{p})" for p in patterns))

    def is_known(self, name: str) -> bool:
        """True for a name on the legacy list, a preset's counter or the config's list."""
        return self._legacy.fullmatch(name) is not None

    def is_counter(self, name: str) -> bool:
        """True for a raw (not recorded) name with a counter suffix or on the legacy list."""
        if not name or is_recorded(name):
            return False
        return name.endswith(COUNTER_SUFFIXES) or self._legacy.fullmatch(name) is not None


def is_recorded(name: str) -> bool:
    """True for names holding ``:`` — only recording rules should write those."""
    return ":" in name


def split_recorded(name: str) -> tuple[str, str, str] | None:
    """``(level, metric, operations)`` of a ``level:metric:operations`` name, else ``None``."""
    match = _RECORDED.match(name)
    if match is None:
        return None
    return match.group("level"), match.group("metric"), match.group("ops")


def recorded_rate(name: str) -> bool:
    """True when a recorded name's operations say it holds a rate or increase (``rate5m``)."""
    parts = name.split(":")
    return len(parts) >= 2 and _RATE_OPS.search(parts[-1]) is not None


def recorded_ratio(name: str) -> bool:
    """True when a recorded name says it holds a ratio (``slo:sli_error:ratio_rate5m``).

    The word must stand alone between ``_``/``:`` (``…_duration_…`` is not a ratio).
    """
    return is_recorded(name) and "ratio" in re.split(r"[_:]", name.split(":", 1)[1])


def window_of_name(name: str) -> float | None:
    """Window in seconds written at the end of a recorded name (``…:rate5m`` -> 300)."""
    if not is_recorded(name):
        return None
    match = _WINDOW.search(name.rsplit(":", 1)[-1])
    if match is None:
        return None
    window = match.group("window")
    unit = "ms" if window.endswith("ms") else window[-1]
    return float(window[: -len(unit)]) * _DURATION_UNITS[unit]


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
