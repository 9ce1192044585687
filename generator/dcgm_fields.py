"""dcgm-exporter's series as obsgen reads them (``spec.gpu.exporter: dcgm``): fields and labels.

Field names, types and units: NVIDIA/dcgm-exporter ``etc/default-counters.csv`` at tags
2.4.7-2.6.11, 3.3.9-3.6.1 and 4.5.2-4.8.1 (vendored, tests/data/dcgm-exporter/); fields no
default file lists (clock event reasons, pending row remaps) from NVIDIA/go-dcgm's field-name
table at the commit each release pins. Labels: the releases' exposition template
(``internal/pkg/rendermetrics/render_metrics.go``) and pod mapping (``transformation/const.go``).
Each value is one series per GPU (per MIG GPU instance where ``GPU_I_ID`` is set).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# Labels every GPU series carries (render_metrics.go); MIG instances add GPU_I_PROFILE/GPU_I_ID.
UUID = "UUID"  # "uuid" under --use-old-namespace
GPU_INSTANCE = "GPU_I_ID"
GPU_PROFILE = "GPU_I_PROFILE"
HOSTNAME = "Hostname"
# The model pod's labels with dcgm-exporter's Kubernetes pod mapping on; a ServiceMonitor
# without honorLabels (the chart's and the GPU Operator's default) keeps the exporter's own
# target labels and renames these exported_pod, exported_namespace, exported_container.
POD_LABELS = ("pod", "namespace", "container")
EXPORTED = "exported_"
# DCGM_FI_DEV_XID_ERRORS carries the code as err_code (and err_msg) from 3.3.6-3.4.2 on.
XID_CODE = "err_code"
XID_MESSAGE = "err_msg"
XID_LABEL = "xid"  # DCGM_EXP_XID_ERRORS_COUNT's, beside window_size_in_ms
WINDOW_LABEL = "window_size_in_ms"
MIB = 2**20  # frame-buffer fields are in MiB (the 3.3.x help says "MB"; the value is MiB)

Kind = Literal["gauge", "counter"]


@dataclass(frozen=True)
class Field:
    """One DCGM field as dcgm-exporter exposes it.

    Attributes:
        names: every name the field is exposed under (the counters file's first column is the
            series name), newest first; rules read all of them.
        kind: the Prometheus type the counters file declares.
        unit: what one unit of the value is (``MiB``, ``C``, ``W``, ``mJ``, ``MHz``, ``count``).
        line: the counters-file line that enables it, as the default file writes it (commented
            out there when ``default`` is False).
        default: enabled by ``default-counters.csv`` at every tag read.
    """

    names: tuple[str, ...]
    kind: Kind
    unit: str
    line: str
    default: bool

    @property
    def name(self) -> str:
        """The newest name (the one a counters file of the newest release uses)."""
        return self.names[0]


def _f(name: str, kind: Kind, unit: str, help: str, default: bool = True) -> Field:
    return Field((name,), kind, unit, f"{name}, {kind}, {help}", default)


FB_FREE = _f("DCGM_FI_DEV_FB_FREE", "gauge", "MiB", "Framebuffer memory free (in MiB).")
FB_USED = _f("DCGM_FI_DEV_FB_USED", "gauge", "MiB", "Framebuffer memory used (in MiB).")
# Listed from 4.4.1-4.6.0 on; before it, used memory includes the reserved part.
FB_RESERVED = _f(
    "DCGM_FI_DEV_FB_RESERVED", "gauge", "MiB", "Framebuffer memory reserved (in MiB).", False
)
GPU_TEMP = _f("DCGM_FI_DEV_GPU_TEMP", "gauge", "C", "GPU temperature (in C).")
POWER_USAGE = _f("DCGM_FI_DEV_POWER_USAGE", "gauge", "W", "Power draw (in W).")
ENERGY = _f(
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "counter",
    "mJ",
    "Total energy consumption since boot (in mJ).",
)
SM_CLOCK = _f("DCGM_FI_DEV_SM_CLOCK", "gauge", "MHz", "SM clock frequency (in MHz).")
GPU_UTIL = _f("DCGM_FI_DEV_GPU_UTIL", "gauge", "%", "GPU utilization (in %).")
# The value of the LAST Xid the driver reported (0 before any): a gauge, not a count.
XID_ERRORS = _f(
    "DCGM_FI_DEV_XID_ERRORS", "gauge", "xid", "Value of the last XID error encountered."
)
# Xids per code (label xid) within --xid-count-window-size (default 5m): a windowed count,
# declared gauge (3.3.x) or counter (4.x); commented out in every default file.
XID_COUNT = _f(
    "DCGM_EXP_XID_ERRORS_COUNT", "counter", "count", "reported XIDs during last window", False
)
# A bitmask of DCGM_CLOCKS_EVENT_REASON_* (nvmlClocksEventReason* bits). go-dcgm names it
# DCGM_FI_DEV_CLOCK_THROTTLE_REASONS up to the commit 3.3.9-3.6.1 pins, both names at
# 4.2.3-4.2.0's, only DCGM_FI_DEV_CLOCKS_EVENT_REASONS at 4.5.2-4.8.1's; in no default file.
CLOCK_EVENTS = Field(
    ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"),
    "gauge",
    "bitmask",
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS, gauge, Current clock event reasons (bitmask). "
    "(Releases before 4.x: DCGM_FI_DEV_CLOCK_THROTTLE_REASONS, gauge, Current clock "
    "throttle reasons (bitmask).)",
    False,
)
ECC_DBE_VOLATILE = _f(
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
    "counter",
    "count",
    "Total number of double-bit volatile ECC errors.",
    False,
)
ECC_DBE_AGGREGATE = _f(
    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
    "counter",
    "count",
    "Total number of double-bit persistent ECC errors.",
    False,
)
ROW_REMAP_FAILURE = _f(
    "DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "bool", "Whether remapping of rows has failed"
)
# Lifetime counts of rows the row remapper replaced (Ampere and later; no series before it).
UNCORRECTABLE_REMAPPED_ROWS = _f(
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "counter",
    "count",
    "Number of remapped rows for uncorrectable errors",
)
CORRECTABLE_REMAPPED_ROWS = _f(
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    "counter",
    "count",
    "Number of remapped rows for correctable errors",
)
# go-dcgm field 396 at the commits 4.2.3-4.2.0 and later pin (and 3.3.9-3.6.1's); no default file.
ROW_REMAP_PENDING = _f(
    "DCGM_FI_DEV_ROW_REMAP_PENDING", "gauge", "bool", "Whether remapping of rows is pending", False
)
# Page retirement (before Ampere; Ampere and later remap rows instead and report none of these).
# Listed, commented out, in the default counters file at every tag read; RETIRED_PENDING is typed
# a counter there but counts the pages now waiting for a reset (it drops after one).
RETIRED_SBE = _f(
    "DCGM_FI_DEV_RETIRED_SBE",
    "counter",
    "count",
    "Total number of retired pages due to single-bit errors.",
    False,
)
RETIRED_DBE = _f(
    "DCGM_FI_DEV_RETIRED_DBE",
    "counter",
    "count",
    "Total number of retired pages due to double-bit errors.",
    False,
)
RETIRED_PENDING = _f(
    "DCGM_FI_DEV_RETIRED_PENDING",
    "counter",
    "count",
    "Total number of pages pending retirement.",
    False,
)
NVLINK_REPLAY = _f(
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
    "counter",
    "count",
    "Total number of NVLink retries.",
    False,
)
NVLINK_RECOVERY = _f(
    "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
    "counter",
    "count",
    "Total number of NVLink recovery errors.",
    False,
)
NVLINK_CRC_FLIT = _f(
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
    "counter",
    "count",
    "Total number of NVLink flow-control CRC errors.",
    False,
)
NVLINK_CRC_DATA = _f(
    "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
    "counter",
    "count",
    "Total number of NVLink data CRC errors.",
    False,
)
PCIE_REPLAY = _f(
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "count", "Total number of PCIe retries."
)

FIELDS: tuple[Field, ...] = (
    FB_FREE,
    FB_USED,
    FB_RESERVED,
    GPU_TEMP,
    POWER_USAGE,
    ENERGY,
    SM_CLOCK,
    GPU_UTIL,
    XID_ERRORS,
    XID_COUNT,
    CLOCK_EVENTS,
    ECC_DBE_VOLATILE,
    ECC_DBE_AGGREGATE,
    ROW_REMAP_FAILURE,
    ROW_REMAP_PENDING,
    UNCORRECTABLE_REMAPPED_ROWS,
    CORRECTABLE_REMAPPED_ROWS,
    RETIRED_SBE,
    RETIRED_DBE,
    RETIRED_PENDING,
    NVLINK_REPLAY,
    NVLINK_RECOVERY,
    NVLINK_CRC_FLIT,
    NVLINK_CRC_DATA,
    PCIE_REPLAY,
)
"""Every field obsgen reads, in no particular order."""

# Fields the default file enables at every tag read: one of them present says dcgm-exporter
# sees the GPU (the gate of the guards on the other fields).
PRESENCE: tuple[Field, ...] = (FB_USED, FB_FREE, GPU_TEMP, POWER_USAGE, GPU_UTIL, SM_CLOCK)

# nvmlClocksEventReason* bits (dcgm-exporter clock_events_collector.go, NVML's nvml.h) and the
# reason label obsgen's sidecar gives each (nvml_exporter/nvml.py CLOCK_EVENT_REASONS).
CLOCK_EVENT_BITS: tuple[tuple[int, str], ...] = (
    (0x001, "gpu_idle"),
    (0x002, "applications_clocks_setting"),
    (0x004, "sw_power_cap"),
    (0x008, "hw_slowdown"),
    (0x010, "sync_boost"),
    (0x020, "sw_thermal_slowdown"),
    (0x040, "hw_thermal_slowdown"),
    (0x080, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
)


def remedy(*fields: Field) -> str:
    """What to add to dcgm-exporter's counters file (its ConfigMap) for ``fields``."""
    lines = "; ".join(f"`{f.line}`" for f in fields)
    return (
        f"dcgm-exporter exports no {' / '.join(n for f in fields for n in f.names)} for this "
        f"GPU: add the line {lines} to its counters file (the --collectors CSV, in the GPU "
        "Operator the ConfigMap dcgmExporter.config names) and restart it."
    )
