"""What one alert family is: :class:`Family`, everything obsgen knows about one
``spec.alerts`` entry, from its defaults to its dashboard panels.

It imports no builder, only the signals (:mod:`generator.signals`) a family reads, so
:mod:`generator.plan` can read the defaults of every registered family
(:data:`generator.families.FAMILIES`) without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from generator.signals import BY_KEY
from generator.signals.base import Needs as Needs
from generator.spec_alerts import AlertBase, WindowedAlert

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.grafana_json import PanelDef
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import ServicePlan
    from generator.plan_types import HistogramPlan, _Problems
    from generator.release_bounds import Releases
    from generator.spec import ServiceSpec


class Role(StrEnum):
    """What an alert says about its service, which decides what holds it back."""

    TARGETS_DOWN = "targets-down"
    """The service's targets cannot be scraped: every signal read from them is blind."""
    SYMPTOM = "symptom"
    """Read from the model server's own metrics (latency, errors, queue, SLO burn)."""
    GUARD = "guard"
    """An input the alerts read has vanished, or replicas are missing: explained by
    ModelTargetDown while the targets are down."""
    RESOURCE = "resource"
    """Container memory, OOM kills and crash loops (cAdvisor, kube-state-metrics): often the
    *cause* of targets being down, so never held back by it."""
    GPU = "gpu"
    """Read from the NVML sidecar of one pod."""
    GPU_EXPORTER_DOWN = "gpu-exporter-down"
    """The pod's NVML sidecar is down or cannot read NVML: its GPU alerts are blind."""


@dataclass
class Resolving:
    """One family's alert while :func:`generator.plan_alerts._resolve_alerts` resolves it.

    Attributes:
        body: the spec's ``spec``; ``given``: its ``spec.alerts`` entry (None: not written).
        path: ``spec.alerts.<field>``, for problems; ``problems``: where they are reported.
        histograms: the plan's latency histograms by indicator key.
        releases: the declared server release line, for per-release bucket checks.
        params: the alert's parameters (the family's defaults, then the spec's), changed in
            place by the family's hooks.
    """

    body: ServiceSpec
    given: Any
    path: str
    problems: _Problems
    histograms: Mapping[str, HistogramPlan]
    releases: Releases | None
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HistogramRead:
    """A latency histogram an enabled alert reads: ``key`` (its ``plan.histograms`` key,
    ``requestDuration``), the ``reader`` alert's name, and the bucket bound it selects with
    ``le`` (in the histogram's unit; None where it reads every bucket, a quantile)."""

    key: str
    reader: str
    bound: float | None = None


def _no_panels(plan: ServicePlan) -> list[PanelDef]:
    return []


def _no_histograms(plan: ServicePlan) -> list[HistogramRead]:
    return []


def _no_records(plan: ServicePlan) -> list[Rule]:
    return []


def _no_inputs(plan: ServicePlan) -> list[SignalInput]:
    return []


def _no_queries(plan: ServicePlan, rec: Callable[..., str]) -> dict[str, str | None]:
    return {}


@dataclass(frozen=True)
class Family:
    """One alert family (a ``spec.alerts`` key), listed once in :data:`generator.families.FAMILIES`.

    Attributes:
        key: its key in ``ServicePlan.alerts`` and :data:`generator.plan.ALERT_DEFAULTS`
            (snake case of the spec field: ``kv_cache``).
        spec_field: its ``spec.alerts`` field as users write it (``kvCache``).
        spec_model: the model of that field (:class:`generator.spec_alerts.AlertBase` and the
            family's parameters; default the switches alone, with ``window`` when ``windowed``):
            ``spec.Alerts`` is assembled from the families' models
            (:func:`generator.spec_alerts.alerts_model`).
        alerts: the alert names it emits (``ModelKVCacheNearFull``), each with its
            ``templates/alerts/<name>.j2`` and ``templates/runbooks/<name>.md.j2``.
        for_ms: default ``for`` (ms, 0 for none); ``severity``: default severity.
        params: default parameters (``AlertPlan.params``; durations in ms, ratios 0–1).
        role: its routing role (:mod:`generator.builders.alertmanager_routing`).
        group: the rule group it belongs to (``traffic``: ``obsgen.<service>.traffic``).
        rules: ``plan -> [alert rule]``, empty when the plan does not enable it.
        cases: ``plan -> [promtool test group]``: it fires on the failure and stays quiet on
            a healthy (and, where it differs, an idle) service; empty when not enabled.
        needs: the series it exists for, or None (always available).
        sidecar: it reads the NVML sidecar's series: left out of plans without
            ``spec.gpu.exporter`` (:mod:`generator.families.gpu`).
        inputs: ``plan -> [SignalInput]``: the series its alerts read, for ``ModelSignalMissing``
            (:func:`generator.builders.guard_rules.signal_inputs`), empty when not enabled.
        row: the dashboard row its panels go in (``traffic``, ``latency``, ``saturation``);
            ``rank``: their order among the families' panels of that row (the row decides
            where among its own panels the families' go).
        panels: ``plan -> [PanelDef]``: its dashboard panels (drawn also when disabled).
        runbook_queries: ``(plan, rec) -> {name: query or None}``: the ``q`` entries its
            runbook page reads; ``rec(record, *matchers)`` selects a recorded series.
        unavailable: ``Resolving -> why or None``: why the service cannot have the alert
            (left out, with that warning where the spec enables it), beside ``needs``.
        inherit: ``Resolving``: fills parameters from the rest of the spec before the spec's
            own ``spec.alerts`` entry applies (``slowRequests`` takes a latency SLO's threshold).
        check: ``Resolving -> keep``: the family's own checks of its resolved parameters
            (reported in ``problems``); False leaves the alert out.
        default_on: ``spec -> on``: whether a spec without its ``spec.alerts`` entry has it
            (None: always; ``lambda body: False``: opt-in).
        windowed: its condition is counted within a window (``spec.alerts.<field>.window``,
            ``params["window_ms"]``; default :data:`generator.plan.WINDOW_FACTOR` × ``for``).
        signals: the keys of the signals it reads (:data:`generator.signals.SIGNALS`): without
            ``needs`` the first one's is used, and without ``inputs`` the signals' guards
            (:attr:`generator.signals.base.Signal.guard`) while the family is enabled.
        histogram_reads: ``plan -> [HistogramRead]``: the latency histograms its alerts read
            while enabled, and their bounds: ``ModelSignalMissing`` guards them
            (:func:`generator.builders.guard_rules.signal_inputs`) and ``obsgen verify``
            checks each bound is a bucket of the server's.
        records: ``plan -> [recording rule]``: records of its own, in the ``traffic`` group
            after the latency histograms' (:func:`generator.builders.service_rules.latency_records`),
            empty when not enabled.
    """

    key: str
    spec_field: str
    alerts: tuple[str, ...]
    for_ms: int
    severity: str
    params: Mapping[str, Any]
    role: Role
    group: str
    rules: Callable[[ServicePlan], list[Rule]]
    cases: Callable[[ServicePlan], list[dict[str, Any]]]
    needs: Needs | None = None
    sidecar: bool = False
    inputs: Callable[[ServicePlan], list[SignalInput]] = _no_inputs
    row: str = ""
    rank: int = 0
    panels: Callable[[ServicePlan], list[PanelDef]] = _no_panels
    runbook_queries: Callable[[ServicePlan, Callable[..., str]], dict[str, str | None]] = (
        _no_queries
    )
    signals: tuple[str, ...] = ()
    histogram_reads: Callable[[ServicePlan], list[HistogramRead]] = _no_histograms
    records: Callable[[ServicePlan], list[Rule]] = _no_records
    unavailable: Callable[[Resolving], str | None] | None = None
    inherit: Callable[[Resolving], None] | None = None
    check: Callable[[Resolving], bool] | None = None
    default_on: Callable[[ServiceSpec], bool] | None = None
    windowed: bool = False
    spec_model: type[AlertBase] = AlertBase

    def __post_init__(self) -> None:
        if self.windowed and self.spec_model is AlertBase:
            object.__setattr__(self, "spec_model", WindowedAlert)
        read = tuple(BY_KEY[key] for key in self.signals)
        if self.needs is None and read:
            object.__setattr__(self, "needs", read[0].needs)
        if self.inputs is _no_inputs and read:
            key, readers = self.key, self.alerts

            def guarded(plan: ServicePlan) -> list[SignalInput]:
                if key not in plan.alerts:
                    return []
                return [item for signal in read for item in signal.guard(plan, readers)]

            object.__setattr__(self, "inputs", guarded)

    @property
    def defaults(self) -> tuple[int, str, dict[str, Any]]:
        """(``for`` in ms, severity, a copy of the params): an entry of ``ALERT_DEFAULTS``."""
        return self.for_ms, self.severity, dict(self.params)
