"""Every metric the exporter emits: name, type, HELP text and labels, in one table.

The names are a contract (nvml_exporter/README.md, Metrics; docs/contracts.md): device metrics are prefixed ``gpu_``, in base units
(bytes, ratio 0-1, celsius, watts, joules, hertz, seconds) and keyed by ``uuid`` plus ``gpu``
(the NVML index as this process sees it); identity labels appear only on ``gpu_info``. Self
metrics are prefixed ``gpu_exporter_``. Counter names here carry their ``_total`` suffix as
exposed in the text format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

DEVICE_LABELS: tuple[str, ...] = ("uuid", "gpu")
MIG_LABELS: tuple[str, ...] = ("mig_uuid", "gpu_instance_id")
INFO_LABELS: tuple[str, ...] = (
    "model_name",
    "pci_bus_id",
    "driver_version",
    "cuda_driver_version",
    "mig_mode",
)


@dataclass(frozen=True)
class MetricSpec:
    """One metric family.

    Attributes:
        name: the exposed name (counters end in ``_total``).
        kind: ``gauge`` or ``counter``.
        help: the HELP text: one sentence, with the unit.
        labels: label names, in order.
    """

    name: str
    kind: Literal["gauge", "counter"]
    help: str
    labels: tuple[str, ...]

    def family(self) -> GaugeMetricFamily | CounterMetricFamily:
        """Return a new, empty family for this metric."""
        if self.kind == "counter":
            return CounterMetricFamily(self.name, self.help, labels=self.labels)
        return GaugeMetricFamily(self.name, self.help, labels=self.labels)


def _gauge(name: str, help: str, extra: tuple[str, ...] = ()) -> MetricSpec:
    return MetricSpec(name, "gauge", help, DEVICE_LABELS + extra)


def _counter(name: str, help: str, extra: tuple[str, ...] = ()) -> MetricSpec:
    return MetricSpec(name, "counter", help, DEVICE_LABELS + extra)


# Device metrics, in exposition order.
DEVICE_METRICS: tuple[MetricSpec, ...] = (
    _gauge(
        "gpu_info",
        "Identity of the GPU; the value is always 1 (model, PCI bus id, driver and CUDA "
        "driver version, MIG mode).",
        INFO_LABELS,
    ),
    _gauge(
        "gpu_device_up",
        "Whether the GPU answers NVML calls (1) or NVML reported it lost (0).",
    ),
    _gauge(
        "gpu_reading_unsupported",
        "1 for each reading NVML does not support on this GPU (NotSupported, or no such "
        "call; for nvlink, no active link): its series are omitted on purpose (frame-buffer "
        "memory on a unified-memory GPU).",
        ("reading",),
    ),
    _gauge("gpu_memory_total_bytes", "Total frame-buffer memory of the GPU in bytes."),
    _gauge(
        "gpu_memory_used_bytes",
        "Frame-buffer memory allocated on the GPU in bytes (includes reserved memory when "
        "gpu_memory_reserved_bytes is absent).",
    ),
    _gauge("gpu_memory_free_bytes", "Frame-buffer memory available for allocation in bytes."),
    _gauge(
        "gpu_memory_reserved_bytes",
        "Frame-buffer memory reserved by the driver and firmware in bytes.",
    ),
    _gauge(
        "gpu_utilization_ratio",
        "Fraction of the last sample period (0-1) during which a kernel ran on the GPU.",
    ),
    _gauge(
        "gpu_memory_controller_utilization_ratio",
        "Fraction of the last sample period (0-1) during which device memory was read or written.",
    ),
    _gauge("gpu_temperature_celsius", "GPU core temperature in degrees Celsius."),
    _gauge("gpu_power_usage_watts", "Power drawn by the GPU and its memory in watts."),
    _gauge("gpu_power_limit_watts", "Power limit enforced on the GPU in watts."),
    _counter(
        "gpu_energy_joules_total",
        "Energy consumed by the GPU since the driver was loaded in joules.",
    ),
    _gauge("gpu_sm_clock_hertz", "Current streaming-multiprocessor clock in hertz."),
    _gauge("gpu_memory_clock_hertz", "Current memory clock in hertz."),
    _gauge(
        "gpu_clock_event_active",
        "Whether a reason is currently holding the GPU clocks down (1) or not (0); only "
        "reasons the GPU supports are listed.",
        ("reason",),
    ),
    _counter(
        "gpu_ecc_errors_total",
        "ECC memory errors over the GPU's lifetime (aggregate counter), by error type.",
        ("error_type",),
    ),
    _counter(
        "gpu_ecc_volatile_errors_total",
        "ECC memory errors since the driver was loaded (volatile counter), by error type.",
        ("error_type",),
    ),
    _counter(
        "gpu_remapped_rows_total",
        "Memory rows remapped over the GPU's lifetime, by cause.",
        ("cause",),
    ),
    _gauge(
        "gpu_row_remap_pending",
        "Whether a memory row remapping waits for the next GPU reset (1) or not (0).",
    ),
    _gauge(
        "gpu_row_remap_failure",
        "Whether a memory row remapping has failed on the GPU (1) or not (0).",
    ),
    _counter(
        "gpu_retired_pages_total",
        "Memory pages retired over the GPU's lifetime (before Ampere), by cause.",
        ("cause",),
    ),
    _gauge(
        "gpu_retired_pages_pending",
        "Whether retired pages wait for the driver to reload (1) or not (0).",
    ),
    _counter(
        "gpu_pcie_replay_errors_total",
        "PCIe replays (link-level retransmissions) since the driver was loaded.",
    ),
    _counter(
        "gpu_nvlink_errors_total",
        "NVLink data-link errors of each active link until the counters are reset, by link "
        "and counter (replay, recovery, crc_flit, crc_data).",
        ("link", "counter"),
    ),
    _counter(
        "gpu_xid_errors_total",
        "Xid critical errors reported by the driver since the exporter started, by Xid.",
        ("xid",),
    ),
    _gauge(
        "gpu_xid_last_timestamp_seconds",
        "Unix time in seconds of the last Xid critical error, by Xid.",
        ("xid",),
    ),
    _gauge(
        "gpu_mig_memory_total_bytes",
        "Total frame-buffer memory of a MIG GPU instance in bytes.",
        MIG_LABELS,
    ),
    _gauge(
        "gpu_mig_memory_used_bytes",
        "Frame-buffer memory allocated in a MIG GPU instance in bytes.",
        MIG_LABELS,
    ),
    _gauge(
        "gpu_mig_memory_free_bytes",
        "Frame-buffer memory available in a MIG GPU instance in bytes.",
        MIG_LABELS,
    ),
)

NVML_UP = MetricSpec(
    "gpu_exporter_nvml_up",
    "gauge",
    "Whether NVML is initialised (1) or not yet, e.g. library or driver missing (0).",
    (),
)
COLLECTOR_ERRORS = MetricSpec(
    "gpu_exporter_collector_errors_total",
    "counter",
    "NVML calls and collection steps that failed since the exporter started, by collector "
    "and error; unsupported metrics are not counted.",
    ("collector", "error"),
)
SCRAPE_DURATION = MetricSpec(
    "gpu_exporter_scrape_duration_seconds",
    "gauge",
    "Time spent collecting NVML readings for this scrape in seconds.",
    (),
)
BUILD_INFO = MetricSpec(
    "gpu_exporter_build_info",
    "gauge",
    "Versions the exporter was built from; the value is always 1.",
    ("version", "nvidia_ml_py_version", "python_version"),
)
SELF_METRICS: tuple[MetricSpec, ...] = (NVML_UP, COLLECTOR_ERRORS, SCRAPE_DURATION, BUILD_INFO)

SPECS: dict[str, MetricSpec] = {spec.name: spec for spec in DEVICE_METRICS + SELF_METRICS}


def empty_families() -> list[Metric]:
    """Return one empty family per metric, in exposition order (for ``describe()``)."""
    return [spec.family() for spec in DEVICE_METRICS + SELF_METRICS]
