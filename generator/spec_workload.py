"""The spec's workload sections: ``gpu``, ``deployment``, ``autoscaling``, ``scaleToZero``,
``roles`` and ``models``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from generator import kube_names, urls
from generator.spec_types import (
    MAX_FOR_MS,
    MAX_SHOWN,
    AlertRatio,
    ContainerImage,
    DnsLabel,
    DurationMs,
    GPUMatchers,
    LabelName,
    MemoryBytes,
    MetricMatchers,
    MetricName,
    PlainText,
    PodLabels,
    PortName,
    StrictModel,
    _pattern,
    _shown,
    _values_ok,
    _within,
    keyed_error,
)
from generator.units import (
    format_duration_ms,
)


class DCGMExporter(StrictModel):
    """``spec.gpu.dcgm`` (``exporter: dcgm``): how Prometheus scrapes NVIDIA dcgm-exporter.

    ``selector``: labels of its targets (default the GPU Operator's ``job``); ``honorLabels``:
    the ServiceMonitor's ``honorLabels`` (false by default in dcgm-exporter's chart and the GPU
    Operator: the model pod's ``pod``/``namespace``/``container`` are then ``exported_*``)."""

    selector: GPUMatchers = {"job": "nvidia-dcgm-exporter"}
    honor_labels: bool = False


class GPU(StrictModel):
    """``spec.gpu``: where the model's GPU series come from: obsgen's NVML sidecar exporter
    (``sidecar``), NVIDIA dcgm-exporter on each node (``dcgm``), or none."""

    exporter: Literal["none", "sidecar", "dcgm"] = "none"
    dcgm: DCGMExporter = DCGMExporter()
    visibility: Literal["shared-claim", "visible-devices"] = "visible-devices"
    selector: GPUMatchers | None = None
    values_path: Annotated[
        str, _pattern(re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$"), "a dotted values path")
    ] = "extraContainers"
    image: ContainerImage = "nvml-exporter:0.1.0"
    # visible-devices: NVIDIA_VISIBLE_DEVICES of the sidecar ("all", or indexes/UUIDs).
    visible_devices: Annotated[
        str,
        _pattern(
            re.compile(r"^(all|[A-Za-z0-9-]+(,[A-Za-z0-9-]+)*)$"),
            "all, or comma-separated GPU indexes or UUIDs",
        ),
    ] = "all"
    # shared-claim: name of the pod's resourceClaims entry the model container uses.
    claim: DnsLabel = "gpu"


# Kubernetes keeps replicas in an int32; Prometheus' float64 counts it exactly.
ReplicaCount = Annotated[int, Field(ge=0, le=2**31 - 1)]


class ReplicaRange(StrictModel):
    """``spec.deployment.replicas`` as a range: an autoscaler (KEDA, KServe, an HPA) keeps the
    workload between ``min`` and ``max`` replicas; ``min: 0`` scales it to zero. A plain
    count ``n`` reads as ``{min: n, max: n}``."""

    min: ReplicaCount
    max: ReplicaCount

    @model_validator(mode="after")
    def _ordered(self) -> ReplicaRange:
        if self.min > self.max:
            raise keyed_error(
                "max",
                f"{self.max} is below min ({self.min}); expected max ≥ min, e.g. "
                f"{{min: {self.max}, max: {self.min}}}",
            )
        return self


MAX_REPLICAS = 2**31 - 1


def _replica_range(value: Any) -> Any:
    # A plain count is the range of one value, its bounds reported at the count's own path;
    # bool is no count (YAML `true` is not 1).
    if isinstance(value, int) and not isinstance(value, bool):
        if value > MAX_REPLICAS:
            raise PydanticCustomError(
                "less_than_equal",
                "Input should be less than or equal to {le}",
                {"le": MAX_REPLICAS},
            )
        if value < 0:
            raise PydanticCustomError(
                "greater_than_equal", "Input should be greater than or equal to {ge}", {"ge": 0}
            )
        return {"min": value, "max": value}
    if isinstance(value, dict):
        return value
    raise ValueError(
        f"expected a replica count (0 or more) or a range such as {{min: 0, max: 4}} "
        f"(got {_shown(value)})"
    )


Replicas = Annotated[
    ReplicaRange,
    BeforeValidator(_replica_range, json_schema_input_type=ReplicaCount | ReplicaRange),
]


def _port_number(value: Any) -> Any:
    # A number outside 1-65535 said as such (the union would otherwise report its text branch:
    # "Input should be a valid string").
    if isinstance(value, int) and not isinstance(value, bool) and not 1 <= value <= 65535:
        shown = str(value) if len(str(value)) <= 20 else str(value)[:19] + "…"
        raise ValueError(f"port {shown} is out of range; expected 1 to 65535, or a port name")
    return value


class Deployment(StrictModel):
    """``spec.deployment``: the Kubernetes workload serving the model.

    Pods are attributed to it through kube-state-metrics' owner series (``kind``/``name``),
    or through the labels its PodMonitor attaches, never by their names."""

    name: DnsLabel
    kind: Literal["Deployment", "StatefulSet"] = "Deployment"
    container: DnsLabel
    replicas: Replicas = Field(default=1, validate_default=True)
    memory_limit: MemoryBytes | None = None
    pod_labels: PodLabels | None = None
    metrics_port: Annotated[
        PortName | Annotated[int, Field(ge=1, le=65535)], BeforeValidator(_port_number)
    ] = "metrics"
    metrics_path: Annotated[
        str, _pattern(re.compile(r"^/[A-Za-z0-9._~/-]*$"), "a URL path such as /metrics")
    ] = "/metrics"


# How long a workload starting from zero replicas may go without a pod up before it pages.
StartupGrace = Annotated[
    DurationMs,
    _within(0, MAX_FOR_MS, "a start longer than 6h is an outage, not a cold start"),
]


class Activator(StrictModel):
    """``spec.scaleToZero.activator``: what holds requests outside the model's pods while none
    is ready: KEDA HTTP add-on's interceptor (``keda-http``), Knative's activator, which KServe
    uses (``knative``), or a gateway's gauge of waiting requests (``custom``).

    ``selector``: label matchers of its series that belong to this service (route or revision
    labels); ``metric``: the gauge of requests it holds, required for ``custom`` and replacing
    the source's own names otherwise (docs/spec.md, "Scale to zero")."""

    source: Literal["keda-http", "knative", "custom"]
    selector: MetricMatchers
    metric: MetricName | None = None

    @field_validator("selector")
    @classmethod
    def _non_empty(cls, selector: dict[str, str]) -> dict[str, str]:
        if not selector:
            raise ValueError(
                "expected at least one label matcher naming this service's route or revision, "
                "e.g. {route_namespace: llm, route_name: chat}"
            )
        return selector

    @model_validator(mode="after")
    def _custom_needs_metric(self) -> Activator:
        if self.source == "custom" and self.metric is None:
            raise keyed_error(
                "metric",
                "source custom needs metric: the name of a gauge of the requests it holds "
                "for this service",
            )
        return self


class ScaleToZero(StrictModel):
    """``spec.scaleToZero``: how the service starts from zero replicas. ``startupGrace``: how
    long after kube-state-metrics' desired replicas leave 0 no missing pod pages;
    ``activator``: where requests wait meanwhile (a cold-start panel and alert read it)."""

    startup_grace: StartupGrace | None = None
    activator: Activator | None = None


# KEDA's Prometheus scaler polls at most once a second; a page's `for` must outlast a poll.
PollingInterval = Annotated[
    DurationMs, _within(1_000, 3_600_000, "KEDA polls every second to every hour")
]
CooldownPeriod = Annotated[
    DurationMs, _within(0, 86_400_000, "a scale-to-zero cooldown longer than a day never fires")
]
# KEDA keeps a target in thousandths (int64(value * 1000), pkg/scalers GetMetricTargetMili up
# to v2.16): a smaller one becomes 0, an AverageValue the HPA refuses.
MIN_TARGET = 0.001
PerReplica = Annotated[float, Field(ge=MIN_TARGET, le=1e9)]


def _base_url(value: str) -> str:
    # KEDA appends /api/v1/query?… to the address, prometheus-adapter splits it into url,
    # port and path: a query or fragment would be cut off or end up inside the path.
    if "?" in value or "#" in value:
        raise ValueError(
            f"{_shown(value)} has a query or fragment; expected the server's base URL, such as "
            "http://prometheus-operated.monitoring.svc:9090"
        )
    return value


class Autoscaling(StrictModel):
    """``spec.autoscaling``: a KEDA ScaledObject (Prometheus triggers) for the workload of
    ``spec.deployment``, between ``replicas.min`` and ``replicas.max``, on obsgen's own
    recorded series.

    ``serverAddress``: the Prometheus (or Thanos/Mimir query) URL KEDA queries;
    ``queuePerReplica``: waiting requests one replica should hold (``model_queue_depth``);
    ``kvCachePerReplica``: KV-cache usage (0–1) one replica should run at; both are per-replica
    targets (KEDA ``AverageValue``: desired = ceil(total / target)). ``activationThreshold``:
    requests held by ``spec.scaleToZero.activator`` above which KEDA scales from zero;
    ``cluster``: the value of ``spec.prometheus.clusterLabel`` of the cluster KEDA runs in.
    ``autoscaler``: ``keda`` (default) or ``hpa``: an ``autoscaling/v2`` HorizontalPodAutoscaler
    on External metrics served by prometheus-adapter (its ``rules.external`` rendered beside it;
    ``serverAddress`` is then the adapter's Prometheus URL).
    ``check`` compares each target with its alert (docs/spec.md, "Autoscaling")."""

    autoscaler: Literal["keda", "hpa"] = "keda"
    server_address: Annotated[
        str,
        AfterValidator(urls.checked("http://prometheus-operated.monitoring.svc:9090")),
        AfterValidator(_base_url),
    ]
    queue_per_replica: PerReplica | None = None
    kv_cache_per_replica: Annotated[float, Field(ge=MIN_TARGET, le=1)] | None = None
    activation_threshold: Annotated[float, Field(ge=0, le=1e9)] = 0
    polling_interval: PollingInterval = 30_000
    cooldown_period: CooldownPeriod = 300_000
    cluster: PlainText | None = None

    @field_validator("polling_interval", "cooldown_period")
    @classmethod
    def _whole_seconds(cls, value: int) -> int:
        if value % 1000:
            raise ValueError(
                f"{format_duration_ms(value)} is not a whole number of seconds; KEDA counts "
                "this in seconds"
            )
        return value

    @model_validator(mode="after")
    def _a_target(self) -> Autoscaling:
        if self.queue_per_replica is None and self.kv_cache_per_replica is None:
            raise ValueError(
                "expected queuePerReplica and/or kvCachePerReplica: the per-replica target "
                "KEDA scales on, e.g. queuePerReplica: 8"
            )
        return self


class Roles(StrictModel):
    """``spec.roles``: prefill/decode disaggregation (vLLM disaggregated serving, llm-d).

    ``label`` is the pod label that names each pod's role (llm-d's ``llm-d.ai/role``);
    ``seriesLabel`` the label it becomes on the scraped series (default: ``label`` with every
    character outside ``[a-zA-Z0-9_]`` replaced by ``_``, as the Prometheus Operator's
    ``podTargetLabels`` writes it: ``llm_d_ai_role``). ``prefill``, ``decode`` and ``router``
    are the label's values of each role; ``decode`` is required. Which role owns which SLI:
    :mod:`generator.roles`, docs/spec.md "Roles".
    """

    label: Annotated[str, Field(max_length=MAX_SHOWN)] = "llm-d.ai/role"
    series_label: LabelName | None = None
    prefill: Annotated[str, Field(min_length=1, max_length=63)] | None = None
    decode: Annotated[str, Field(min_length=1, max_length=63)]
    router: Annotated[str, Field(min_length=1, max_length=63)] | None = None

    @field_validator("label")
    @classmethod
    def _pod_label_key(cls, value: str) -> str:
        why = kube_names.label_key(value)
        if why is not None:
            raise ValueError(
                f"{_shown(value)} is not a Kubernetes label key ({why}); expected "
                f"{kube_names.LABEL_KEY_EXPECTED}"
            )
        return value

    @model_validator(mode="after")
    def _distinct(self) -> Roles:
        values = [v for v in (self.prefill, self.decode, self.router) if v is not None]
        for v in values:
            why = kube_names.label_value(v)
            if why is not None:
                raise ValueError(
                    f"role value {_shown(v)} is not a Kubernetes label value ({why}); expected "
                    f"{kube_names.LABEL_VALUE_EXPECTED}"
                )
        if len(set(values)) != len(values):
            raise ValueError(
                "prefill, decode and router need distinct values of the role label: two roles "
                "with one value would read the same pods"
            )
        if len(values) < 2:
            raise ValueError(
                "declare prefill or router beside decode: a service of one role is not "
                "disaggregated; leave spec.roles out"
            )
        return self


MAX_MODELS = 20
OTHER_MODELS = "other"  # the model label's value of the rollup of every unnamed model


class Models(StrictModel):
    """``spec.models``: several models or LoRA adapters behind one server (issue 45).

    ``names`` are values of the preset's model label (vLLM ``model_name``, Triton ``model``)
    that get their own SLIs and ``ErrorBudgetBurnByModel`` tiers for every availability and
    latency SLO; every other value rolls up into one ``model_name="other"`` series, so the
    records' cardinality is bounded by ``len(names) + 1``. ``maxUnwatchedShare`` (0–1): the
    share of requests over 1h the rollup may carry before ``ModelTrafficUnwatched`` tickets
    (:mod:`generator.builders.model_slo_rules`; docs/spec.md, "Per-model SLOs").
    """

    names: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_SHOWN)]],
        Field(min_length=1, max_length=MAX_MODELS),
    ]
    max_unwatched_share: AlertRatio = 0.5

    @field_validator("names")
    @classmethod
    def _usable_names(cls, names: list[str]) -> list[str]:
        for name in names:
            _values_ok({"model": name})
        if len(set(names)) != len(names):
            raise ValueError("a model is listed twice; list each once")
        if OTHER_MODELS in names:
            raise ValueError(
                f"{OTHER_MODELS!r} is the rollup of every unnamed model; a served model of "
                "that name cannot get its own SLIs"
            )
        return names
