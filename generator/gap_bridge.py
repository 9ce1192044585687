"""Event counters read over a window (an Xid, an uncorrectable ECC error, a container restart),
bridged across a hole in the samples longer than the window: per series also the rise since
the last sample before the window within ``spec.prometheus.maxGap``
(``x - last_over_time(x[maxGap] offset window)``), so an event inside the hole pages once
samples resume, for one window. Without a hole it equals the window's own rise.

Functions return PromQL text; values are event counts. docs/spec.md, "Gaps in the samples (`spec.prometheus.maxGap`)".
"""

from __future__ import annotations

from generator.units import format_duration_ms


def bridge(max_gap_ms: int) -> str | None:
    """The range of ``last_over_time`` (``spec.prometheus.maxGap``), or None when off (``0s``)."""
    return format_duration_ms(max_gap_ms) if max_gap_ms else None


def rise_since(series: str, window: str, bridge_range: str) -> str:
    """Per series of ``series`` (a selector): events since its last sample before ``window``
    (within ``bridge_range``); negative after a counter reset, absent for a series with no
    earlier sample (born since: the window's own reading decides)."""
    return f"({series} - last_over_time({series}[{bridge_range}] offset {window}))"


def widest(in_window: str, series: str, window: str, bridge_range: str | None) -> str:
    """Per series the larger of ``in_window`` (the window's own rise of ``series``, e.g.
    ``max_over_time − min_over_time``) and :func:`rise_since`; ``in_window`` alone without a
    bridge. Both must carry the series' labels, without ``__name__``."""
    if bridge_range is None:
        return in_window
    since = rise_since(series, window, bridge_range)
    return f"(({in_window}) >= {since} or {since} > 0 or ({in_window}))"


def rose(series: str, window: str, bridge_range: str | None) -> str:
    """``series`` rose since its last sample before ``window`` (per series, value the rise),
    for an ``or`` beside ``increase(series[window]) > 0``; nothing without a bridge."""
    if bridge_range is None:
        return ""
    return f"{rise_since(series, window, bridge_range)} > 0"
