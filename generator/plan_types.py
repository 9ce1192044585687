"""The plan's types: what resolution decides for one service (:class:`ServicePlan` and its
parts), and the problem collector every resolution step shares.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TypeVar

from generator import naming, slo
from generator.errors import Diagnostic, Level
from generator.models import ModelsPlan
from generator.presets import (
    Preset,
)
from generator.promql import (
    Matcher,
    equals,
)
from generator.roles import RolePlan
from generator.spec import (
    Autoscaling,
)

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
            ``matchers``; the first that has series counts, :mod:`generator.parts.replicas`).
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
    :mod:`generator.parts.pods` from the owner series of ``workload_kind`` /
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
    # The preset's LoRA info gauge and (KV-transfer histogram, failed-transfer counter)
    # (generator.signals.lora_info, generator.signals.kv_transfer).
    lora_info: str | None = None
    kv_transfer: tuple[str, str] | None = None
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
