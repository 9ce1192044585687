"""Native histograms in generated promtool tests, as promtool 3 writes them.

:func:`generator.parts.promtool_series.traffic` counts a native histogram's observations as
pseudo-counters, one per custom bucket plus ``count`` and ``sum``, told apart by the marker
label :data:`COMPONENT`; every case then builds, shifts and restarts them as it does any
counter. :func:`fold` turns each histogram's pseudo-counters of a test group into one series in
promtool 3's notation: a native histogram with custom bounds (schema -53, the histogram's
buckets as ``custom_values``; the shape Prometheus 3 stores a classic histogram as under
``convert_classic_histograms_to_nhcb``), exact at every bound. Promtool 2 cannot read it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from generator.promql import go_float

COMPONENT = "__obsgen_native__"
"""Marker label of a native histogram's pseudo-counters: ``<part>@<bounds>``, the part ``b<i>``
(bucket ``i``, the last one above every bound), ``count`` or ``sum``, and the histogram's bounds
comma-separated (:func:`component`). Never in a rendered test: :func:`fold` removes it."""
SCHEMA = -53  # custom bucket bounds (Prometheus' CustomBucketsSchema)

_MARKER = re.compile(rf',?{COMPONENT}="(?P<part>[a-z0-9]+)@(?P<bounds>[^"]*)"')
_NUMBER = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_SEGMENT = re.compile(rf"^(?P<start>{_NUMBER})\+(?P<inc>{_NUMBER})x(?P<n>\d+)$")


def bucket_key(index: int) -> str:
    """The part name of bucket ``index``."""
    return f"b{index}"


def component(part: str, bounds: Sequence[float]) -> str:
    """The :data:`COMPONENT` value of ``part`` of a histogram with ``bounds``."""
    return f"{part}@{','.join(go_float(b) for b in bounds)}"


def _segments(values: str) -> list[tuple[float, float, int]]:
    out = []
    for part in values.split():
        match = _SEGMENT.match(part)
        if match is None:
            raise ValueError(f"native histogram component {values!r} is not start+incxN segments")
        out.append((float(match["start"]), float(match["inc"]), int(match["n"])))
    return out


def _histogram(bounds: Sequence[float], parts: dict[str, float]) -> str:
    buckets = " ".join(go_float(parts[bucket_key(i)]) for i in range(len(bounds) + 1))
    return (
        f"{{{{schema:{SCHEMA} sum:{go_float(parts['sum'])} count:{go_float(parts['count'])} "
        f"custom_values:[{' '.join(go_float(b) for b in bounds)}] buckets:[{buckets}]}}}}"
    )


def fold(series: list[dict[str, str]]) -> list[dict[str, str]]:
    """``series`` (promtool ``input_series`` entries) with each native histogram's
    pseudo-counters folded into one histogram series, in the place of its first component.

    Raises:
        ValueError: a histogram's components differ in their segments (a generator bug).
    """
    if not any(COMPONENT in entry["series"] for entry in series):
        return series
    groups: dict[str, dict[str, str]] = {}
    edges: dict[str, tuple[float, ...]] = {}
    out: list[dict[str, str] | str] = []
    for entry in series:
        found = _MARKER.search(entry["series"])
        if found is None:
            out.append(entry)
            continue
        text = _MARKER.sub("", entry["series"], count=1).replace("{,", "{")
        if text not in groups:
            groups[text] = {}
            edges[text] = tuple(float(b) for b in found["bounds"].split(","))
            out.append(text)
        groups[text][found["part"]] = entry["values"]
    folded = {text: _folded(text, parts, edges[text]) for text, parts in groups.items()}
    return [folded[e] if isinstance(e, str) else e for e in out]


def _folded(text: str, parts: dict[str, str], edges: tuple[float, ...]) -> dict[str, str]:
    segments = {part: _segments(values) for part, values in parts.items()}
    shapes = {tuple(n for _, _, n in segs) for segs in segments.values()}
    wanted = {*map(bucket_key, range(len(edges) + 1)), "count", "sum"}
    if len(shapes) != 1 or set(segments) != wanted:
        raise ValueError(f"native histogram {text}: components differ: {parts}")
    values = []
    for i, n in enumerate(next(iter(shapes))):
        start = _histogram(edges, {p: segs[i][0] for p, segs in segments.items()})
        inc = _histogram(edges, {p: segs[i][1] for p, segs in segments.items()})
        values.append(f"{start}+{inc}x{n}")
    return {"series": text, "values": " ".join(values)}
