"""The latency histograms (``spec.metrics.<indicator>``: request duration, time to first
token, inter-token latency, queue time, time per output token), resolved (:func:`resolve`)
into ``ServicePlan.histograms`` by indicator key: their rates in any form, their p50/p90/p99
records (:func:`records`) and the series ``ModelSignalMissing`` guards for the alerts and
SLOs reading one (:func:`guard`). Who reads which histogram and bound: the families'
``histogram_reads`` and the SLOs (:func:`generator.builders.guard_rules.signal_inputs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic.alias_generators import to_snake

from generator import naming, roles, targets
from generator.parts import histogram_forms
from generator.parts.common import record_rule
from generator.parts.guard_inputs import (
    SERVICE_KEYS,
    Condition,
    SignalInput,
    Source,
    server_remedy,
    targets_up,
)
from generator.plan_types import HistogramPlan, _merge
from generator.promql import le_matcher, sum_rate_any
from generator.signals.base import RATE_WINDOW
from generator.units import TIME_UNITS, decimal_str, unit_from_name, unit_of

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import ServicePlan
    from generator.plan_types import _Problems
    from generator.presets import HistogramDef, Preset
    from generator.promql import Matcher
    from generator.roles import RolePlan
    from generator.spec import ServiceSpec
    from generator.spec_metrics import MetricOverride


_HISTOGRAM_SERIES = ("_bucket", "_count", "_sum")


def resolve(
    key: str,
    preset: Preset,
    override: MetricOverride | None,
    base: tuple[Matcher, ...],
    p: _Problems,
) -> HistogramPlan | None:
    """The plan of latency histogram ``key`` (``spec.metrics.<key>`` over the preset's
    ``latency[key]``, on the service's matchers ``base``; problems reported in ``p``), or None
    when neither preset nor spec has one.

    The unit (seconds per unit of the ``le`` bounds) is, in order: the preset's for its own
    metric name; else ``unit`` of the override; else the unit the name ends with
    (``_milliseconds``, ``_ms``, ``_seconds`` …); else seconds. A ``unit`` that contradicts
    the name's suffix, or the preset's unit for its own metric, is an error.
    """
    default: HistogramDef | None = preset.latency.get(key)
    if default is None and (override is None or override.name is None or override.buckets is None):
        return None
    path = f"spec.metrics.{key}"
    custom = override is not None and override.name is not None
    name = override.name if custom else default.name  # type: ignore[union-attr]
    assert name is not None
    series = next((sfx for sfx in _HISTOGRAM_SERIES if name.endswith(sfx)), None)
    if custom and series is not None:
        p.add(
            f"{path}.name",
            f"{name} is one series of a histogram; give the histogram's base name "
            f"({name.removesuffix(series)}): obsgen reads its _bucket, _count and _sum series",
        )
    declared = override.unit if override else None
    named = unit_from_name(name)
    if not custom:
        scale = default.seconds_per_unit  # type: ignore[union-attr]
        if declared is not None and TIME_UNITS[declared] != scale:
            p.add(
                f"{path}.unit",
                f"{declared} contradicts the preset: {name} records {unit_of(scale)}; remove "
                "unit, or set name too if you mean another histogram",
            )
    else:
        if declared is not None and named is not None and declared != named:
            p.add(
                f"{path}.unit",
                f"{declared} contradicts the metric name {name}, which says {named}; the name "
                "decides the unit of its le bounds — remove unit, or fix the name",
            )
        scale = TIME_UNITS[declared or named or "seconds"]
    if override and override.buckets is not None:
        # Spec buckets are seconds; the plan holds bounds in the metric's unit.
        buckets = tuple(float(decimal_str(b / scale)) for b in override.buckets)
    else:
        assert default is not None
        # The preset's bounds, in the unit of the (possibly renamed) metric.
        factor = default.seconds_per_unit / scale
        buckets = tuple(float(decimal_str(b * factor)) for b in default.buckets)
        if factor == 1:
            buckets = default.buckets
    if override and override.histogram:
        form = override.histogram
    else:
        form = "native" if default and default.native else "classic"
    return HistogramPlan(
        key=key,
        indicator=naming.INDICATOR_LABEL[key],
        metric=name,
        buckets=buckets,
        seconds_per_unit=scale,
        native=form in ("native", "nhcb"),
        matchers=_merge(base, override.selector if override else None),
        also=() if custom or default is None else default.also,
        form=form,
    )


def resolve_all(
    body: ServiceSpec,
    preset: Preset,
    base: tuple[Matcher, ...],
    role: RolePlan | None,
    p: _Problems,
) -> dict[str, HistogramPlan]:
    """Every latency histogram the service has, by indicator key in
    :data:`generator.naming.INDICATOR_LABEL` order (:func:`resolve`), scoped to the role that
    owns it (``spec.roles``); an override the server has no histogram for, and a form the
    declared Prometheus cannot read, reported in ``p``."""
    histograms: dict[str, HistogramPlan] = {}
    for key in naming.INDICATOR_LABEL:
        attr = to_snake(key)
        override = getattr(body.metrics, attr)
        hist = resolve(key, preset, override, base, p)
        if override is not None and hist is None:
            p.add(
                f"spec.metrics.{key}",
                f"server {body.server} has no {key} histogram; give both name and buckets",
            )
        if hist is not None:
            histograms[key] = roles.scope_histogram(role, key, hist)
            declared = override is not None and override.histogram is not None
            path = f"spec.metrics.{key}.histogram" if declared else "spec.prometheus.version"
            error, warning = targets.histogram_problem(hist.form, body.prometheus.version)
            if error is not None:
                p.add(path, f"{key}: {error}")
            if warning is not None:
                p.warn(path, f"{key}: {warning}")
    return histograms


QUANTILES = (0.5, 0.9, 0.99)


def _suffixed(h: HistogramPlan, suffix: str) -> tuple[str, ...]:
    return tuple(name + suffix for name in h.names)


def bucket_rate(h: HistogramPlan, bound: float, version: str, group: tuple[str, ...]) -> str:
    """Requests per second no slower than ``bound`` (metric unit), from a histogram of any form."""
    if h.form == "both":
        return histogram_forms.both_bucket_rate(h, bound, version, RATE_WINDOW, group)
    if h.native:
        hist = sum_rate_any(h.names, h.matchers, RATE_WINDOW, group)
        frac = f"histogram_fraction(0, {decimal_str(bound)}, {hist}) * histogram_count({hist})"
        return f"({frac} >= 0) or 0 * histogram_count({hist})"
    return sum_rate_any(
        _suffixed(h, "_bucket"), (*h.matchers, le_matcher(bound, version)), RATE_WINDOW, group
    )


def count_rate(h: HistogramPlan, group: tuple[str, ...]) -> str:
    """All observations per second of a histogram."""
    if h.form == "both":
        return histogram_forms.both_count_rate(h, RATE_WINDOW, group)
    if h.native:
        return f"histogram_count({sum_rate_any(h.names, h.matchers, RATE_WINDOW, group)})"
    return sum_rate_any(_suffixed(h, "_count"), h.matchers, RATE_WINDOW, group)


def _quantile(h: HistogramPlan, q: float, group: tuple[str, ...]) -> str:
    if h.form == "both":
        expr = histogram_forms.both_quantile(h, q, RATE_WINDOW, group)
        if h.seconds_per_unit != 1:
            expr = f"{expr} * {decimal_str(h.seconds_per_unit)}"
        on = ", ".join(group)
        return f"({expr}) and on ({on}) ({count_rate(h, group)} > 0)"
    if h.native:
        inner = sum_rate_any(h.names, h.matchers, RATE_WINDOW, group)
    else:
        inner = sum_rate_any(_suffixed(h, "_bucket"), h.matchers, RATE_WINDOW, ("le", *group))
    expr = f"histogram_quantile({decimal_str(q)}, {inner})"
    if h.seconds_per_unit != 1:
        expr = f"{expr} * {decimal_str(h.seconds_per_unit)}"
    # No traffic → histogram_quantile returns NaN: record nothing instead.
    on = ", ".join(group)
    return f"({expr}) and on ({on}) ({count_rate(h, group)} > 0)"


def records(plan: ServicePlan) -> list[Rule]:
    """p50/p90/p99 (seconds) of each histogram, by indicator key, as
    ``<groupBy>:model_latency_seconds:quantile_rate5m{indicator, quantile}``; nothing recorded
    at zero traffic."""
    rules: list[Rule] = []
    group = plan.agg_labels
    name = naming.record(plan.group_by, naming.LATENCY, "quantile_rate5m")
    for key in sorted(plan.histograms):
        h = plan.histograms[key]
        for q in QUANTILES:
            rules.append(
                record_rule(
                    plan,
                    name,
                    _quantile(h, q, group),
                    {naming.INDICATOR: h.indicator, naming.QUANTILE: decimal_str(q)},
                )
            )
    return rules


def _native_remedy(h: HistogramPlan) -> str:
    """Which form is missing, and the Prometheus 3 setting that makes it (scrape config
    names at v3.14.0, unchanged since: ``config/config.go``)."""
    how = (
        "convert_classic_histograms_to_nhcb: true in its scrape config"
        if h.form == "nhcb"
        else "scrape_native_histograms: true (a protobuf scrape of a client exposing native "
        "histograms)"
    )
    return (
        f"The {h.form} form of {h.metric} (a native series, no _bucket suffix) is missing: "
        f"Prometheus needs {how}; if {h.metric}_bucket exists instead, the histogram is "
        f"classic (spec.metrics.{h.key}.histogram: classic, or both during a migration)."
    )


def guard(
    plan: ServicePlan, h: HistogramPlan, users: list[tuple[str, float | None]]
) -> list[SignalInput]:
    """What ``ModelSignalMissing`` guards of histogram ``h`` for its ``users`` (reader, bucket
    bound or None for every bucket): its native series, or its ``_count`` and ``_bucket``
    series and the ``le`` bucket of each bound read (a classic or nhcb form, or both)."""
    out: list[SignalInput] = []
    readers = tuple(dict.fromkeys(r for r, _ in users))
    remedy = server_remedy(h.key)
    native = tuple(Source(name, h.matchers) for name in h.names)
    if h.native:
        out.append(
            SignalInput(
                h.key,
                h.metric,
                SERVICE_KEYS,
                (native,),
                (targets_up(plan),),
                readers,
                remedy=_native_remedy(h) + " " + remedy,
            )
        )
        return out
    # A renamed histogram is read under each of its names: any of them will do.
    count = tuple(Source(name + "_count", h.matchers) for name in h.names)
    family = tuple(Source(name + "_bucket", h.matchers) for name in h.names)
    both = h.form == "both"
    out.append(
        SignalInput(
            h.key,
            h.metric if both else count[0].metric,
            SERVICE_KEYS,
            ((*native, *count),) if both else (count,),
            (targets_up(plan),),
            readers,
            remedy=(
                f"Neither form of {h.metric} exists: no native series {h.metric} and no "
                f"classic {h.metric}_count. " + remedy
                if both
                else remedy
            ),
        )
    )
    # Buckets exist beside their _count: missing while the count is there, they are wrong.
    out.append(
        SignalInput(
            h.key,
            family[0].metric,
            SERVICE_KEYS,
            (family,),
            (targets_up(plan), Condition(count)),
            readers,
            remedy=f"{h.metric}_count exists without buckets: is {h.metric} a native histogram or a "
            f"summary? Set spec.metrics.{h.key}.histogram, or name a classic histogram.",
        )
    )
    for bound in sorted({b for _, b in users if b is not None}):
        le = le_matcher(bound, plan.le_version)
        out.append(
            SignalInput(
                h.key,
                family[0].metric,
                SERVICE_KEYS,
                (tuple(Source(f.metric, (*h.matchers, le)) for f in family),),
                (targets_up(plan), Condition(count), Condition(family)),
                tuple(r for r, b in users if b == bound),
                le=decimal_str(bound),
                remedy=f"The histogram has buckets, but not le={decimal_str(bound)}: its buckets "
                f"differ from spec.metrics.{h.key}.buckets (obsgen verify lists them).",
            )
        )
    return out
