"""The checks that a threshold falls on a bucket bound, and why a server has no histogram (the
latency histograms resolve in :mod:`generator.signals.histograms`, the request counters in
:mod:`generator.signals.requests`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from generator import naming
from generator.plan_types import (
    HistogramPlan,
    _Problems,
)
from generator.presets import (
    PRESETS,
    HistogramDef,
)
from generator.release_bounds import Releases, Test
from generator.units import decimal_str, format_duration_ms


def _no_histogram(
    server: str,
    key: str,
    histograms: Mapping[str, HistogramPlan],
    releases: Releases | None = None,
) -> str:
    """Error text for a latency indicator the server lacks: why (in the declared release, and
    from which release on it has one), and what it has instead."""
    entries = PRESETS.get(server, [])
    if releases is not None:
        reason = releases.absent(key)
    else:
        reason = entries[-1].absent.get(key) if entries else None
    has = ", ".join(
        f"{k} ({naming.INDICATOR_LABEL[k]})" for k in naming.INDICATOR_LABEL if k in histograms
    )
    declare = f"declare spec.metrics.{key} with name and buckets"
    return (
        f"server {server} has no {key} ({naming.INDICATOR_LABEL[key]}) histogram"
        + (f": {reason}" if reason else "")
        + (
            f"; it has {has}. Use one of those, or {declare}"
            if has
            else f"; it has none: {declare}"
        )
    )


def _as_threshold(histogram: HistogramPlan, seconds: float) -> str:
    """A bucket bound written as a spec duration that names it (whole milliseconds:
    TGI's 5.6815… s bound is ``5s682ms``), else in seconds."""
    milliseconds = round(seconds * 1000)
    whole = abs(milliseconds - seconds * 1000) <= 1e-6 * max(1.0, seconds * 1000)
    if not whole and milliseconds > 0 and histogram.bound_for(milliseconds / 1000) is not None:
        return format_duration_ms(milliseconds)
    return f"{decimal_str(seconds)}s"


# What a latency threshold that selects no bucket does, per use (release_bounds.Test.effect).
_SLI_EFFECT = "the SLI would select no bucket and its alerts could never fire"
_SLOW_EFFECT = "the alert would select no bucket and could never fire"
_P99_EFFECT = "histogram_quantile never reports more than the largest bound, so it could never fire"


def _in_unit(histogram: HistogramPlan, other: HistogramDef) -> HistogramPlan:
    """``histogram`` with ``other``'s bounds (another release's), in ``histogram``'s unit."""
    factor = other.seconds_per_unit / histogram.seconds_per_unit
    if factor == 1:
        return replace(histogram, buckets=other.buckets)
    return replace(histogram, buckets=tuple(float(decimal_str(b * factor)) for b in other.buckets))


def _below_top(seconds: float) -> Callable[[HistogramDef], bool]:
    """Whether ``seconds`` is below a histogram's largest finite bound (in seconds)."""

    def holds(other: HistogramDef) -> bool:
        return seconds < other.buckets[-1] * other.seconds_per_unit

    return holds


def _release_checks(
    histogram: HistogramPlan,
    seconds: float,
    path: str,
    p: _Problems,
    releases: Releases,
    test: Test,
) -> None:
    """Refuse ``seconds`` where the declared version names a line of releases on some of
    whose bounds it fails; warn where no version is declared and an older release's fail."""
    shown = _as_threshold(histogram, seconds)
    problem = releases.line_problem(histogram.key, test, shown)
    if problem is not None:
        p.add(path, problem)
    for warning in (
        releases.upgrade_warning(histogram.key, test, shown),
        releases.unset_warning(histogram.key, test, shown),
    ):
        if warning is not None:
            p.warn(path, warning)


def _check_bound(
    histogram: HistogramPlan,
    seconds: float,
    path: str,
    p: _Problems,
    releases: Releases | None = None,
    effect: str = _SLI_EFFECT,
) -> float | None:
    if not histogram.bounded:
        return seconds / histogram.seconds_per_unit
    bound = histogram.bound_for(seconds)
    per_release = releases is not None and histogram.key in releases.preset_keys
    test = Test(
        lambda other: _in_unit(histogram, other).bound_for(seconds) is not None,
        "a bucket bound",
        effect,
    )
    if bound is None:
        below, above = histogram.neighbours(seconds)
        near = ", ".join(
            f"{word} {_as_threshold(histogram, v)}"
            for word, v in (("below", below), ("above", above))
            if v is not None
        )
        fix = (
            releases.refusal(histogram.key, test)
            if releases is not None and per_release
            else "use a bucket bound or add it to the buckets"
        )
        p.add(
            path,
            f"{decimal_str(seconds)}s is not a bucket bound of {histogram.metric} "
            f"(nearest: {near}); {effect} — {fix}",
        )
    elif releases is not None and per_release:
        _release_checks(histogram, seconds, path, p, releases, test)
    return bound
