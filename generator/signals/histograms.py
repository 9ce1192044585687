"""The latency histograms (``spec.metrics.<indicator>``: request duration, time to first
token, inter-token latency, queue time, time per output token), resolved into
``ServicePlan.histograms`` by indicator key: the series ``ModelSignalMissing`` guards for the
alerts and SLOs reading one (:func:`guard`). Who reads which histogram and bound: the
families' ``histogram_reads`` and the SLOs (:func:`generator.builders.guard_rules.signal_inputs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.parts.guard_inputs import (
    SERVICE_KEYS,
    Condition,
    SignalInput,
    Source,
    server_remedy,
    targets_up,
)
from generator.promql import le_matcher
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.plan import ServicePlan
    from generator.plan_types import HistogramPlan


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
