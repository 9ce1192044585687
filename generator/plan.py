"""Resolve a validated spec into a :class:`ServicePlan`: presets, defaults and checks applied.

This is the only place presets and defaults apply: builders read plans, never specs or presets,
so two builders cannot resolve a default differently. Everything a builder needs is decided
here (metric names, selectors, bucket bounds, burn-rate tiers, alert thresholds); cross-field
checks pydantic cannot express raise :class:`~generator.errors.ObsgenError` naming the field.

Size: the plan types and the one resolution pass that fills them, whose checks share one
problem collector and the preset; the alert families' own parts live in generator/families/.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, TypeVar

from pydantic.alias_generators import to_camel, to_snake

from generator import autoscaling, models, naming, roles, slo, targets
from generator import failures as failures_mod
from generator.errors import Diagnostic, Level, ObsgenError
from generator.families import FAMILIES
from generator.models import ModelsPlan
from generator.presets import (
    PRESETS,
    GaugeDef,
    HistogramDef,
    Preset,
    PresetError,
    layouts,
    select_preset,
)
from generator.presets.model import metric_names, prefixed
from generator.promql import (
    LEGACY_METRIC_NAME,
    Matcher,
    equals,
    label_name_problem,
    metric_name_problem,
)
from generator.release_bounds import Releases, Test
from generator.roles import RolePlan
from generator.spec import (
    INDICATOR_ALIASES,
    SLO,
    Activator,
    Autoscaling,
    BurnRateTier,
    FailureDefinition,
    MetricOverride,
    Metrics,
    ModelServiceSpec,
    PrometheusSettings,
)
from generator.units import TIME_UNITS, decimal_str, format_duration_ms, unit_from_name, unit_of

T = TypeVar("T")


@dataclass(frozen=True)
class HistogramPlan:
    """A latency histogram, resolved.

    Attributes:
        key: spec metric key (``requestDuration``); ``indicator``: label value (``e2e``).
        metric: base metric name; series are ``<metric>_bucket`` etc.
        buckets: upper bounds in the metric's unit; ``seconds_per_unit`` converts to seconds.
        native: the rules read only the native series (``histogram_*`` functions, no
            ``_bucket``): ``form`` native or nhcb.
        form: ``spec.metrics.<key>.histogram``: ``classic`` (``_bucket``/``_count`` series),
            ``native`` (exponential buckets: thresholds need no bound), ``nhcb`` (native with
            the classic bounds, Prometheus 3's ``convert_classic_histograms_to_nhcb``: thresholds
            must be bounds) or ``both`` (a migration: per series the native form where it
            exists, else the classic; thresholds must be bounds). docs/spec.md, "Histogram forms".
        matchers: the series selector.
        also: the histogram's names in other releases (a preset rename); the rules read
            ``metric`` and, per series where it is absent, these.
    """

    key: str
    indicator: str
    metric: str
    buckets: tuple[float, ...]
    seconds_per_unit: float
    native: bool
    matchers: tuple[Matcher, ...]
    also: tuple[str, ...] = ()
    form: str = "classic"

    @property
    def bounded(self) -> bool:
        """Whether a threshold must be one of ``buckets`` (every form but exponential native)."""
        return self.form != "native"

    @property
    def names(self) -> tuple[str, ...]:
        """``metric`` then ``also``: every name the rules read, in order of preference."""
        return (self.metric, *self.also)

    def bound_for(self, seconds: float) -> float | None:
        """The bucket bound (metric unit) that ``seconds`` names, or None.

        ``seconds`` is converted to the metric's unit with ``seconds_per_unit`` (Triton's
        ``200ms`` → bound ``200``). An exactly equal bound (as floats) wins. Spec durations
        are whole milliseconds, so a bound that is not (TGI's ``0.0001 × 1.5^k`` s) is named by
        its value rounded to the millisecond, when that rounding moves it by at most 1 %:
        ``1122ms`` names 1.12232… s, while ``1ms`` never names a 1.2 ms bound.
        """
        wanted = seconds / self.seconds_per_unit
        for bound in self.buckets:
            if abs(bound - wanted) <= 1e-9 * max(abs(wanted), 1.0):
                return bound
        for bound in self.buckets:
            bound_s = bound * self.seconds_per_unit
            if (
                round(bound_s * 1000) == round(seconds * 1000)
                and abs(bound_s - seconds) <= 0.01 * bound_s
            ):
                return bound
        return None

    def neighbours(self, seconds: float) -> tuple[float | None, float | None]:
        """The bucket bounds (seconds) just below and just above ``seconds``."""
        bounds = [b * self.seconds_per_unit for b in self.buckets]
        i = bisect.bisect_left(bounds, seconds)
        below = bounds[i - 1] if i > 0 else None
        above = bounds[i] if i < len(bounds) else None
        return below, above


@dataclass(frozen=True)
class FailureSourcePlan:
    """One more failure source beside the request counter: ``name{matchers, error_matchers,
    exclude_matchers}`` counts failed requests (``exclude_matchers`` negated); ``field``
    the spec path it comes from (``spec.failure.engine``, ``spec.failure.sources[0]``)."""

    name: str
    matchers: tuple[Matcher, ...]
    error_matchers: tuple[Matcher, ...]
    exclude_matchers: tuple[Matcher, ...]
    field: str

    @property
    def failures(self) -> tuple[Matcher, ...]:
        """Every matcher of the failed requests' series."""
        return (*self.matchers, *self.error_matchers, *self.exclude_matchers)


@dataclass(frozen=True)
class RequestsPlan:
    """Request counters: one counter with ``error_matchers``, or success + ``failure_name``.

    ``exclude_matchers`` (negated) drop failures that are not the service's from the failed
    requests (of ``failure_name`` where set); ``sources`` are further failure sources,
    combined with the counter's failures as ``combine`` says (``max`` or ``sum``):
    docs/spec.md, "What a failure is"."""

    name: str
    matchers: tuple[Matcher, ...]
    error_matchers: tuple[Matcher, ...]
    failure_name: str | None = None
    exclude_matchers: tuple[Matcher, ...] = ()
    sources: tuple[FailureSourcePlan, ...] = ()
    combine: str = "max"


@dataclass(frozen=True)
class GaugePlan:
    """A gauge with its selector; ``scale`` converts to obsgen's unit (ratio 0–1 or count).

    ``also``: the gauge's names in other releases (a preset rename); the rules read ``name``
    and, per series where it is absent, these.
    """

    name: str
    matchers: tuple[Matcher, ...]
    scale: float = 1.0
    denominator: tuple[Matcher, ...] | None = None
    also: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """``name`` then ``also``: every name the rules read, in order of preference."""
        return (self.name, *self.also)


@dataclass(frozen=True)
class MeanLatencyPlan:
    """Mean latency (seconds) = rate(``sum_name``) / rate(``count_name``) × ``seconds_per_unit``."""

    key: str
    indicator: str
    sum_name: str
    count_name: str
    seconds_per_unit: float
    matchers: tuple[Matcher, ...]


@dataclass(frozen=True)
class CounterPlan:
    """A plain counter (tokens) with its selector."""

    name: str
    matchers: tuple[Matcher, ...]


@dataclass(frozen=True)
class PrefixCachePlan:
    """The prefix cache's hit ratio source: counters ``hits`` / ``queries`` (names across a
    rename, preferred first) or a 0–1 ``gauge``; ``matchers`` select the counters."""

    matchers: tuple[Matcher, ...]
    hits: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()
    gauge: GaugePlan | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """Every metric name the rules read."""
        return (*self.hits, *self.queries, *(self.gauge.names if self.gauge else ()))


@dataclass(frozen=True)
class GoodputTargetPlan:
    """One target of a goodput SLO, resolved: a request is good for it when its ``histogram``
    observation is no slower than ``bound`` (metric unit; ``threshold_seconds`` in seconds)."""

    histogram: HistogramPlan
    threshold_seconds: float
    bound: float


@dataclass(frozen=True)
class SLOPlan:
    """One SLO, resolved.

    Attributes:
        kind: ``availability``, ``latency`` or ``goodput`` (``targets``: every latency target
            a good request meets; :mod:`generator.builders.goodput_rules`).
        objective: percent (99.9); ``error_budget``: allowed bad ratio (0.001).
        histogram/threshold_bound: for latency SLOs, the histogram and the bound (metric unit)
            equal to the threshold.
        tiers: burn-rate tiers with factors (empty when alerting is disabled).
        budget_levels: shares of the budget left (descending) at which ``ErrorBudgetLow``
            fires; empty when alerting is disabled.
        min_events: events needed in a tier's long window before it may fire.
        keep_firing_for_ms: how long a burn-rate alert keeps firing after its condition
            clears (``keep_firing_for``; 0 for none).
    """

    name: str
    kind: str
    objective: float
    error_budget: Fraction
    window_ms: int
    histogram: HistogramPlan | None
    threshold_seconds: float | None
    threshold_bound: float | None
    tiers: tuple[slo.Tier, ...]
    min_events: int
    description: str | None
    budget_levels: tuple[float, ...] = ()
    keep_firing_for_ms: int = 0
    targets: tuple[GoodputTargetPlan, ...] = ()
    path: str = ""  # its field path in the spec (``spec.slos[2]``), for warnings


@dataclass(frozen=True)
class AlertPlan:
    """One enabled alert family: ``for`` (ms, 0 for none), severity and its parameters."""

    key: str
    for_ms: int
    severity: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ActivatorPlan:
    """Where requests wait outside the model's pods while none is ready
    (``spec.scaleToZero.activator``).

    Attributes:
        source: ``keda-http``, ``knative`` or ``custom``.
        names: gauge names of the requests it holds, newest release first (each read with
            ``matchers``; the first that has series counts, :mod:`generator.builders.replicas`).
        matchers: its series' label matchers that select this service's requests.
    """

    source: str
    names: tuple[str, ...]
    matchers: tuple[Matcher, ...]


@dataclass(frozen=True)
class InstallPlan:
    """How the service is installed into kube-prometheus-stack and its own chart.

    Attributes:
        release: kube-prometheus-stack Helm release (the ``release`` label its Prometheus selects).
        pod_labels: sorted ``(key, value)`` pairs selecting the model's pods (PodMonitors).
        metrics_port: the model container's metrics port, by name or number.
        metrics_path: HTTP path of the model's metrics (``/metrics``).
        exporter_image: NVML sidecar image reference.
        visible_devices: ``NVIDIA_VISIBLE_DEVICES`` of the sidecar (``visible-devices``).
        gpu_claim: pod resource-claim name shared with the model (``shared-claim``).
    """

    release: str
    pod_labels: tuple[tuple[str, str], ...]
    metrics_port: str | int
    metrics_path: str
    exporter_image: str
    visible_devices: str
    gpu_claim: str


@dataclass(frozen=True)
class ServicePlan:
    """Everything the builders need for one service; built only by :func:`resolve`.

    ``warnings`` (level WARNING) are things the spec probably did not mean but that do not
    stop a render: a default alert left out because it could never fire, an alert configured
    for a signal the server does not export, relative runbook links.

    Pods: ``container_matchers`` (namespace and container) select the model's containers in
    cAdvisor and kube-state-metrics series; which pods belong to the service is decided by
    :mod:`generator.builders.pods` from the owner series of ``workload_kind`` /
    ``deployment_name`` (or the scrape targets' ``pod`` label), never from pod names.
    ``gpu_matchers`` select the NVML sidecar's series by the ``job`` label its PodMonitor sets.
    """

    name: str
    team: str
    source: str
    server: str
    preset: Preset
    matchers: tuple[Matcher, ...]
    group_by: tuple[str, ...]
    cluster_label: str | None
    le_version: str
    scrape_interval_ms: int
    evaluation_interval_ms: (
        int  # the SLO rule groups' interval (spec.prometheus.evaluationInterval)
    )
    histograms: Mapping[str, HistogramPlan]
    requests: RequestsPlan
    queue_depth: GaugePlan | None
    running_requests: GaugePlan | None
    kv_cache_usage: GaugePlan | None
    prompt_tokens: CounterPlan | None
    generation_tokens: CounterPlan | None
    preemptions: CounterPlan | None
    prefix_cache: PrefixCachePlan | None
    model_label: str | None
    slos: tuple[SLOPlan, ...]
    alerts: Mapping[str, AlertPlan]
    gpu_exporter: bool
    gpu_visibility: str
    gpu_values_path: str
    gpu_matchers: tuple[Matcher, ...]
    deployment_name: str
    workload_kind: str
    container: str
    replicas: int  # the fewest replicas spec.deployment.replicas allows (a count, or min)
    replicas_max: int  # the most (the count, or max)
    startup_grace_ms: int  # spec.scaleToZero.startupGrace
    activator: ActivatorPlan | None
    memory_limit_bytes: int | None
    container_matchers: tuple[Matcher, ...]
    namespace: str | None
    runbook_base_url: str | None
    grafana_url: str | None
    mean_latencies: tuple[MeanLatencyPlan, ...] = ()
    install: InstallPlan | None = None
    retention_ms: int | None = None  # spec.prometheus.retention, when declared
    metric_prefix: str = ""  # spec.metrics.prefix: already on every preset name above
    # spec.prometheus.queryOffset (0: none): every rule group's query_offset.
    query_offset_ms: int = 0
    # obsgen.yaml ruler.deduplication: rules: the labels the rules collapse copies over, and
    # the replica labels among them (generator.dedup); () leaves every expression as written.
    copy_labels: tuple[str, ...] = ()
    replica_labels: tuple[str, ...] = ()
    # spec.prometheus.maxGap (0: none): the longest hole in a counter's samples the SLO
    # increments bridge (generator.promql.increments).
    max_gap_ms: int = 0
    # Metric names read outside the legacy set (Prometheus 3 only; quoted in PromQL).
    utf8_names: tuple[str, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()
    # spec.gpu.exporter ("none", "sidecar", "dcgm"); with dcgm, gpu_matchers select
    # dcgm-exporter's targets and dcgm_honor_labels is spec.gpu.dcgm.honorLabels.
    gpu_source: str = "none"
    dcgm_honor_labels: bool = False
    # spec.slos[] with targets: goodput SLOs (generator.builders.goodput_rules), kept out of
    # ``slos`` so the availability/latency builders never see them.
    goodput: tuple[SLOPlan, ...] = ()
    # Speculative decoding's (draft tokens, accepted tokens) counters, None where the preset
    # has none (generator.families.spec_decode).
    spec_decode: tuple[CounterPlan, CounterPlan] | None = None
    # spec.autoscaling (None: no ScaledObject); checked against the alerts by
    # generator.autoscaling.problems.
    autoscaling: Autoscaling | None = None
    # The name of this service's files and objects when another spec of the render shares its
    # name (naming.qualified_stem, set by generator.render.load_plans); "" means the name.
    file_stem: str = ""
    # spec.roles (None: one role): each SLI's series read from its owning role only.
    roles: RolePlan | None = None
    # spec.models (None: one SLI per service): the models with their own SLIs
    # (generator.builders.model_slo_rules).
    models: ModelsPlan | None = None
    derived: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)
    """Values built from this plan alone, kept by :meth:`derive`; not part of the plan's
    identity or of its cache key (``repr``), and not carried over by ``dataclasses.replace``."""

    @property
    def stem(self) -> str:
        """What names this service's files, rule groups and Kubernetes objects: ``name``, or
        ``<name>--<namespace>`` when the render holds another service of this name in another
        namespace (:func:`generator.naming.qualified_stem`). The ``service`` label stays
        ``name``."""
        return self.file_stem or self.name

    def derive(self, key: str, build: Callable[[], T]) -> T:
        """``build()`` the first time ``key`` is asked for, the kept value after: for values
        the builders ask for many times per plan (its alerting rules, its runbook context)."""
        if key not in self.derived:
            self.derived[key] = build()
        value: T = self.derived[key]
        return value

    @property
    def reads_native(self) -> bool:
        """Whether a histogram of the plan is native: its generated tests need promtool 3."""
        return any(h.native for h in self.histograms.values())

    @property
    def needs_promtool3(self) -> tuple[str, ...]:
        """What of the plan promtool 2 cannot read: ``UTF-8 names``, ``native histograms``."""
        return (
            *(("UTF-8 names",) if self.utf8_names else ()),
            *(("native histograms",) if self.reads_native else ()),
        )

    @property
    def agg_labels(self) -> tuple[str, ...]:
        """Labels kept when summing a service's series: ``namespace``, ``groupBy`` and the
        cluster label (``spec.prometheus.clusterLabel``, when set), sorted."""
        return self.keeping("namespace", *self.group_by)

    def keeping(self, *labels: str) -> tuple[str, ...]:
        """``labels`` plus the cluster label when the spec sets one, sorted and de-duplicated:
        the labels of every ``by (…)`` and ``on (…)`` clause, so that no aggregation or join
        of a multi-cluster engine adds up or matches series of different clusters."""
        cluster = (self.cluster_label,) if self.cluster_label else ()
        return tuple(sorted({*labels, *cluster}))

    def runbook_url(self, alert: str) -> str:
        """``runbook_url`` annotation for ``alert``: this service's page of it (its checks
        first), ``<base>/<service>/<Alert>.md`` with base ``metadata.runbookBaseUrl`` or
        ``docs/runbooks``."""
        base = self.runbook_base_url or naming.RUNBOOKS_DIR
        return f"{base.rstrip('/')}/{self.stem}/{alert}.md"

    def dashboard_url(self) -> str:
        """``dashboard_url`` annotation: the service dashboard (relative to Grafana if no URL);
        with a cluster label, opened on the alert's cluster (a template Prometheus expands)."""
        base = (self.grafana_url or "").rstrip("/")
        url = f"{base}/d/{naming.dashboard_uid(self.name, self.namespace, self.cluster_label)}/{self.name}"
        if self.cluster_label:
            url += f"?var-cluster={{{{ $labels.{self.cluster_label} }}}}"
        return url


# Alert defaults: (for, severity, params). Thresholds are sensible starting points for an
# LLM service; the spec overrides each. Durations in ms, ratios 0–1. The families of
# generator/families/ hold their own; the input guards, which read every family's inputs, are
# not a family module.
_LEGACY_DEFAULTS: dict[str, tuple[int, str, dict[str, Any]]] = {
    # Input guards: at least SIGNAL_MISSING_MIN_SCRAPES scrape intervals (resolve() raises it).
    "signal_missing": (900_000, "warning", {"ignore": ()}),
}
ALERT_DEFAULTS: dict[str, tuple[int, str, dict[str, Any]]] = {
    **{f.key: f.defaults for f in FAMILIES},
    **_LEGACY_DEFAULTS,
}
# Shares of an SLO's error budget left at which ErrorBudgetLow tickets (spec.slos[].alerting).
BUDGET_LEVELS = (0.5, 0.25)
# spec.metrics keys that are not latency histograms (no buckets, unit or histogram type).
_NOT_HISTOGRAMS = (
    "requests",
    "failures",
    "queueDepth",
    "runningRequests",
    "kvCacheUsage",
    "promptTokens",
    "generationTokens",
    "preemptions",
)
_GPU_ALERTS = {f.key for f in FAMILIES if f.sidecar}
# Alerts on the time a condition held within a window (spec.WindowedAlert), and the default
# window as a multiple of `for`: a full outage fires after `for`, as a plain `for` would.
WINDOWED = ("target_down", "replicas_unavailable", "gpu_hardware_slowdown")
WINDOW_FACTOR = 3
# A series must be gone for this many scrape intervals before a guard may call it absent.
SIGNAL_MISSING_MIN_SCRAPES = 4
# spec.scaleToZero.startupGrace: a large model's pod is scheduled, pulls its image and loads
# its weights in minutes; none missing pages before this after the desired count leaves 0.
DEFAULT_STARTUP_GRACE_MS = 600_000
_SPEC_PARAM = {
    "threshold": "threshold_seconds",
    "max_ratio": "max_ratio",
    "indicator": "indicator",
    "min_events": "min_events",
    "max": "max",
    "min_free": "min_free",
    "horizon": "horizon_ms",
    "lookback": "lookback_ms",
    "window": "window_ms",
    "min_restarts": "min_restarts",
    "min": "min",
    "ignore": "ignore",
    "max_drop": "max_drop",
    "max_increase": "max_increase",
    "baseline": "baseline_ms",  # "1d" | "7d", turned into ms below
    "min_tokens_per_second": "min_tokens_per_second",
    "measure": "measure",
}
# Families off unless the spec sets them (their output would be new for every existing spec).
_OPT_IN = {"efficiency_regression"}


class _Problems:
    def __init__(self, file: str) -> None:
        self.file = file
        self.items: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(Diagnostic(self.file, path, message, Level.WARNING))

    def add(self, path: str, message: str) -> None:
        diagnostic = Diagnostic(self.file, path, message)
        # Several SLOs can share a cause (one scrapeInterval): report it once.
        if diagnostic not in self.items:
            self.items.append(diagnostic)


def _merge(base: tuple[Matcher, ...], override: Mapping[str, str] | None) -> tuple[Matcher, ...]:
    if not override:
        return base
    kept = {m.label: m for m in base}
    kept.update({m.label: m for m in equals(override)})
    return tuple(sorted(kept.values()))


_HISTOGRAM_SERIES = ("_bucket", "_count", "_sum")


def _histogram(
    key: str,
    preset: Preset,
    override: MetricOverride | None,
    base: tuple[Matcher, ...],
    p: _Problems,
) -> HistogramPlan | None:
    """The plan of latency histogram ``key``, or None when neither preset nor spec has one.

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


def _gauge(
    default: GaugeDef | None, override: MetricOverride | None, base: tuple[Matcher, ...]
) -> GaugePlan | None:
    if override and override.name:
        return GaugePlan(
            override.name,
            _merge(base, override.selector),
            1.0 if default is None else default.scale,
        )
    if default is None:
        return None
    own = _merge(base, dict(default.matchers))
    matchers = _merge(own, override.selector if override else None)
    denominator = None
    if default.denominator is not None:
        denominator = _merge(
            _merge(base, dict(default.denominator)), override.selector if override else None
        )
    return GaugePlan(default.name, matchers, default.scale, denominator, default.also)


def _counter(
    default: str | None, override: MetricOverride | None, base: tuple[Matcher, ...]
) -> CounterPlan | None:
    name = override.name if override and override.name else default
    if name is None:
        return None
    return CounterPlan(name, _merge(base, override.selector if override else None))


def _prefix_cache(preset: Preset, base: tuple[Matcher, ...]) -> PrefixCachePlan | None:
    cache = preset.prefix_cache
    if cache is None:
        return None
    gauge = _gauge(cache.gauge, None, base) if cache.gauge is not None else None
    return PrefixCachePlan(base, cache.hits, cache.queries, gauge)


def _requests(
    preset: Preset,
    metrics: Metrics,
    base: tuple[Matcher, ...],
    p: _Problems,
    failure_spec: FailureDefinition | None = None,
) -> RequestsPlan:
    """The request counters: the preset's, or the override's name.

    A name that is one of the server's known request counters (``preset.other_requests``, e.g.
    vLLM's ``vllm:request_success_total``) keeps that counter's own matchers, error matchers
    and failure counter. Any other name keeps nothing written for the preset's counter: the
    spec states ``errorMatchers`` or ``metrics.failures`` (else an error). The spec's
    ``errorMatchers``, ``failures`` and ``selector`` apply on top. Error matchers that can
    never match the counter as its library exposes it (:mod:`generator.presets.layouts`) are
    errors naming the fix.
    """
    override, failures = metrics.requests, metrics.failures
    definition = failure_spec or FailureDefinition()
    known = {r.name: r for r in (preset.requests, *preset.other_requests)}
    name = override.name if override and override.name else preset.requests.name
    default = known.get(name)
    stated_matchers = override.error_matchers if override else None
    stated = stated_matchers is not None
    if failures is not None:
        for attr, what in (("selector", "selector"), ("error_matchers", "errorMatchers")):
            if getattr(failures, attr) is not None:
                p.add(
                    f"spec.metrics.failures.{what}",
                    f"the failure counter is read with spec.metrics.requests' selector and "
                    f"counts failures only: remove {what}",
                )
        if failures.name is None:
            p.add("spec.metrics.failures.name", "expected the failure counter's metric name")
        if stated:
            p.add(
                "spec.metrics.requests.errorMatchers",
                "with spec.metrics.failures, failed requests are that counter's: remove "
                "errorMatchers (or metrics.failures)",
            )
        if override is not None and override.exclude_matchers is not None:
            p.add(
                "spec.metrics.requests.excludeMatchers",
                "with spec.metrics.failures, failed requests are that counter's: move "
                "excludeMatchers to spec.metrics.failures.excludeMatchers",
            )
    if default is None and not stated and failures is None:
        written = preset.requests.failure_name or ", ".join(
            f"{k}=~{v!r}" for k, v in preset.requests.error_matchers
        )
        p.add(
            "spec.metrics.requests.name",
            f"{name} is not {preset.server}'s request counter {preset.requests.name}: its "
            f"failures ({written}) were written for that counter and would silently count "
            f"nothing here; state spec.metrics.requests.errorMatchers for {name} (e.g. "
            '{status: "5.."}), or name its failure counter in spec.metrics.failures.name',
        )
    if stated_matchers is not None:
        errors = _regex_matchers(stated_matchers.items())
    elif failures is not None:
        errors = ()
    else:
        source = default or preset.requests
        errors = _regex_matchers(source.error_matchers)
    failure = default.failure_name if default else None
    if failures is not None:
        failure = failures.name
    if failure is None:
        field = "errorMatchers" if stated else "name"
        for m in errors:
            problem = layouts.matcher_problem(preset.server, name, m.label, m.value)
            if problem is not None:
                p.add(f"spec.metrics.requests.{field}", problem)
    own = tuple(Matcher(k, "=~", v) for k, v in default.matchers) if default else ()
    merged = _merge(base, override.selector if override else None)
    kept = {m.label: m for m in own}
    kept.update({m.label: m for m in merged})
    matchers = tuple(sorted(kept.values()))
    # Exclusions: the spec's (on its failure counter where it names one), else the counter's
    # own unless the spec restated its errorMatchers (which then say all there is).
    own_excludes = default.exclude_matchers if default is not None else ()
    excluded: tuple[tuple[str, str], ...]
    if failures is not None:
        given = failures.exclude_matchers
        same = default is not None and failures.name == default.failure_name
        excluded = tuple(given.items()) if given is not None else own_excludes if same else ()
    elif override is not None and override.exclude_matchers is not None:
        excluded = tuple(override.exclude_matchers.items())
    else:
        excluded = () if stated else own_excludes
    if definition.statuses and not any(m.label in failures_mod.STATUS_LABELS for m in errors):
        p.add(
            "spec.failure.statuses",
            f"{failure or name} tells failures by no HTTP status label "
            f"({', '.join(failures_mod.STATUS_LABELS)}), so the statuses would change nothing; "
            "remove them, or read a counter by status in spec.metrics.requests",
        )
    errors, excludes = _apply_statuses(errors, excluded, definition, stated)
    sources = _failure_sources(preset, name, base, definition)
    return RequestsPlan(name, matchers, errors, failure, excludes, sources, definition.combine)


def _regex_matchers(
    pairs: Iterable[tuple[str, str]], *, negate: bool = False
) -> tuple[Matcher, ...]:
    """``label → regex`` pairs as sorted matchers (:meth:`Matcher.regex`: ``=~``/``!~``, or
    ``=``/``!=`` for a plain value)."""
    return tuple(sorted(Matcher.regex(k, v, negate=negate) for k, v in pairs))


def _apply_statuses(
    errors: tuple[Matcher, ...],
    excluded: tuple[tuple[str, str], ...],
    definition: FailureDefinition,
    stated: bool,
) -> tuple[tuple[Matcher, ...], tuple[Matcher, ...]]:
    """Error and exclusion matchers with the status table applied to a status label
    (:func:`generator.failures.status_regexes`): the defaults with ``spec.failure.statuses``
    over them; error matchers the spec states are taken as written unless it states
    ``statuses`` too."""
    table = {
        **({} if stated else failures_mod.DEFAULT_STATUSES),
        **(definition.statuses or {}),
    }
    out, drop = [], dict(excluded)
    for m in errors:
        if m.label in failures_mod.STATUS_LABELS:
            regex, gone = failures_mod.status_regexes(m.value, table)
            out.append(Matcher.regex(m.label, regex))
            if gone is not None:
                drop[m.label] = "|".join(x for x in (drop.get(m.label), gone) if x)
        else:
            out.append(m)
    return tuple(sorted(out)), _regex_matchers(drop.items(), negate=True)


def _failure_sources(
    preset: Preset,
    name: str,
    base: tuple[Matcher, ...],
    definition: FailureDefinition,
) -> tuple[FailureSourcePlan, ...]:
    """The preset's engine failure sources, beside the preset's own request counter only
    (unless ``spec.failure.engine`` is false), and the spec's ``spec.failure.sources``."""
    out = []
    if definition.engine and name == preset.requests.name:
        for src in preset.failure_sources:
            out.append(
                FailureSourcePlan(
                    src.name,
                    _merge(base, None),
                    _regex_matchers(src.error_matchers),
                    _regex_matchers(src.exclude_matchers, negate=True),
                    "spec.failure.engine",
                )
            )
    for i, item in enumerate(definition.sources):
        out.append(
            FailureSourcePlan(
                item.name,
                _merge(base, item.selector),
                _regex_matchers(item.error_matchers.items()),
                _regex_matchers((item.exclude_matchers or {}).items(), negate=True),
                f"spec.failure.sources[{i}]",
            )
        )
    return tuple(out)


def _resolve_slos(
    spec: ModelServiceSpec,
    histograms: Mapping[str, HistogramPlan],
    p: _Problems,
    releases: Releases | None = None,
) -> tuple[SLOPlan, ...]:
    body = spec.spec
    plans = []
    for i, item in enumerate(body.slos):
        path = f"spec.slos[{i}]"
        histogram = None
        bound = None
        threshold_s = None
        targets = _goodput_targets(item, path, histograms, body.server, p, releases)
        if item.indicator is not None:
            key = INDICATOR_ALIASES[item.indicator]
            histogram = histograms.get(key)
            threshold_s = (item.threshold or 0) / 1000
            if histogram is None:
                p.add(f"{path}.indicator", _no_histogram(body.server, key, histograms, releases))
            else:
                bound = _check_bound(
                    histogram, threshold_s, f"{path}.threshold", p, releases, _SLI_EFFECT
                )
        evaluation = body.prometheus.evaluation_interval
        if item.window % evaluation:
            p.add(
                f"{path}.window",
                f"SLO window {format_duration_ms(item.window)} is not a multiple of "
                f"spec.prometheus.evaluationInterval {format_duration_ms(evaluation)}; the SLI "
                "sums one increment per evaluation",
            )
        retention = body.prometheus.retention
        if retention is not None and item.window > retention:
            p.add(
                f"{path}.window",
                f"SLO window {format_duration_ms(item.window)} is longer than spec.prometheus.retention {format_duration_ms(retention)}; the SLI could never cover it",
            )
        tiers: list[slo.Tier] = []
        if item.alerting.enabled:
            explicit = item.alerting.tiers is not None
            for j, tier in enumerate(_bind_tiers(item.alerting.tiers, item.objective, item.window)):
                for problem in slo.tier_problems(
                    tier,
                    item.objective,
                    item.window,
                    body.prometheus.scrape_interval,
                    body.prometheus.evaluation_interval,
                ):
                    if explicit:
                        remedy = (
                            " — lower the tier's budget, lengthen its longWindow or raise the "
                            "objective"
                            if problem.cause == "objective"
                            else ""
                        )
                        p.add(f"{path}.alerting.tiers[{j}]", problem.message + remedy)
                        continue
                    label = (
                        f"default tier {format_duration_ms(tier.long_window_ms)}/"
                        f"{format_duration_ms(tier.short_window_ms)}: "
                    )
                    example = _working_tier(
                        item.objective, item.window, body.prometheus.scrape_interval
                    )
                    where, remedy = _default_tier_fix(problem.cause, path, example)
                    p.add(where, label + problem.message + remedy)
                tiers.append(tier)
        plans.append(
            SLOPlan(
                name=item.name,
                kind="goodput"
                if item.targets
                else "latency"
                if histogram is not None or item.indicator
                else "availability",
                objective=item.objective,
                error_budget=slo.error_budget(item.objective),
                window_ms=item.window,
                histogram=histogram,
                threshold_seconds=threshold_s,
                threshold_bound=bound,
                tiers=tuple(tiers),
                min_events=item.alerting.min_events
                if item.alerting.min_events is not None
                else slo.DEFAULT_MIN_EVENTS,
                description=item.description,
                budget_levels=tuple(
                    BUDGET_LEVELS
                    if item.alerting.budget_left is None
                    else item.alerting.budget_left
                )
                if item.alerting.enabled
                else (),
                keep_firing_for_ms=_keep_firing_for(item, body.prometheus.floor, path, p),
                targets=targets,
                path=path,
            )
        )
    return tuple(plans)


def _goodput_targets(
    item: SLO,
    path: str,
    histograms: Mapping[str, HistogramPlan],
    server: str,
    p: _Problems,
    releases: Releases | None,
) -> tuple[GoodputTargetPlan, ...]:
    """``spec.slos[].targets`` resolved: each signal's histogram and the bucket bound of its
    threshold (refused, naming ``targets[j].threshold``, when it is not one)."""
    found = []
    for j, target in enumerate(item.targets or ()):
        key = INDICATOR_ALIASES[target.signal]
        histogram = histograms.get(key)
        if histogram is None:
            p.add(f"{path}.targets[{j}].signal", _no_histogram(server, key, histograms, releases))
            continue
        seconds = target.threshold / 1000
        where = f"{path}.targets[{j}].threshold"
        bound = _check_bound(histogram, seconds, where, p, releases, _SLI_EFFECT)
        if bound is not None:
            found.append(GoodputTargetPlan(histogram, seconds, bound))
    return tuple(found)


def _query_offset(prometheus: PrometheusSettings, p: _Problems) -> int:
    """``spec.prometheus.queryOffset`` in ms (0 unset), refused when the declared Prometheus
    cannot load it or it is not whole evaluations."""
    given = prometheus.query_offset
    if not given:
        return 0
    why = targets.missing(targets.QUERY_OFFSET, prometheus.floor)
    if why is not None:
        p.add("spec.prometheus.queryOffset", why)
        return 0
    if given % prometheus.evaluation_interval:
        p.add(
            "spec.prometheus.queryOffset",
            f"{format_duration_ms(given)} is not a multiple of spec.prometheus.evaluationInterval "
            f"{format_duration_ms(prometheus.evaluation_interval)}: the SLO increments would "
            "no longer tile the window",
        )
        return 0
    return given


def _keep_firing_for(item: SLO, floor: tuple[int, int], path: str, p: _Problems) -> int:
    """``spec.slos[].alerting.keepFiringFor`` in ms (0 unset), refused when the declared
    Prometheus cannot load it."""
    given = item.alerting.keep_firing_for
    if not given or not item.alerting.enabled:
        return 0
    why = targets.missing(targets.KEEP_FIRING_FOR, floor)
    if why is not None:
        p.add(f"{path}.alerting.keepFiringFor", why)
        return 0
    return given


def _bind_tiers(
    given: Sequence[BurnRateTier] | None, objective: float, window_ms: int
) -> list[slo.Tier]:
    """The SLO's tiers: the spec's as written, or the defaults (budget raised to reach 1×)."""
    if given is not None:
        return [
            slo.bind_tier(
                slo.TierSpec(Fraction(str(t.budget)), t.long_window, t.short_window, t.severity),
                objective,
                window_ms,
            )
            for t in given
        ]
    return [slo.bind_default_tier(t, objective, window_ms) for t in slo.DEFAULT_TIERS]


def _working_tier(objective: float, window_ms: int, scrape_ms: int) -> str | None:
    """A custom tier that this SLO accepts, quoted when the default tiers do not fit it: the
    first Workbook tier (1d/2h at 3×, 6h/30m at 6×, 1h/5m at 14.4×, 3d/6h at 1×) whose
    windows suit the scrape interval and SLO window, at its factor or else at 1×, the budget
    rounded up to 4 decimals. ``None`` when none fits."""
    week = slo.TierSpec(Fraction(1), 7 * slo.DAY_MS, 12 * slo.HOUR_MS, "warning")
    first, second, third, fourth = slo.DEFAULT_TIERS
    for spec in (third, second, first, fourth, week):
        workbook = slo.burn_rate_factor(spec.budget, 30 * slo.DAY_MS, spec.long_window_ms)
        for factor in (workbook, Fraction(1)):
            exact = factor * Fraction(spec.long_window_ms, window_ms)
            budget = Fraction(-(-exact.numerator * 10_000 // exact.denominator), 10_000)
            if not 0 < budget <= 1:
                continue
            candidate = slo.TierSpec(budget, spec.long_window_ms, spec.short_window_ms, "warning")
            tier = slo.bind_tier(candidate, objective, window_ms)
            if not slo.tier_problems(tier, objective, window_ms, scrape_ms):
                return (
                    f"tiers: [{{budget: {decimal_str(budget)}, longWindow: "
                    f"{format_duration_ms(spec.long_window_ms)}, shortWindow: "
                    f"{format_duration_ms(spec.short_window_ms)}, severity: warning}}]"
                )
    return None


def _default_tier_fix(cause: str, slo_path: str, example: str | None) -> tuple[str, str]:
    """Where a default tier's problem is reported, and the remedy appended to it."""
    custom = f"set your own tiers in {slo_path}.alerting.tiers" + (
        f", e.g. {example}" if example else ""
    )
    if cause == "scrape_interval":
        return "spec.prometheus.scrapeInterval", f" — scrape more often, or {custom}"
    if cause == "evaluation_interval":
        return "spec.prometheus.evaluationInterval", f" — use a divisor of 5m, or {custom}"
    if cause == "slo_window":
        return f"{slo_path}.window", f" — lengthen the SLO window, or {custom}"
    return f"{slo_path}.objective", f" — raise the objective, or {custom}"


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


def _resolve_alerts(
    spec: ModelServiceSpec,
    plan_hist: Mapping[str, HistogramPlan],
    preset: Preset,
    p: _Problems,
    releases: Releases | None = None,
) -> dict[str, AlertPlan]:
    body = spec.spec
    latency_slos = [s for s in body.slos if s.indicator is not None]
    available = {
        "latency_p99": bool(plan_hist),
        "slow_requests": bool(plan_hist),
    }
    missing: dict[str, str] = {}
    for f in FAMILIES:
        if f.needs is None:
            continue
        declared = getattr(body.metrics, f.needs.attribute, None) if f.needs.declarable else None
        if getattr(preset, f.needs.attribute) is None and not (declared and declared.name):
            available[f.key] = False
            missing[f.key] = f.needs.left_out(f.alerts[0], body.server)
    if not plan_hist:
        # No latency histogram in this release (Triton before 24.11): say why, and since when.
        for key, alert in (
            ("latency_p99", naming.ALERT_LATENCY_P99),
            ("slow_requests", naming.ALERT_SLOW_REQUESTS),
        ):
            wanted = getattr(body.alerts, key)
            indicator = INDICATOR_ALIASES.get(str(getattr(wanted, "indicator", None) or ""))
            indicator = indicator or _upcoming_histogram(releases) or "requestDuration"
            why = _no_histogram(body.server, indicator, plan_hist, releases)
            missing[key] = f"{alert} alert left out: {why}"
    alerts: dict[str, AlertPlan] = {}
    for key, (for_ms, severity, params) in ALERT_DEFAULTS.items():
        if key in _GPU_ALERTS and body.gpu.exporter == "none":
            continue
        if key == "cold_start" and body.scale_to_zero.activator is None:
            given = body.alerts.cold_start
            if given is not None and given.enabled:
                p.warn(
                    "spec.alerts.coldStart",
                    f"{naming.ALERT_COLD_START} alert left out: it reads where requests wait "
                    "while no pod is up; name it in spec.scaleToZero.activator",
                )
            continue
        given = getattr(body.alerts, key)
        if key in _OPT_IN and given is None:
            continue
        if key == "lora_pool" and given is None and body.models is None:
            continue  # on by default only where spec.models says several models share a server
        if key == "kv_transfer" and given is None and body.roles is None:
            continue  # on by default only for disaggregated (spec.roles) services
        if not available.get(key, True):
            if given is not None and given.enabled and key in missing:
                p.warn(f"spec.alerts.{to_camel(key)}", missing[key])
            continue
        if given is not None and not given.enabled:
            continue
        merged: dict[str, Any] = dict(params)
        if key == "slow_requests" and "threshold_seconds" not in merged and latency_slos:
            merged["threshold_seconds"] = (latency_slos[0].threshold or 0) / 1000
            if given is None or (given.indicator is None and given.threshold is None):
                # The SLO's threshold belongs to the SLO's histogram, not the default one.
                merged["indicator"] = latency_slos[0].indicator
        if given is not None:
            for attr, param in _SPEC_PARAM.items():
                value = getattr(given, attr, None)
                if value is not None:
                    merged[param] = value / 1000 if param == "threshold_seconds" else value
            baseline = getattr(given, "baseline", None) if key == "efficiency_regression" else None
            if baseline is not None:
                merged["baseline_ms"] = {"1d": 86_400_000, "7d": 604_800_000}[baseline]
        path = f"spec.alerts.{to_camel(key)}"
        if key in ("latency_p99", "slow_requests"):
            indicator = INDICATOR_ALIASES.get(str(merged["indicator"]))
            if indicator is None:
                p.add(
                    f"{path}.indicator",
                    f"{merged['indicator']!r} is not a latency indicator; expected one of {', '.join(INDICATOR_ALIASES)}",
                )
                continue
            merged["indicator"] = indicator
            histogram = plan_hist.get(indicator)
            if histogram is None and (given is None or given.indicator is None):
                # Default indicator missing (Triton has no e2e histogram): use the first
                # latency histogram the server has, e2e before ttft before itl.
                indicator = next(k for k in naming.INDICATOR_LABEL if k in plan_hist)
                merged["indicator"] = indicator
                histogram = plan_hist[indicator]
            if histogram is None:
                p.add(
                    f"{path}.indicator",
                    _no_histogram(body.server, indicator, plan_hist, releases),
                )
                continue
            if key == "slow_requests":
                if "threshold_seconds" not in merged:
                    continue  # no threshold to test against: disabled unless configured
                if (
                    given is None
                    and histogram.bounded
                    and histogram.bound_for(merged["threshold_seconds"]) is None
                ):
                    continue  # inherited from a latency SLO, whose own check reports it
                # Inherited from a latency SLO: that SLO's own check speaks of its releases.
                merged["bound"] = _check_bound(
                    histogram,
                    merged["threshold_seconds"],
                    f"{path}.threshold",
                    p,
                    releases if given is not None else None,
                    _SLOW_EFFECT,
                )
            elif histogram.bounded:
                top = histogram.buckets[-1] * histogram.seconds_per_unit
                seconds = float(merged["threshold_seconds"])
                test = Test(_below_top(seconds), "below the largest bucket bound", _P99_EFFECT)
                per_release = releases is not None and histogram.key in releases.preset_keys
                shown = f"{decimal_str(seconds)}s"
                if seconds < top and per_release and releases is not None:
                    if given is not None:
                        _release_checks(histogram, seconds, f"{path}.threshold", p, releases, test)
                    else:
                        # A default threshold: the line's other releases only warn.
                        for problem in filter(
                            None,
                            (
                                releases.line_problem(histogram.key, test, shown),
                                releases.upgrade_warning(histogram.key, test, shown),
                                releases.unset_warning(histogram.key, test, shown),
                            ),
                        ):
                            p.warn(path, f"default {naming.ALERT_LATENCY_P99}: {problem}")
                if merged["threshold_seconds"] >= top and given is None:
                    # An unconfigured default that could never fire: leave it out, and say so.
                    p.warn(
                        path,
                        f"default {naming.ALERT_LATENCY_P99} alert left out: its "
                        f"{decimal_str(merged['threshold_seconds'])}s threshold is not below "
                        f"the largest bucket bound {decimal_str(top)}s of {histogram.metric}, "
                        f"so it could never fire; enable it with {path}.threshold below "
                        f"{decimal_str(top)}s",
                    )
                    continue
                if merged["threshold_seconds"] >= top:
                    fix = (
                        f" — {releases.refusal(histogram.key, test)}"
                        if per_release and releases is not None
                        else ""
                    )
                    p.add(
                        f"{path}.threshold",
                        f"{decimal_str(merged['threshold_seconds'])}s is not below the largest bucket bound {decimal_str(top)}s; histogram_quantile never reports more than that bound, so the alert could never fire{fix}",
                    )
        if (
            key in ("memory_headroom", "memory_exhaustion", "oom_killed", "crash_loop")
            and not body.deployment
        ):
            continue
        if key == "signal_missing":
            for_ms = _signal_missing_for(given, for_ms, body.prometheus.scrape_interval, p)
            merged["ignore"] = tuple(merged["ignore"])
        if given is not None and given.for_ is not None:
            for_ms = given.for_
        if key in WINDOWED or key == "crash_loop":
            spec_window = getattr(given, "window", None) if given is not None else None
            _held_window(key, merged, for_ms, spec_window, body.prometheus.scrape_interval, p)
        alerts[key] = AlertPlan(
            key=key,
            for_ms=for_ms,
            severity=given.severity
            if given is not None and given.severity is not None
            else severity,
            params=merged,
        )
    return alerts


def _upcoming_histogram(releases: Releases | None) -> str | None:
    """The first latency histogram key a later release than the declared one exposes."""
    if releases is None:
        return None
    return next((k for k in naming.INDICATOR_LABEL if releases.upcoming(k) is not None), None)


def _held_window(
    key: str,
    params: dict[str, Any],
    for_ms: int,
    given: int | None,
    scrape_ms: int,
    p: _Problems,
) -> None:
    """Set ``params["window_ms"]`` of a windowed alert: ``given`` (the spec's), else the
    default (``params``' own, or WINDOW_FACTOR × ``for`` up to 6h, at least ``for``) raised to
    4 scrape intervals. A spec window shorter than ``for`` (the condition could never hold
    that long in it) or than 4 scrape intervals is reported, and so are more crash-loop
    restarts than its window has minutes (less two)."""
    path = f"spec.alerts.{to_camel(key)}.window"
    least = SIGNAL_MISSING_MIN_SCRAPES * scrape_ms
    if given is None:
        default = params.get("window_ms") or min(WINDOW_FACTOR * for_ms, 6 * 3_600_000)
        given = params["window_ms"] = max(least, for_ms, default)
    elif given < for_ms:
        p.add(
            path,
            f"{format_duration_ms(given)} is shorter than its for ({format_duration_ms(for_ms)}): "
            f"the condition could never hold that long within it; expected at least "
            f"{format_duration_ms(for_ms)} (default {WINDOW_FACTOR} × for)",
        )
    elif given < least:
        p.add(
            path,
            f"{format_duration_ms(given)} is shorter than {SIGNAL_MISSING_MIN_SCRAPES} × "
            f"spec.prometheus.scrapeInterval; expected at least {format_duration_ms(least)}",
        )
    most = given // 60_000 - 2
    if key == "crash_loop" and int(params["min_restarts"]) > most:
        p.add(
            f"spec.alerts.{to_camel(key)}.minRestarts",
            f"{params['min_restarts']} restarts within {format_duration_ms(given)} would never "
            f"fire: past its first back-offs a crash loop restarts less than once a minute (the "
            f"kubelet's back-off doubles from 10s to 5m); expected at most {max(most, 0)}, or a "
            f"longer window",
        )


def _signal_missing_for(given: Any, default_ms: int, scrape_ms: int, p: _Problems) -> int:
    """Default ``for`` of the input guards: ``default_ms``, raised to 4 scrape intervals; a
    spec's own ``for`` shorter than 4 scrape intervals is reported."""
    least = SIGNAL_MISSING_MIN_SCRAPES * scrape_ms
    if given is not None and given.for_ is not None and given.for_ < least:
        p.add(
            "spec.alerts.signalMissing.for",
            f"{format_duration_ms(given.for_)} is shorter than {SIGNAL_MISSING_MIN_SCRAPES} × "
            f"spec.prometheus.scrapeInterval ({format_duration_ms(least)}); a series is only "
            f"absent once it missed several scrapes — expected at least {format_duration_ms(least)}",
        )
    return max(default_ms, least)


def _check_prefixed(preset: Preset, prefix: str, version: str, p: _Problems) -> None:
    """Refuse ``spec.metrics.prefix`` when a preset name it makes is no metric name on the
    spec's Prometheus version (the first such name is quoted)."""
    for name in metric_names(preset):
        why = metric_name_problem(name, version)
        if why is not None:
            p.add(
                "spec.metrics.prefix",
                f"{prefix!r} makes the preset's metric name {name!r}, which {why}",
            )
            return


def _check_activator(given: Activator | None, version: str, p: _Problems) -> None:
    """Refuse an activator metric or selector label the spec's Prometheus cannot store."""
    if given is None:
        return
    path = "spec.scaleToZero.activator"
    why = None if given.metric is None else metric_name_problem(given.metric, version)
    if why is not None:
        p.add(f"{path}.metric", f"{given.metric!r} {why}")
    for label in sorted(given.selector):
        why = label_name_problem(label, version)
        if why is not None:
            p.add(f"{path}.selector", f"label {label!r} {why}")


def _activator(given: Activator | None) -> ActivatorPlan | None:
    """The activator's plan: the source's gauge names (``metric`` replaces them) and the
    selector's matchers."""
    if given is None:
        return None
    names = (given.metric,) if given.metric else naming.ACTIVATOR_METRICS[given.source]
    return ActivatorPlan(given.source, tuple(names), equals(given.selector))


def resolve(spec: ModelServiceSpec, source: str) -> ServicePlan:
    """Resolve ``spec`` (read from ``source``) into a :class:`ServicePlan`.

    Raises:
        ObsgenError: every cross-field problem found, each with file and field path.
    """
    p = _Problems(source)
    body = spec.spec
    try:
        selection = select_preset(body.server, body.server_version, body.server_variant)
    except PresetError as err:
        raise ObsgenError([Diagnostic(source, f"spec.{err.field}", str(err))]) from None
    preset = selection.preset
    if selection.warning is not None:
        p.warn("spec.serverVersion", selection.warning)
    if body.metrics.prefix:
        preset = prefixed(preset, body.metrics.prefix)
        _check_prefixed(preset, body.metrics.prefix, body.prometheus.major, p)
    base = equals(body.selector)
    role = roles.resolve(body.roles)
    why = None if role is None else roles.selector_problem(role, body.selector)
    if why is not None:
        p.add("spec.selector", why)
    why = None if role is None else roles.group_by_problem(role, body.group_by)
    if why is not None:
        p.add("spec.groupBy", why)
    why = (
        None
        if body.models is None
        else models.problem(body.server, preset.model_label, body.group_by)
    )
    if why is not None:
        p.add("spec.models", why)
    metrics = body.metrics
    for key in (*naming.INDICATOR_LABEL, *_NOT_HISTOGRAMS):
        given = getattr(metrics, to_snake(key))
        why = (
            None
            if given is None or given.name is None
            else metric_name_problem(given.name, body.prometheus.major)
        )
        if why is not None:
            p.add(f"spec.metrics.{key}.name", f"{given.name!r} {why}")
        for part, labels in (
            ("selector", given and given.selector),
            ("errorMatchers", given and given.error_matchers),
        ):
            for label in sorted(labels or {}):
                why = label_name_problem(label, body.prometheus.major)
                if why is not None:
                    p.add(f"spec.metrics.{key}.{part}", f"label {label!r} {why}")
    histograms: dict[str, HistogramPlan] = {}
    for key in naming.INDICATOR_LABEL:
        attr = to_snake(key)
        override = getattr(metrics, attr)
        hist = _histogram(key, preset, override, base, p)
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
    for key in _NOT_HISTOGRAMS:
        override = getattr(metrics, to_snake(key))
        for attr in ("buckets", "unit", "histogram"):
            if override is not None and getattr(override, attr) is not None:
                p.add(
                    f"spec.metrics.{key}.{attr}",
                    f"{attr} applies to latency histograms only "
                    "(requestDuration, timeToFirstToken, interTokenLatency, requestQueueTime, "
                    "timePerOutputToken)",
                )
    _check_activator(body.scale_to_zero.activator, body.prometheus.version, p)
    releases = Releases.of(
        body.server,
        body.server_version,
        body.server_variant,
        # Bounds of the release: the preset's, unless spec.metrics.<key>.buckets replaces them.
        frozenset(
            k
            for k in histograms
            if k in preset.latency
            and getattr(getattr(metrics, to_snake(k)), "buckets", None) is None
        ),
    )
    slos = _resolve_slos(spec, histograms, p, releases)
    alerts = _resolve_alerts(spec, histograms, preset, p, releases)
    requests = _requests(preset, metrics, roles.scoped(role, roles.OUTCOME, base), p, body.failure)
    for label in sorted({m.label for m in requests.error_matchers} & set(body.group_by)):
        p.add(
            "spec.groupBy",
            f"cannot group by {label!r}: the request error matchers tell failures by it, so "
            "every group would be all failures or none",
        )
    cluster_label = body.prometheus.cluster_label
    if cluster_label is not None and cluster_label in body.group_by:
        p.add(
            "spec.groupBy",
            f"cannot group by {cluster_label!r}: it is spec.prometheus.clusterLabel, which "
            "every aggregation keeps already; remove it from groupBy",
        )
    query_offset_ms = _query_offset(body.prometheus, p)
    if p.items:
        raise ObsgenError(p.items)
    if spec.metadata.runbook_base_url is None:
        p.warn(
            "metadata.runbookBaseUrl",
            "not set: alert runbook_url annotations are relative (docs/runbooks/<service>/<Alert>.md) "
            "and cannot be opened from a page; set it to where docs/runbooks is published, "
            "e.g. https://git.example.com/obs/-/blob/main/docs/runbooks",
        )
    if spec.metadata.grafana_url is None:
        p.warn(
            "metadata.grafanaUrl",
            "not set: alert dashboard_url annotations are relative (/d/<uid>/<service>) and "
            "open nothing from a page or a chat message; set it to your Grafana's address, "
            "e.g. https://grafana.example.com",
        )
    deployment = body.deployment
    namespace = body.selector.get("namespace")
    # No pod-name pattern: pods are attributed to the workload by kube-state-metrics owner
    # series or their scrape targets' labels (generator/builders/pods.py).
    namespaced = (Matcher("namespace", "=", namespace),) if namespace else ()
    container_matchers = (*namespaced, Matcher("container", "=", deployment.container))
    # The sidecar is scraped by obsgen's own PodMonitor, which sets this job label.
    gpu_base = _merge(
        namespaced,
        {
            "container": naming.GPU_EXPORTER_CONTAINER,
            "job": naming.k8s_name(spec.metadata.name, "gpu"),
            **(body.gpu.selector or {}),
        },
    )
    if body.gpu.exporter == "dcgm":
        # dcgm-exporter runs on each node, in its own namespace: its targets' own labels.
        gpu_base = tuple(sorted(equals(dict(body.gpu.dcgm.selector))))
    gauges = (
        _gauge(preset.queue_depth, metrics.queue_depth, base),
        _gauge(preset.running_requests, metrics.running_requests, base),
        _gauge(preset.kv_cache_usage, metrics.kv_cache_usage, base),
    )
    decode_base = roles.scoped(role, roles.DECODE, base)
    counters = (
        _counter(preset.prompt_tokens, metrics.prompt_tokens, decode_base),
        _counter(preset.generation_tokens, metrics.generation_tokens, decode_base),
        _counter(preset.preemptions, metrics.preemptions, base),
    )
    prefix_cache = _prefix_cache(preset, base)
    activator = _activator(body.scale_to_zero.activator)
    read = [
        *(n for h in histograms.values() for n in h.names),
        requests.name,
        *([requests.failure_name] if requests.failure_name else []),
        *(n for g in gauges if g is not None for n in g.names),
        *(c.name for c in counters if c is not None),
        *(n for m in preset.mean_latency.values() for n in (m.sum_name, m.count_name)),
        *(prefix_cache.names if prefix_cache else ()),
        *(activator.names if activator else ()),
    ]
    plan = ServicePlan(
        name=spec.metadata.name,
        team=spec.metadata.team,
        source=source,
        server=body.server,
        preset=preset,
        matchers=base,
        group_by=tuple(body.group_by),
        cluster_label=cluster_label,
        le_version=body.prometheus.major,
        scrape_interval_ms=body.prometheus.scrape_interval,
        evaluation_interval_ms=body.prometheus.evaluation_interval,
        query_offset_ms=query_offset_ms,
        max_gap_ms=body.prometheus.max_gap,
        histograms=histograms,
        requests=requests,
        queue_depth=gauges[0],
        running_requests=gauges[1],
        kv_cache_usage=gauges[2],
        prompt_tokens=counters[0],
        generation_tokens=counters[1],
        preemptions=counters[2],
        prefix_cache=prefix_cache,
        model_label=preset.model_label,
        spec_decode=None
        if preset.spec_decode is None
        else (
            CounterPlan(preset.spec_decode[0], decode_base),
            CounterPlan(preset.spec_decode[1], decode_base),
        ),
        slos=tuple(s for s in slos if s.kind != "goodput"),
        goodput=tuple(s for s in slos if s.kind == "goodput"),
        alerts=alerts,
        gpu_exporter=body.gpu.exporter != "none",
        gpu_visibility=body.gpu.visibility,
        gpu_values_path=body.gpu.values_path,
        gpu_matchers=gpu_base,
        deployment_name=deployment.name,
        workload_kind=deployment.kind,
        container=deployment.container,
        replicas=deployment.replicas.min,
        replicas_max=deployment.replicas.max,
        startup_grace_ms=(
            DEFAULT_STARTUP_GRACE_MS
            if body.scale_to_zero.startup_grace is None
            else body.scale_to_zero.startup_grace
        ),
        activator=activator,
        memory_limit_bytes=deployment.memory_limit,
        container_matchers=tuple(sorted(container_matchers)),
        namespace=namespace,
        runbook_base_url=spec.metadata.runbook_base_url,
        grafana_url=spec.metadata.grafana_url,
        mean_latencies=tuple(
            MeanLatencyPlan(
                key=key,
                indicator=naming.INDICATOR_LABEL[key],
                sum_name=m.sum_name,
                count_name=m.count_name,
                seconds_per_unit=m.seconds_per_unit,
                matchers=roles.scoped(role, roles.HISTOGRAM_OWNER.get(key, roles.OUTCOME), base),
            )
            for key, m in sorted(preset.mean_latency.items())
            if key not in histograms
        ),
        install=InstallPlan(
            release=body.prometheus.release,
            pod_labels=tuple(
                sorted(
                    (deployment.pod_labels or {"app.kubernetes.io/name": deployment.name}).items()
                )
            ),
            metrics_port=deployment.metrics_port,
            metrics_path=deployment.metrics_path,
            exporter_image=body.gpu.image,
            visible_devices=body.gpu.visible_devices,
            gpu_claim=body.gpu.claim,
        ),
        retention_ms=body.prometheus.retention,
        metric_prefix=body.metrics.prefix or "",
        utf8_names=tuple(sorted({n for n in read if not LEGACY_METRIC_NAME.match(n)})),
        warnings=tuple(p.warnings),
        gpu_source=body.gpu.exporter,
        dcgm_honor_labels=body.gpu.dcgm.honor_labels,
        autoscaling=body.autoscaling,
        roles=role,
        models=models.resolve(body.models, preset.model_label),
    )
    found = autoscaling.problems(plan)
    if found:
        raise ObsgenError(found)
    return plan
