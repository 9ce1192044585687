"""Every name obsgen writes: recording rules, label keys, group names, alert names, files.

Recording rules follow ``level:metric:operations`` (prometheus.io, "Recording rules"): the level
is the aggregation (``service`` plus any ``groupBy`` labels), the metric is a server-neutral
name so dashboards and alerts read the same series whatever the preset, and the operations
say what was applied (``rate5m``, ``ratio_rate1h``, ``increase1m``: events since the previous
evaluation). Builders hard-code none of these.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from generator.units import format_duration_ms

# Label keys obsgen adds.
SERVICE = "service"
TEAM = "team"
SEVERITY = "severity"
SLO = "slo"
INDICATOR = "indicator"
QUANTILE = "quantile"
LONG_WINDOW = "long_window"
SHORT_WINDOW = "short_window"
BURN_RATE = "burn_rate"
BUDGET_LEFT = "budget_left"  # ErrorBudgetLow: the level crossed, in percent ("25")
WINDOW = "window"
SIGNAL = "signal"  # input guards: which spec signal (requests, kvCache, ...) is missing
METRIC = "metric"  # input guards: the metric name that is missing
KILLED = "killed"  # ModelContainerOOMKilled: what the OOM killer ended ("container", "process")
EVENTS = "events"  # SLO event increments: which count (EVENTS_BAD or EVENTS_TOTAL)
EVENTS_BAD = "bad"
EVENTS_TOTAL = "total"

# Alert names: a contract (docs/contracts.md, Alerts).
ALERT_ERROR_BUDGET_BURN = "ErrorBudgetBurn"
# A goodput SLO (spec.slos[].targets) burns its budget, read from the union bound.
ALERT_GOODPUT_BURN = "GoodputBudgetBurn"
# A goodput SLO has spent most of its budget over its window, read from the union bound
# (tickets, per level left; ErrorBudgetLow's counterpart).
ALERT_GOODPUT_BUDGET_LOW = "GoodputBudgetLow"
# spec.models: a named model (or the "other" rollup) burns its own budget; the rollup carries
# most requests (generator.builders.model_slo_rules).
ALERT_BURN_BY_MODEL = "ErrorBudgetBurnByModel"
ALERT_MODELS_UNWATCHED = "ModelTrafficUnwatched"
# A server's LoRA adapter slots all busy with adapters waiting (generator.families.lora_pool).
ALERT_LORA_POOL = "ModelLoRAPoolSaturated"
# Disaggregated serving's KV-cache transfers fail / are slow (generator.families.kv_transfer).
ALERT_KV_TRANSFER_FAILING = "ModelKVTransferFailing"
ALERT_KV_TRANSFER_SLOW = "ModelKVTransferSlow"
ALERT_LATENCY_P99 = "ModelLatencyP99High"
ALERT_SLOW_REQUESTS = "ModelSlowRequestsHigh"
ALERT_ERROR_RATIO = "ModelErrorRatioHigh"
ALERT_MEMORY_HEADROOM = "ModelMemoryHeadroomLow"
ALERT_MEMORY_EXHAUSTION = "ModelMemoryExhaustionPredicted"
ALERT_OOM_KILLED = "ModelContainerOOMKilled"
ALERT_CRASH_LOOP = "ModelContainerCrashLooping"
ALERT_QUEUE_DEPTH = "ModelQueueDepthHigh"
ALERT_KV_CACHE = "ModelKVCacheNearFull"
ALERT_TARGET_DOWN = "ModelTargetDown"
ALERT_GPU_MEMORY_HEADROOM = "GPUMemoryHeadroomLow"
ALERT_GPU_TEMPERATURE = "GPUTemperatureHigh"
ALERT_GPU_XID = "GPUXidErrors"
ALERT_GPU_EXPORTER_DOWN = "GPUExporterDown"
# Input guards and capacity: an input an alert reads has vanished, or replicas are
# missing; a GPU the exporter still sees reports itself lost.
ALERT_SIGNAL_MISSING = "ModelSignalMissing"
ALERT_REPLICAS_UNAVAILABLE = "ModelReplicasUnavailable"
ALERT_GPU_LOST = "GPUDeviceLost"
ALERT_GPU_SLOWDOWN = "GPUHardwareSlowdown"
# The engine preempts running requests (evicted to free KV cache) faster than spec.alerts.preemptions.max.
ALERT_PREEMPTIONS = "ModelPreemptionsHigh"
# The prefix cache's hit ratio stays below spec.alerts.prefixCache.min while requests flow.
ALERT_PREFIX_CACHE = "ModelPrefixCacheHitRatioLow"
# Speculative decoding's acceptance rate fell well below its own trailing day (spec.alerts.specDecode).
ALERT_SPEC_DECODE = "ModelSpecDecodeAcceptanceLow"
# An SLO has spent most of its error budget over its window (tickets, per level left).
ALERT_ERROR_BUDGET_LOW = "ErrorBudgetLow"
# Requests wait at the activator (spec.scaleToZero.activator) while no pod of the service is up.
ALERT_COLD_START = "ModelColdStartSlow"

# Short indicator label values for the spec's latency metric keys.
INDICATOR_LABEL = {
    "requestDuration": "e2e",
    "timeToFirstToken": "ttft",
    "interTokenLatency": "itl",
    "requestQueueTime": "queue",
    "timePerOutputToken": "tpot",
}

# Kubernetes metrics the memory alerts read (cAdvisor and kube-state-metrics).
CADVISOR_WORKING_SET = "container_memory_working_set_bytes"
KSM_LIMITS = "kube_pod_container_resource_limits"
KSM_LAST_TERMINATED = "kube_pod_container_status_last_terminated_reason"
# The last termination's exit code (kube-state-metrics v2.7.0 on, internal/store/pod.go).
KSM_LAST_EXIT_CODE = "kube_pod_container_status_last_terminated_exitcode"
# The kernel's OOM kills counted per container cgroup (cAdvisor v0.40.0 on; the kubelet's
# /metrics/cadvisor from Kubernetes 1.24).
CADVISOR_OOM_EVENTS = "container_oom_events_total"
KSM_RESTARTS = "kube_pod_container_status_restarts_total"
# A series per waiting container (value 1, label reason), none while it runs
# (kube-state-metrics v2.20.0, internal/store/pod.go; docs/metrics/workload/pod-metrics.md).
KSM_WAITING_REASON = "kube_pod_container_status_waiting_reason"
CRASH_LOOP_REASON = "CrashLoopBackOff"
CADVISOR_CPU = "container_cpu_usage_seconds_total"
CADVISOR_CFS_PERIODS = "container_cpu_cfs_periods_total"
CADVISOR_CFS_THROTTLED = "container_cpu_cfs_throttled_periods_total"
# kube-state-metrics: desired and available replicas of the workload (capacity guard).
KSM_DEPLOYMENT_DESIRED = "kube_deployment_spec_replicas"
KSM_DEPLOYMENT_AVAILABLE = "kube_deployment_status_replicas_available"
KSM_STATEFULSET_DESIRED = "kube_statefulset_replicas"
KSM_STATEFULSET_READY = "kube_statefulset_status_replicas_ready"

# Gauges of requests held outside the model's pods while none is ready
# (spec.scaleToZero.activator; sources at tags in docs/spec.md, "Scale to zero"), newest first.
# KEDA HTTP add-on interceptor: v0.14.0 on, labels route_name, route_namespace (OTel
# interceptor.request.concurrency); v0.8.0 to v0.13.x, label host="<namespace>/<name>".
KEDA_INTERCEPTOR_CONCURRENCY = "interceptor_request_concurrency"
KEDA_INTERCEPTOR_PENDING = "interceptor_pending_request_count"
# Knative Serving activator (KServe's serverless mode): 1.22 on, requests queued for capacity;
# 1.19 on, requests routed through it (labels k8s_namespace_name, kn_revision_name); up to
# 1.18 (OpenCensus), labels namespace_name, revision_name.
KNATIVE_REQUEST_QUEUED = "kn_revision_request_queued"
KNATIVE_REQUEST_CONCURRENCY = "kn_revision_request_concurrency"
KNATIVE_ACTIVATOR_CONCURRENCY = "activator_request_concurrency"
ACTIVATOR_METRICS = {
    "keda-http": (KEDA_INTERCEPTOR_CONCURRENCY, KEDA_INTERCEPTOR_PENDING),
    "knative": (KNATIVE_REQUEST_QUEUED, KNATIVE_REQUEST_CONCURRENCY, KNATIVE_ACTIVATOR_CONCURRENCY),
}

# NVML sidecar exporter metrics: a contract (nvml_exporter/README.md, Metrics).
GPU_MEMORY_TOTAL = "gpu_memory_total_bytes"
GPU_MEMORY_FREE = "gpu_memory_free_bytes"
GPU_MEMORY_USED = "gpu_memory_used_bytes"
GPU_TEMPERATURE = "gpu_temperature_celsius"
GPU_XID_ERRORS = "gpu_xid_errors_total"
GPU_EXPORTER_UP = "gpu_exporter_nvml_up"
GPU_DEVICE_UP = "gpu_device_up"  # 0: NVML reports the GPU lost
# MIG: memory of each GPU instance (labels mig_uuid, gpu_instance_id besides uuid).
GPU_MIG_MEMORY_TOTAL = "gpu_mig_memory_total_bytes"
GPU_MIG_MEMORY_FREE = "gpu_mig_memory_free_bytes"
# Read by the dashboards only.
GPU_UTILIZATION = "gpu_utilization_ratio"
GPU_POWER_USAGE = "gpu_power_usage_watts"
GPU_POWER_LIMIT = "gpu_power_limit_watts"
GPU_SM_CLOCK = "gpu_sm_clock_hertz"
# Read by GPUHardwareSlowdown (the hardware reasons) and the dashboards.
GPU_CLOCK_EVENT_ACTIVE = "gpu_clock_event_active"
GPU_HARDWARE_SLOWDOWN_REASONS = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown")
# 1 per reading NVML answers NotSupported (or lacks) on a device (label reading): the reading's
# series are omitted on purpose, and the input guards do not expect them there.
GPU_READING_UNSUPPORTED = "gpu_reading_unsupported"
# GPU health (nvml_exporter/README.md, Metrics): uncorrectable ECC errors (error_type), row
# remapping, NVLink errors (link, counter), PCIe replays; energy for the dashboards.
GPU_ENERGY = "gpu_energy_joules_total"
GPU_ECC_ERRORS = "gpu_ecc_errors_total"  # aggregate (lifetime) counts
GPU_ECC_VOLATILE_ERRORS = "gpu_ecc_volatile_errors_total"  # since the driver loaded
GPU_ROW_REMAP_FAILURE = "gpu_row_remap_failure"
GPU_ROW_REMAP_PENDING = "gpu_row_remap_pending"
# Rows remapped over the GPU's lifetime, label cause (correctable|uncorrectable).
GPU_REMAPPED_ROWS = "gpu_remapped_rows_total"
# Pages retired over the GPU's lifetime (before Ampere: page retirement, no row remapper),
# label cause (single_bit_ecc|double_bit_ecc); pages waiting for a reset to be retired.
GPU_RETIRED_PAGES = "gpu_retired_pages_total"
GPU_RETIRED_PAGES_PENDING = "gpu_retired_pages_pending"
GPU_NVLINK_ERRORS = "gpu_nvlink_errors_total"
GPU_PCIE_REPLAYS = "gpu_pcie_replay_errors_total"
# Not a sidecar metric: the dcgm source's record of recent Xids (1 per GPU and xid).
GPU_XID_RECENT = "gpu_xid_recent"
ALERT_GPU_ECC = "GPUUncorrectableECCErrors"
ALERT_GPU_REMAP_FAILED = "GPURowRemapFailed"
ALERT_GPU_REMAP_PENDING = "GPURowRemapPending"
ALERT_GPU_UNCORRECTABLE_REMAP = "GPUUncorrectableRowsRemapped"
ALERT_GPU_PAGES_RETIRED = "GPUUncorrectablePagesRetired"
ALERT_GPU_RETIREMENT_PENDING = "GPUPageRetirementPending"
ALERT_GPU_NVLINK = "GPUNVLinkErrors"
ALERT_EFFICIENCY_REGRESSED = "ModelEfficiencyRegressed"
ALERT_GPU_PCIE = "GPUPCIeReplays"
ALERT_GPU_XID_REBOOT = "GPUXidNodeRebootRequired"
ALERT_GPU_XID_RESET = "GPUXidResetRequired"
ALERT_GPU_XID_APPLICATION = "GPUXidApplicationError"
ALERTS_SERIES = "ALERTS"

# Install overlay (helm/, manifests/): the sidecar and the Kubernetes objects obsgen emits.
GPU_EXPORTER_CONTAINER = "nvml-exporter"  # the GPU alerts select container="nvml-exporter"
GPU_EXPORTER_PORT = 9445
GPU_EXPORTER_PORT_NAME = "gpu-metrics"  # unique in the pod: the model may name its port metrics
DASHBOARD_LABEL = "grafana_dashboard"  # Grafana chart sidecar: label and value it watches
DASHBOARD_LABEL_VALUE = "1"
DASHBOARD_FOLDER_ANNOTATION = "grafana_folder"
DASHBOARD_FOLDER = "Model serving"
DASHBOARD_PROVIDER = "obsgen"  # grafana.dashboards provider (--dashboards-via values)
PART_OF = "obsgen"  # app.kubernetes.io/part-of on every plain manifest
SERVICE_OBJECT_LABEL = "obsgen/service"  # names the service on every object, chart ones too
ALL_SERVICES_VALUES = "helm/values-observability.yaml"


# Identity is (namespace, service): one repository may hold two specs named ``chat`` in
# namespaces ``team-a`` and ``team-b``. Every file, rule group, Mimir namespace and Kubernetes
# object name below takes a service's *stem*: its name while no other spec of the render shares
# it (so single-namespace repositories keep every name), else ``<name>--<namespace>``. Labels
# (``service``) and dashboard uids (:func:`dashboard_uid`, which hash the namespace) keep the
# name. A name with ``--`` cannot be a stem of another's: see :func:`qualified_stem`.
STEM_SEPARATOR = "--"


def qualified_stem(service: str, namespace: str | None) -> str:
    """The stem of ``service`` when another spec shares its name: ``<service>--<namespace>``
    (``chat--team-a``; a DNS-1123 label while both parts are and the total stays within 63
    characters, which :func:`generator.render.load_plans` checks), or ``service`` when the
    spec names no namespace."""
    return f"{service}{STEM_SEPARATOR}{namespace}" if namespace else service


def k8s_name(service: str, part: str = "") -> str:
    """Kubernetes object name ``obsgen-<service>[-<part>]`` (rules, monitors, ConfigMaps)."""
    return f"obsgen-{service}-{part}" if part else f"obsgen-{service}"


def values_file(service: str) -> str:
    """Repository path of a service's kube-prometheus-stack values overlay."""
    return f"helm/values-{service}.yaml"


def sidecar_values_file(service: str) -> str:
    """Repository path of a service's overlay for the model's own chart (NVML sidecar)."""
    return f"helm/sidecar-{service}.yaml"


def manifest_file(service: str, kind: str) -> str:
    """Repository path of one plain manifest of a service (``manifests/<service>/<kind>.yaml``)."""
    return f"manifests/{service}/{kind}.yaml"


def window(ms: int) -> str:
    """Window suffix used in record names: ``3600000`` → ``1h``."""
    return format_duration_ms(ms)


def level(group_by: tuple[str, ...]) -> str:
    """The ``level`` part: ``service`` plus the ``groupBy`` labels (``service_model_name``)."""
    return "_".join((SERVICE, *group_by))


def record(group_by: tuple[str, ...], metric: str, operations: str) -> str:
    """A recording-rule name ``level:metric:operations``."""
    return f"{level(group_by)}:{metric}:{operations}"


# Server-neutral metric parts of record names.
REQUESTS = "model_requests"
REQUEST_ERRORS = "model_request_errors"
LATENCY = "model_latency_seconds"
SLOW_REQUESTS = "model_slow_requests"
QUEUE_DEPTH = "model_queue_depth"
RUNNING_REQUESTS = "model_running_requests"
KV_CACHE_USAGE = "model_kv_cache_usage"
PREEMPTIONS = "model_preemptions"  # requests preempted per second
PREFIX_CACHE_HITS = "model_prefix_cache_hits"  # share (0–1) of looked-up prompt tokens found
# One record of bad and total events: renamed from slo_events (good and total) so that an
# upgrade starts both series together, never a window of new bad over old total events.
SLI_EVENTS = "slo_outcomes"
SLI_ERROR = "slo_sli_error"
SLO_BUDGET_REMAINING = "slo_error_budget_remaining"
SLO_BURN_RATE = "slo_burn_rate"
# Seconds until the remaining budget is spent at the fastest tier's current burn rate.
SLO_BUDGET_EXHAUSTION = "slo_error_budget_exhaustion_seconds"
SLO_SLI = "slo_sli"
SLO_OBJECTIVE = "slo_objective"


def increase(ms: int) -> str:
    """Operations part of a per-evaluation increment: ``increase1m`` (events since the
    evaluation ``ms`` earlier, see :func:`generator.promql.sum_increments`)."""
    return f"increase{window(ms)}"


def ratio_rate(ms: int) -> str:
    """Operations part of a ratio of event counts over a window: ``ratio_rate1h``."""
    return f"ratio_rate{window(ms)}"


def group_name(service: str, part: str) -> str:
    """Rule group name: ``obsgen.<service>.<part>`` (unique per service)."""
    return f"obsgen.{service}.{part}"


def rules_file(service: str) -> str:
    """Repository path of a service's rule file."""
    return f"rules/{service}.rules.yaml"


def rule_tests_file(service: str, slow_interval: str | None = None) -> str:
    """Repository path of a service's generated promtool test file; ``slow_interval`` (e.g.
    ``10m``) names the extra file whose cases run at that coarser evaluation interval."""
    if slow_interval is not None:
        return f"rules/{service}.slow-{slow_interval}.test.yaml"
    return f"rules/{service}.test.yaml"


def mimir_file(service: str) -> str:
    """Repository path of a service's rule file for Grafana Mimir's ruler (``mimirtool``)."""
    return f"mimir/{service}.yaml"


def mimir_namespace(service: str) -> str:
    """Mimir ruler namespace of a service's rule groups: ``obsgen-<service>``, the name of its
    PrometheusRule object too; the ``obsgen-`` prefix lets ``mimirtool rules sync`` keep to
    obsgen's namespaces (``--namespaces-regex '^obsgen-'``)."""
    return k8s_name(service)


def dashboard_file(service: str) -> str:
    """Repository path of a service's dashboard."""
    return f"dashboards/{service}.json"


def fleet_dashboard_file() -> str:
    """Repository path of the fleet overview dashboard."""
    return "dashboards/fleet-overview.json"


# Grafana keeps one dashboard per uid (at most 40 characters) and its dashboard sidecar one file
# per name in a folder, so both must tell apart what a repository cannot see: the same service
# name in two namespaces, or two repositories' fleet overviews in one Grafana. The hash covers
# the whole identity; the readable part is only a hint and may be cut short.
UID_MAX = 40
_UID_PREFIX = "obsgen-"
_UID_HASH_CHARS = 8


def _scoped_uid(kind: str, *identity: str | None) -> str:
    """``obsgen-<readable>-<8 hex>``: the hash of ``kind`` and every identity part (``None``
    and ``""`` count as distinct from any name), the readable part their names, cut to fit."""
    import hashlib

    key = "\x1f".join((kind, *(part or "" for part in identity)))
    digest = hashlib.sha256(key.encode()).hexdigest()[:_UID_HASH_CHARS]
    room = UID_MAX - len(_UID_PREFIX) - 1 - _UID_HASH_CHARS
    readable = re.sub(r"[^a-z0-9-]+", "-", "-".join(part for part in identity if part).lower())
    readable = readable[:room].strip("-")
    return f"{_UID_PREFIX}{readable}-{digest}" if readable else f"{_UID_PREFIX}{digest}"


def dashboard_uid(service: str, namespace: str | None, cluster: str | None = None) -> str:
    """Grafana uid of a service's dashboard (≤ 40 characters, deterministic).

    Unique per (cluster, namespace, service): two teams' services both named ``chat`` in
    namespaces ``team-a`` and ``team-b`` get different uids. ``namespace`` is the one of
    ``spec.selector`` (``None`` when the selector names none). ``cluster`` is the hook for
    ``clusterLabel``: pass the cluster's value once specs carry it.
    """
    return _scoped_uid("service", service, namespace, cluster)


def fleet_dashboard_uid(fleet: str, cluster: str | None = None) -> str:
    """Grafana uid of a fleet overview (≤ 40 characters, deterministic), unique per ``fleet``
    name (``render.fleetName`` of obsgen.yaml, see :func:`fleet_name`) and ``cluster``."""
    return _scoped_uid("fleet", f"fleet-{fleet}", cluster)


def fleet_name(configured: str | None, namespaces: Iterable[str | None]) -> str:
    """The fleet overview's identity: ``configured`` (``render.fleetName``) when set, else the
    sorted namespaces of its services joined by ``+`` (``all`` when none names one).

    Two repositories rendering into one Grafana differ by their namespaces or by the name
    each configures; set ``render.fleetName`` to keep the uid when a namespace is added.
    """
    if configured:
        return configured
    return "+".join(sorted({n for n in namespaces if n})) or "all"


def dashboard_sidecar_file(uid: str) -> str:
    """File name of a dashboard in Grafana's provisioning folder (the ConfigMap data key for
    the dashboard sidecar, the key under ``grafana.dashboards.<provider>``): ``<uid>.json``,
    so it is as unique as the uid."""
    return f"{uid}.json"


RUNBOOKS_DIR = "docs/runbooks"
# Where a runbook query names the cluster: the on-call replaces it with the alert's cluster label.
CLUSTER_PLACEHOLDER = "<cluster>"


def runbook_file(alert: str, service: str | None = None) -> str:
    """Repository path of an alert's runbook page: ``docs/runbooks/<Alert>.md`` for every
    service, ``docs/runbooks/<service>/<Alert>.md`` for one (its checks first)."""
    if service is None:
        return f"{RUNBOOKS_DIR}/{alert}.md"
    return f"{RUNBOOKS_DIR}/{service}/{alert}.md"


# amtool's generated route tests (built and run by every render that proves, as the promtool
# tests are; :mod:`generator.builders.alertmanager` writes them).
ROUTE_TESTS_FILE = "alertmanager/routes.test.yaml"

# Folders whose generated files render owns (stale ones are removed / reported).
OUTPUT_DIRS = (
    "rules",
    "dashboards",
    "helm",
    "manifests",
    RUNBOOKS_DIR,
    "alertmanager",
    "mimir",
)

# The install paths a project may choose to write (``render.outputs`` of obsgen.yaml), in the
# order docs/config.md lists them; :func:`output_kind` says which one a file belongs to.
OUTPUT_KINDS = (
    "rules",
    "tests",
    "dashboards",
    "helm",
    "helm-per-service",
    "manifests",
    "runbooks",
    "alertmanager",
    "mimir",
)


def output_kind(path: str) -> str:
    """The install path (one of :data:`OUTPUT_KINDS`) of repository ``path``: ``tests`` for
    the generated proofs (promtool's ``rules/*.test.yaml``, amtool's :data:`ROUTE_TESTS_FILE`), ``runbooks`` for docs/runbooks/,
    ``helm-per-service`` for ``helm/values-<service>.yaml`` (the alternative to
    :data:`ALL_SERVICES_VALUES`), else the top-level folder.

    Raises:
        ValueError: ``path`` is in none of :data:`OUTPUT_DIRS`.
    """
    if path.startswith("rules/"):
        return "tests" if path.endswith(".test.yaml") else "rules"
    if path == ROUTE_TESTS_FILE:
        return "tests"
    if path.startswith(RUNBOOKS_DIR + "/"):
        return "runbooks"
    if path.startswith("helm/values-") and path != ALL_SERVICES_VALUES:
        return "helm-per-service"
    top = path.partition("/")[0]
    if top in OUTPUT_KINDS and top != "tests":
        return top
    raise ValueError(f"{path}: not under an output folder")


def owned_by(path: str, service: str) -> bool:
    """True when repository ``path`` is an output of ``service`` alone (not a fleet-wide file)."""
    own = (f"rules/{service}.", f"manifests/{service}/", f"{RUNBOOKS_DIR}/{service}/")
    return path.startswith(own) or path in (
        mimir_file(service),
        dashboard_file(service),
        values_file(service),
        sidecar_values_file(service),
        f"helm/prometheus-adapter-{service}.yaml",
    )


# Fleet overview: one series per service under the same names for every service, so
# the overview queries each name once instead of one term per service.
FLEET_INFO = "service:fleet_info:static"  # value 1; labels dashboard_uid, team, server
FLEET_SLI = "service:fleet_slo_sli:min"  # worst SLO's SLI over its window (ratio 0–1)
FLEET_BUDGET = "service:fleet_slo_error_budget_remaining:min"  # worst SLO's budget left
FLEET_P99 = "service:fleet_latency_p99_seconds:max"  # p99 of the preferred indicator (s)
FLEET_ERROR_RATIO = "service:fleet_error_ratio:rate5m"  # errors / requests over 5m
FLEET_QUEUE = "service:fleet_queue_depth:sum"
FLEET_GPU_HEADROOM = "service:fleet_gpu_memory_headroom:min"  # lowest free / total
