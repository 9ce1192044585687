"""The spec's ``alerts`` section: one model per alert family, and :class:`Alerts` listing them."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import (
    Field,
    field_validator,
)

from generator.spec_types import (
    AlertFor,
    AlertRatio,
    DurationMs,
    FreeShare,
    HeldWindow,
    Horizon,
    Lookback,
    MinEvents,
    Severity,
    StrictModel,
)
from generator.units import (
    decimal_str,
)

# Largest count or rate a threshold may name: far above any server's queue or preemption
# rate, far below 2**53, past which a float no longer holds every integer Prometheus compares.
MAX_THRESHOLD = 1e9


class AlertBase(StrictModel):
    """Common alert switches: ``enabled``, ``for`` and ``severity``."""

    enabled: bool = True
    for_: Annotated[AlertFor | None, Field(alias="for")] = None
    severity: Severity | None = None


class EfficiencyRegressionAlert(AlertBase):
    """``alerts.efficiencyRegression`` (off unless set): a ticket when energy per 1,000 output
    tokens (``measure: energy``) or GPU-seconds per million output tokens (``gpuSeconds``)
    over the last hour is more than ``maxIncrease`` (ratio, 0.2 = 20 %) above the same hour
    ``baseline`` ago (``1d`` or ``7d``), while both hours averaged at least
    ``minTokensPerSecond`` output tokens a second (docs/spec.md, "Efficiency")."""

    max_increase: Annotated[float, Field(gt=0, le=10)] | None = None
    baseline: Literal["1d", "7d"] | None = None
    min_tokens_per_second: Annotated[float, Field(gt=0, le=MAX_THRESHOLD)] | None = None
    measure: Literal["energy", "gpuSeconds"] | None = None


class LatencyP99Alert(AlertBase):
    """``alerts.latencyP99``: p99 over 5m above ``threshold``."""

    threshold: DurationMs | None = None
    indicator: str | None = None


class SlowRequestsAlert(AlertBase):
    """``alerts.slowRequests``: share of requests slower than ``threshold`` above ``maxRatio``."""

    threshold: DurationMs | None = None
    max_ratio: AlertRatio | None = None
    indicator: str | None = None
    min_events: MinEvents | None = None


class ErrorRatioAlert(AlertBase):
    """``alerts.errorRatio``: failed requests / all requests above ``maxRatio``."""

    max_ratio: AlertRatio | None = None
    min_events: MinEvents | None = None


class QueueDepthAlert(AlertBase):
    """``alerts.queueDepth``: queued requests (summed over pods) above ``max``."""

    max: Annotated[float, Field(ge=0, le=MAX_THRESHOLD)] | None = None


class KVCacheAlert(AlertBase):
    """``alerts.kvCache``: KV-cache usage (ratio 0–1) above ``max``."""

    max: AlertRatio | None = None


class PreemptionsAlert(AlertBase):
    """``alerts.preemptions``: requests preempted per second (summed over pods, 5m rate) above
    ``max``."""

    max: Annotated[float, Field(ge=0, le=MAX_THRESHOLD)] | None = None


class PrefixCacheAlert(AlertBase):
    """``alerts.prefixCache``: the prefix cache's hit ratio (0–1) below ``min`` while requests
    flow."""

    min: AlertRatio | None = None


class LoraPoolAlert(AlertBase):
    """``alerts.loraPool``: the LoRA pool full (``maxLoras`` adapters running: the server's
    ``--max-loras``, vLLM's default 1) with adapters waiting (docs/spec.md, "LoRA adapter
    pool")."""

    max_loras: Annotated[int, Field(ge=1, le=256)] | None = None


class SpecDecodeAlert(AlertBase):
    """``alerts.specDecode``: the speculative-decoding acceptance rate (accepted / draft tokens)
    over 1h more than ``maxDrop`` (0–1, relative) below its own average over the last day."""

    max_drop: AlertRatio | None = None


class KVTransferAlert(AlertBase):
    """``alerts.kvTransfer``: disaggregated serving's KV-cache transfers on the decode role:
    failed / all transfers over 5m above ``maxRatio`` (0–1), or the p99 transfer time over 5m
    above ``threshold`` (below 5s, the largest bucket of ``vllm:nixl_xfer_time_seconds``)."""

    max_ratio: AlertRatio | None = None
    threshold: DurationMs | None = None

    @field_validator("threshold")
    @classmethod
    def _below_top_bucket(cls, value: int | None) -> int | None:
        if value is not None and not 0 < value < 5000:
            raise ValueError(
                f"{decimal_str(value / 1000)}s is not between 0 and 5s: 5s is the largest "
                "bucket bound of vllm:nixl_xfer_time_seconds (v0.11.1 … v0.14.0), so a p99 "
                "never reads more and the alert could never fire"
            )
        return value


class MemoryHeadroomAlert(AlertBase):
    """``alerts.memoryHeadroom``: working set leaves less than ``minFree`` (0–1) of the limit."""

    min_free: FreeShare | None = None


class MemoryExhaustionAlert(AlertBase):
    """``alerts.memoryExhaustion``: working-set trend reaches the limit within ``horizon``."""

    horizon: Horizon | None = None
    lookback: Lookback | None = None


class GPUMemoryHeadroomAlert(AlertBase):
    """``alerts.gpuMemoryHeadroom``: GPU memory free / total below ``minFree``."""

    min_free: FreeShare | None = None


class WindowedAlert(AlertBase):
    """An alert on the time a condition held within ``window``: it fires once the condition
    held ``for`` in total within the last ``window`` (default 3 × ``for``), however often it
    was interrupted, so a flapping condition cannot reset it."""

    window: HeldWindow | None = None


class CrashLoopAlert(AlertBase):
    """``alerts.crashLoop``: the model container restarted ``minRestarts`` times within
    ``window``, or was seen waiting in ``CrashLoopBackOff`` there."""

    window: HeldWindow | None = None
    min_restarts: Annotated[int, Field(ge=1, le=1000)] | None = None


class GPUErrorRateAlert(AlertBase):
    """``alerts.gpuNvLinkErrors`` / ``alerts.gpuPcieReplays``: a GPU's link errors per minute
    (10m rate) above ``max``."""

    max: Annotated[float, Field(ge=0, le=1e9)] | None = None


class GPUTemperatureAlert(AlertBase):
    """``alerts.gpuTemperature``: GPU temperature above ``max`` degrees Celsius."""

    max: Annotated[float, Field(gt=0, le=150)] | None = None


# Inputs the guards (``ModelSignalMissing``) can watch: the ``signal`` label values. The
# server's metrics are named by their ``spec.metrics`` key; the rest by what they are.
Signal = Literal[
    "requests",
    "requestErrors",
    "failureSources",
    "requestDuration",
    "timeToFirstToken",
    "interTokenLatency",
    "requestQueueTime",
    "timePerOutputToken",
    "queueDepth",
    "kvCacheUsage",
    "preemptions",
    "prefixCache",
    "pods",
    "memoryWorkingSet",
    "memoryLimit",
    "containerRestarts",
    "oomEvents",
    "desiredReplicas",
    "gpuExporter",
    "gpuDevices",
    "gpuMemory",
    "gpuTemperature",
    "gpuClockEvents",
    "gpuXid",
    "gpuEcc",
    "gpuRowRemap",
    "gpuNvLink",
    "gpuPcieReplays",
    "gpuRetiredPages",
]
SIGNALS: tuple[str, ...] = get_args(Signal)


class SignalMissingAlert(AlertBase):
    """``alerts.signalMissing``: input guards. ``ModelSignalMissing`` fires when the service's
    targets are up but a series an enabled alert or SLO reads has been absent for ``for``
    (default 15m, at least 4 × ``spec.prometheus.scrapeInterval``). ``ignore`` lists signals
    not to guard (a series you know is absent on purpose)."""

    ignore: list[Signal] | None = None

    @field_validator("ignore")
    @classmethod
    def _unique(cls, ignore: list[str] | None) -> list[str] | None:
        if ignore is not None and len(set(ignore)) != len(ignore):
            raise ValueError("a signal is listed twice; list each once")
        return ignore


class Alerts(StrictModel):
    """``spec.alerts``: each entry optional (preset default) or ``enabled: false``."""

    latency_p99: LatencyP99Alert | None = None
    slow_requests: SlowRequestsAlert | None = None
    error_ratio: ErrorRatioAlert | None = None
    queue_depth: QueueDepthAlert | None = None
    kv_cache: KVCacheAlert | None = None
    preemptions: PreemptionsAlert | None = None
    prefix_cache: PrefixCacheAlert | None = None
    spec_decode: SpecDecodeAlert | None = None
    lora_pool: LoraPoolAlert | None = None
    kv_transfer: KVTransferAlert | None = None
    memory_headroom: MemoryHeadroomAlert | None = None
    memory_exhaustion: MemoryExhaustionAlert | None = None
    oom_killed: AlertBase | None = None
    crash_loop: CrashLoopAlert | None = None
    target_down: WindowedAlert | None = None
    gpu_memory_headroom: GPUMemoryHeadroomAlert | None = None
    gpu_temperature: GPUTemperatureAlert | None = None
    gpu_xid_errors: AlertBase | None = None
    gpu_exporter_down: AlertBase | None = None
    gpu_device_lost: AlertBase | None = None
    gpu_hardware_slowdown: WindowedAlert | None = None
    gpu_ecc_errors: AlertBase | None = None
    gpu_row_remap_failure: AlertBase | None = None
    gpu_row_remap_pending: AlertBase | None = None
    gpu_uncorrectable_remaps: AlertBase | None = None
    gpu_pages_retired: AlertBase | None = None
    gpu_page_retirement_pending: AlertBase | None = None
    efficiency_regression: EfficiencyRegressionAlert | None = None
    gpu_nv_link_errors: GPUErrorRateAlert | None = None
    gpu_pcie_replays: GPUErrorRateAlert | None = None
    gpu_xid_reboot: AlertBase | None = None
    gpu_xid_reset: AlertBase | None = None
    gpu_xid_application: AlertBase | None = None
    replicas_unavailable: WindowedAlert | None = None
    cold_start: AlertBase | None = None
    signal_missing: SignalMissingAlert | None = None
