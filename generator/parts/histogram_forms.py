"""PromQL of a latency histogram in each form ``spec.metrics.<key>.histogram`` names: classic
(``_bucket``/``_count``), native and nhcb (the one native series, read with
``histogram_count``/``histogram_fraction``) and both (a migration: per series the native form
where it exists, else the classic, so no request counts twice).

Functions return floats per the caller's ``group`` labels (requests, or requests per second);
bounds are in the histogram's own unit. Why ``both`` never double-counts, and the interpolation
error of exponential buckets: docs/spec.md, "Histogram forms".
"""

from __future__ import annotations

from collections.abc import Callable

from generator.plan_types import HistogramPlan
from generator.promql import Target, by, increments, le_matcher, selector
from generator.units import decimal_str

Wrap = Callable[[str], str]
At = Callable[[Wrap], str]


def native_good(series: str, bound: float) -> str:
    """Observations no larger than ``bound`` (metric unit) in native histogram ``series`` (a
    float per series); an empty histogram's fraction is NaN, so it counts 0 instead."""
    count = f"histogram_count({series})"
    return f"(histogram_fraction(0, {decimal_str(bound)}, {series}) * {count} >= 0 or 0 * {count})"


def _native_value(series: str, bound: float | None) -> str:
    return f"histogram_count({series})" if bound is None else native_good(series, bound)


def _classic_selector(h: HistogramPlan, name: str, bound: float | None, le_version: str) -> str:
    if bound is None:
        return selector(name + "_count", h.matchers)
    return selector(name + "_bucket", (*h.matchers, le_matcher(bound, le_version)))


def _classic_value(series: str, bound: float | None) -> str:
    # Without ``le``, so a classic series matches its native twin in ``or``.
    return series if bound is None else f"max without (le) ({series})"


def both_events(
    h: HistogramPlan,
    bound: float | None,
    le_version: str,
    interval: str,
    group: tuple[str, ...],
    target: Target,
    bridge: str | None,
) -> str:
    """``sum by (group)`` of the per-evaluation increments of a ``both`` histogram's count
    (``bound`` None) or of its observations no larger than ``bound``: per series
    ``native_core or classic or native_born`` (module docstring), each exactly
    :func:`generator.promql.increments`. Requests per ``interval``."""

    def native_at(name: str) -> At:
        return lambda w: _native_value(w(selector(name, h.matchers)), bound)

    def classic_at(name: str) -> At:
        return lambda w: _classic_value(w(_classic_selector(h, name, bound, le_version)), bound)

    natives = [native_at(name) for name in h.names]
    classics = [classic_at(name) for name in h.names]
    parts = [increments(at, interval, None, bridge) for at in natives]
    parts += [increments(at, interval, target, bridge) for at in classics]
    parts += [increments(at, interval, target, bridge) for at in natives]
    return f"sum{by(group)} ({' or '.join(f'({x})' for x in parts)})"


def _native_rates(h: HistogramPlan, window: str) -> list[str]:
    return [f"rate({selector(name, h.matchers)}[{window}])" for name in h.names]


def both_count_rate(h: HistogramPlan, window: str, group: tuple[str, ...]) -> str:
    """All observations per second, per series native where it exists, else classic."""
    parts = [f"histogram_count({r})" for r in _native_rates(h, window)]
    parts += [f"rate({selector(name + '_count', h.matchers)}[{window}])" for name in h.names]
    return f"sum{by(group)} ({' or '.join(parts)})"


def both_bucket_rate(
    h: HistogramPlan, bound: float, le_version: str, window: str, group: tuple[str, ...]
) -> str:
    """Observations no larger than ``bound`` per second, per series native where it exists,
    else classic (its ``le`` dropped to match)."""
    parts = [native_good(r, bound) for r in _native_rates(h, window)]
    le = le_matcher(bound, le_version)
    parts += [
        f"max without (le) (rate({selector(name + '_bucket', (*h.matchers, le))}[{window}]))"
        for name in h.names
    ]
    return f"sum{by(group)} ({' or '.join(parts)})"


def both_quantile(h: HistogramPlan, q: float, window: str, group: tuple[str, ...]) -> str:
    """``histogram_quantile`` per group: of the native series where the group has any, else of
    the classic buckets. A quantile cannot mix forms, so during a migration a group whose
    pods expose different forms reports its native pods' quantile (docs/spec.md)."""
    native = " or ".join(_native_rates(h, window))
    classic = " or ".join(
        f"rate({selector(name + '_bucket', h.matchers)}[{window}])" for name in h.names
    )
    return (
        f"(histogram_quantile({decimal_str(q)}, sum{by(group)} ({native})) or "
        f"histogram_quantile({decimal_str(q)}, sum{by(('le', *group))} ({classic})))"
    )


__all__ = [
    "both_bucket_rate",
    "both_count_rate",
    "both_events",
    "both_quantile",
    "native_good",
]
