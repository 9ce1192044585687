"""Shared pieces of the GPU health families (ECC, row remapping, NVLink, PCIe, Xid tiers):
a counter that rose, a flag that is set and a rate above a limit, each per GPU, with their
firing and quiet cases on either source (:mod:`generator.parts.gpu_series`), and the guard
of a sidecar reading (:func:`sidecar_input`).

Health readings are the sidecar's names (nvml_exporter/README.md, Metrics); under dcgm the
records of :mod:`generator.families.dcgm` hold them. Rates are per minute over 10m.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator import gap_bridge
from generator.families import gpu
from generator.parts import gpu_series
from generator.parts.guard_inputs import Source
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    Series,
    after_for,
    expected_alert,
    family_case,
    healthy,
)
from generator.promql import Matcher, by
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import ServicePlan

WINDOW = "10m"
Fault = tuple[str, str, str | None]
"""(sidecar metric, promtool values, its ``error_type``/``counter`` label or None)."""


def rose(plan: ServicePlan, reads: tuple[tuple[str, tuple[Matcher, ...]], ...]) -> str:
    """Any of the counters ``reads`` ((metric, matchers)) rose within :data:`WINDOW`, per GPU,
    or since their last sample before it when a hole in the samples spans it
    (:mod:`generator.gap_bridge`)."""
    labels = by(plan.keeping(*gpu.GPU_LABELS))
    span = gap_bridge.bridge(plan.max_gap_ms)
    out = []
    for metric, m in reads:
        series = gpu.read(plan, metric, *m)
        out.append(f"sum{labels} (increase({series}[{WINDOW}])) > 0")
        if span is not None:
            out.append(f"sum{labels} ({gap_bridge.rose(series, WINDOW, span)}) > 0")
    return " or ".join(out)


def flagged(plan: ServicePlan, metric: str) -> str:
    """The 0/1 gauge ``metric`` is 1, per GPU."""
    return f"max{by(plan.keeping(*gpu.GPU_LABELS))} ({gpu.read(plan, metric)}) == 1"


def per_minute(plan: ServicePlan, metric: str, limit: float, *m: Matcher) -> str:
    """The counter ``metric`` rose faster than ``limit`` a minute over :data:`WINDOW`, per GPU."""
    labels = by(plan.keeping(*gpu.GPU_LABELS))
    rate = f"sum{labels} (rate({gpu.read(plan, metric, *m)}[{WINDOW}])) * 60"
    return f"{rate} > {decimal_str(limit)}"


def sidecar_input(
    plan: ServicePlan,
    signal: str,
    alert: str,
    metric: str,
    matchers: tuple[Matcher, ...],
    readings: tuple[str, ...],
    what: str,
) -> SignalInput:
    """The guard of the sidecar's ``metric`` (``matchers`` added) on each GPU that answers
    NVML, read by ``alert``: excused where the sidecar reports one of ``readings``
    unsupported (nvml_exporter/README.md, Metrics); ``what`` names the reading."""
    return gpu.reading_input(
        plan,
        signal,
        ((Source(metric, (*plan.gpu_matchers, *matchers)),),),
        alert,
        gpu.unsupported(plan, *readings),
        remedy=f"The GPU answers NVML but the sidecar exports no {what}, {gpu.NOT_SAID} "
        "A sidecar image older than this reading exports none at all: update nvml-exporter.",
    )


def cases(
    plan: ServicePlan,
    key: str,
    rule: Rule,
    faults: list[Fault],
    quiet: list[tuple[str, list[Fault]]] | None = None,
) -> list[dict[str, Any]]:
    """``rule`` fires on a healthy service whose GPU reads ``faults`` and stays quiet on a
    healthy one and on each ``quiet`` (name, faults) control; checked at
    :func:`generator.parts.promtool_series.after_for`."""
    alert = rule["alert"]
    at = after_for(plan, key)

    def series(items: list[Fault]) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)])
        for metric, values, label in items:
            gpu_series.put(plan, s, metric, values, label)
        return s

    expected = [expected_alert(rule, gpu_series.alert_labels(plan), None)]
    out = [
        family_case(plan, f"{alert} fires", series(faults), alert, expected, at),
        family_case(plan, f"{alert} stays quiet", series([]), alert, [], at),
    ]
    out += [
        family_case(plan, f"{alert}: {name} stays quiet", series(items), alert, [], at)
        for name, items in quiet or []
    ]
    return out
