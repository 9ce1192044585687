"""Shared pieces of the GPU health families (ECC, row remapping, NVLink, PCIe, Xid tiers):
a counter that rose, a flag that is set and a rate above a limit, each per GPU, with their
firing and quiet cases on either source (:mod:`generator.parts.gpu_series`), the guard
of a sidecar reading (:func:`sidecar_input`) and :class:`Reading`, a whole family on one reading.

Health readings are the sidecar's names (nvml_exporter/README.md, Metrics); under dcgm the
records of :mod:`generator.families.dcgm` hold them. Rates are per minute over 10m.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import dcgm_fields, gap_bridge
from generator.families import dcgm, gpu
from generator.families.base import Family, Role
from generator.parts import gpu_series
from generator.parts.common import alert_rule
from generator.parts.guard_inputs import Source
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    Series,
    after_for,
    expected_alert,
    family_case,
)
from generator.promql import Matcher, by
from generator.signals.healthy import healthy
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


@dataclass(frozen=True)
class Reading:
    """A GPU health family on one sidecar reading: one alert rule (``expr``), fired by
    ``faults`` and quiet on a healthy GPU and each ``quiet`` control, the guard of the reading
    (sidecar, or the dcgm-exporter ``dcgm_field``) and the runbook series ``runbook``
    ((query name, sidecar metric)); :meth:`family` is its ``FAMILY``.

    ``matchers`` narrow the guarded sidecar metric (a ``cause``); ``readings`` are the sidecar's
    unsupported-reading names that excuse its guard, ``what`` names it in the guard's message;
    ``dcgm_excused_by``: a dcgm field whose series excuses the dcgm guard (Ampere's row
    remapper excuses page retirement).
    """

    key: str
    spec_field: str
    alert: str
    rank: int
    expr: Callable[[ServicePlan], str]
    faults: tuple[Fault, ...]
    signal: str
    metric: str
    readings: tuple[str, ...]
    what: str
    dcgm_field: dcgm_fields.Field
    runbook: tuple[tuple[str, str], ...]
    matchers: tuple[Matcher, ...] = ()
    quiet: tuple[tuple[str, tuple[Fault, ...]], ...] = ()
    dcgm_excused_by: dcgm_fields.Field | None = None
    for_ms: int = 0
    severity: str = "warning"

    def rules(self, plan: ServicePlan) -> list[Rule]:
        """One rule, ``expr`` under the plan's ``for`` and severity; none when not enabled."""
        alert = plan.alerts.get(self.key)
        if alert is None:
            return []
        return [alert_rule(plan, self.alert, self.expr(plan), alert.for_ms, alert.severity)]

    def cases(self, plan: ServicePlan) -> list[dict[str, Any]]:
        """:func:`cases` of the rule with ``faults`` and the ``quiet`` controls."""
        if self.key not in plan.alerts:
            return []
        quiet = [(name, list(items)) for name, items in self.quiet]
        return cases(plan, self.key, self.rules(plan)[0], list(self.faults), quiet)

    def inputs(self, plan: ServicePlan) -> list[SignalInput]:
        """The reading of each GPU that answers NVML (:func:`sidecar_input`); under dcgm, the
        field (:func:`generator.families.dcgm.field_input`), excused by ``dcgm_excused_by``."""
        if self.key not in plan.alerts:
            return []
        if gpu.dcgm(plan):
            base = dcgm.field_input(plan, self.signal, (self.dcgm_field,), self.alert)
            if self.dcgm_excused_by is None:
                return [base]
            return [dataclasses.replace(base, excused=dcgm.sources(plan, self.dcgm_excused_by))]
        return [
            sidecar_input(
                plan, self.signal, self.alert, self.metric, self.matchers, self.readings, self.what
            )
        ]

    def runbook_queries(
        self, plan: ServicePlan, record: Callable[..., str]
    ) -> dict[str, str | None]:
        """``{name: the GPU's series of metric}`` for each ``runbook`` entry."""
        return {name: gpu.runbook_series(plan, metric) for name, metric in self.runbook}

    def family(self) -> Family:
        """The family: GPU role and rule group, read from the sidecar, drawn in the GPU row."""
        return Family(
            key=self.key,
            spec_field=self.spec_field,
            alerts=(self.alert,),
            for_ms=self.for_ms,
            severity=self.severity,
            params={},
            role=Role.GPU,
            group="gpu",
            rules=self.rules,
            cases=self.cases,
            sidecar=True,
            inputs=self.inputs,
            row="gpu",
            runbook_queries=self.runbook_queries,
            rank=self.rank,
        )
