"""The spec's ``alerts`` section: the switches every entry has (:class:`AlertBase`), the
``signalMissing`` entry, and :func:`alerts_model`, which assembles ``spec.alerts`` from the
families' own models (``Family.spec_model``, in each module of :mod:`generator.families`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import (
    Field,
    create_model,
    field_validator,
)

from generator.spec_types import (
    AlertFor,
    HeldWindow,
    Severity,
    StrictModel,
)

if TYPE_CHECKING:
    from generator.families.base import Family

# Largest count or rate a threshold may name: far above any server's queue or preemption
# rate, far below 2**53, past which a float no longer holds every integer Prometheus compares.
MAX_THRESHOLD = 1e9


class AlertBase(StrictModel):
    """Common alert switches: ``enabled``, ``for`` and ``severity``."""

    enabled: bool = True
    for_: Annotated[AlertFor | None, Field(alias="for")] = None
    severity: Severity | None = None


class WindowedAlert(AlertBase):
    """An alert on the time a condition held within ``window``: it fires once the condition
    held ``for`` in total within the last ``window`` (default 3 × ``for``), however often it
    was interrupted, so a flapping condition cannot reset it."""

    window: HeldWindow | None = None


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


# The order of the families' entries in ``spec.alerts`` (and in docs/spec.schema.json, the
# spec reference and a spec's list of problems), which predates the registry's output order;
# a family not listed here follows these in registry order, before ``signalMissing``.
SPEC_ORDER = (
    "latency_p99",
    "slow_requests",
    "error_ratio",
    "queue_depth",
    "kv_cache",
    "preemptions",
    "prefix_cache",
    "spec_decode",
    "lora_pool",
    "kv_transfer",
    "memory_headroom",
    "memory_exhaustion",
    "oom_killed",
    "crash_loop",
    "target_down",
    "gpu_memory_headroom",
    "gpu_temperature",
    "gpu_xid_errors",
    "gpu_exporter_down",
    "gpu_device_lost",
    "gpu_hardware_slowdown",
    "gpu_ecc_errors",
    "gpu_row_remap_failure",
    "gpu_row_remap_pending",
    "gpu_uncorrectable_remaps",
    "gpu_pages_retired",
    "gpu_page_retirement_pending",
    "efficiency_regression",
    "gpu_nv_link_errors",
    "gpu_pcie_replays",
    "gpu_xid_reboot",
    "gpu_xid_reset",
    "gpu_xid_application",
    "replicas_unavailable",
    "cold_start",
)


def alerts_model(families: Iterable[Family], module: str) -> type[StrictModel]:
    """The ``spec.alerts`` model: one optional entry per family (its ``Family.spec_model``,
    field ``Family.key``, written ``Family.spec_field``), in :data:`SPEC_ORDER`, then
    ``signalMissing``. ``module``: where the model is kept (its name for pickling)."""
    rank = {key: i for i, key in enumerate(SPEC_ORDER)}
    ordered = sorted(families, key=lambda f: rank.get(f.key, len(rank)))
    fields: dict[str, Any] = {f.key: (f.spec_model | None, None) for f in ordered}
    fields["signal_missing"] = (SignalMissingAlert | None, None)
    return create_model(
        "Alerts",
        __base__=StrictModel,
        __doc__="``spec.alerts``: each entry optional (preset default) or ``enabled: false``.",
        __module__=module,
        **fields,
    )
