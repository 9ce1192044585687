"""Synthetic GPU series of the generated promtool tests, from either source.

Cases say what one GPU reads in the sidecar's names and units (nvml_exporter/README.md);
here those become the sidecar's series or, under ``spec.gpu.exporter: dcgm``, the series a
dcgm-exporter release (4.5.2-4.8.1: fields of its default counters file plus those obsgen
asks users to add, labels of its exposition template) exposes for the same reading:
frame buffer in MiB (used = total − free − reserved), energy in mJ, SM clock in MHz, the
clock event reasons as one bitmask, Xids as the last-value gauge with ``err_code``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from generator import dcgm_fields as f
from generator import naming
from generator.parts.series_parts import (
    UUID,
    Minutes,
    example_pod,
    labels_of,
    sidecar_labels,
    up_labels,
    values_text,
    without,
)
from generator.promql import go_float

if TYPE_CHECKING:
    from generator.parts.promtool_series import Series
    from generator.plan import ServicePlan

TOTAL = 80 * 2**30  # a healthy GPU's memory (bytes)
RESERVED = 512 * f.MIB  # what a 4.x release reports reserved on it
DCGM_TARGET = {
    "namespace": "gpu-operator",
    "pod": "nvidia-dcgm-exporter-7xk2p",
    "container": "nvidia-dcgm-exporter",
    "service": "nvidia-dcgm-exporter",
    "endpoint": "gpu-metrics",
    "instance": "10.0.0.2:9400",
}
DEVICE = {
    "gpu": "0",
    "pci_bus_id": "00000000:17:00.0",
    "device": "nvidia0",
    "modelName": "NVIDIA H100 80GB HBM3",
    f.HOSTNAME: "gpu-node-1",
    "DCGM_FI_DRIVER_VERSION": "550.90.07",
}
MIG_PROFILE = "1g.10gb"


def dcgm(plan: ServicePlan) -> bool:
    """Whether the plan reads dcgm-exporter."""
    return plan.gpu_source == "dcgm"


def _model(plan: ServicePlan) -> dict[str, str]:
    """The model pod's labels as dcgm-exporter's pod mapping writes them."""
    ns = up_labels(plan).get("namespace", "default")
    pod = {"pod": example_pod(plan), "namespace": ns, "container": plan.container}
    if plan.dcgm_honor_labels:
        return pod
    return {f"{f.EXPORTED}{k}": v for k, v in pod.items()}


def target_labels(plan: ServicePlan) -> dict[str, str]:
    """Labels of the GPU exporter's ``up``: the sidecar's, or dcgm-exporter's target."""
    if not dcgm(plan):
        return sidecar_labels(plan)
    return {**labels_of(plan, plan.gpu_matchers), **DCGM_TARGET}


def device_labels(plan: ServicePlan, instance: str | None = None) -> dict[str, str]:
    """Labels of the example GPU's series (a MIG GPU instance ``instance``) in the source."""
    if not dcgm(plan):
        return {**sidecar_labels(plan), "uuid": UUID}
    mig = {f.GPU_PROFILE: MIG_PROFILE, f.GPU_INSTANCE: instance} if instance else {}
    return {**target_labels(plan), **DEVICE, f.UUID: UUID, **mig, **_model(plan)}


_NUMBER = r"[-+]?(?:[0-9.]+(?:e[-+]?[0-9]+)?|Inf|NaN)"
_TERM = re.compile(rf"({_NUMBER})(?:([-+])({_NUMBER}))?x([0-9]+)")


def expand(values: str) -> list[float | None]:
    """One value per step of promtool notation (``a+bxn``, ``axn``, ``a``, ``_``; None: none)."""
    out: list[float | None] = []
    for token in values.split():
        if token in ("_", "stale"):
            out.append(None)
            continue
        term = _TERM.fullmatch(token)
        if term is None:
            out.append(float(token))
            continue
        start, sign, step, times = term.groups()
        inc = float(step) * (-1 if sign == "-" else 1) if step else 0.0
        out += [float(start) + inc * k for k in range(int(times) + 1)]
    return out


def _scaled(values: str, factor: float) -> str:
    return values_text([None if v is None else v * factor for v in expand(values)])


def _put(s: Series, name: str, labels: Mapping[str, str], values: Minutes) -> None:
    s.gauge(name, labels, values_text(values))


def alert_labels(plan: ServicePlan) -> dict[str, str]:
    """The labels a per-GPU alert on the example GPU carries: namespace, pod, uuid (and the
    cluster label), for either source."""
    keep = plan.keeping("namespace", "pod", "uuid")
    if not dcgm(plan):
        labels = device_labels(plan)
    else:
        raw = device_labels(plan)
        model = {k.removeprefix(f.EXPORTED): v for k, v in _model(plan).items()}
        labels = {**raw, **model, "uuid": UUID}
    return {k: v for k, v in labels.items() if k in keep}


def memory(
    plan: ServicePlan,
    s: Series,
    free: str,
    total: int = TOTAL,
    instance: str | None = None,
    length: int = 60,
) -> None:
    """The example GPU (or its MIG ``instance``) with ``free`` bytes free (promtool values)
    of ``total``."""
    if not dcgm(plan):
        labels = device_labels(plan)
        if instance is None:
            s.gauge(naming.GPU_MEMORY_TOTAL, labels, f"{total}+0x{length}")
            s.gauge(naming.GPU_MEMORY_FREE, labels, free)
            return
        mig = {"mig_uuid": "MIG-11111111-1111-1111-1111-111111111111", "gpu_instance_id": instance}
        s.gauge(naming.GPU_MIG_MEMORY_TOTAL, {**labels, **mig}, f"{total}+0x{length}")
        s.gauge(naming.GPU_MIG_MEMORY_FREE, {**labels, **mig}, free)
        return
    labels = device_labels(plan, instance)
    reserved = RESERVED if instance is None else 0
    frees = expand(free)
    _put(s, f.FB_FREE.name, labels, [None if v is None else v / f.MIB for v in frees])
    used = [None if v is None else (total - v - reserved) / f.MIB for v in frees]
    _put(s, f.FB_USED.name, labels, used)
    _put(s, f.FB_RESERVED.name, labels, [None if v is None else reserved / f.MIB for v in frees])


def drop_memory(plan: ServicePlan, s: Series, whole: bool = True) -> None:
    """No memory series of the whole GPU (``whole``) or of its MIG instances."""
    if not dcgm(plan):
        names = (
            (naming.GPU_MEMORY_FREE, naming.GPU_MEMORY_TOTAL)
            if whole
            else (naming.GPU_MIG_MEMORY_FREE, naming.GPU_MIG_MEMORY_TOTAL)
        )
        for name in names:
            without(s, name)
        return
    for field in (f.FB_FREE, f.FB_USED, f.FB_RESERVED):
        without(s, field.name, lambda labels: (f.GPU_INSTANCE not in labels) == whole)


# Sidecar gauges and counters a dcgm field stands for: (field, factor), extra labels dropped.
_SAME: dict[str, tuple[f.Field, float]] = {
    naming.GPU_TEMPERATURE: (f.GPU_TEMP, 1),
    naming.GPU_POWER_USAGE: (f.POWER_USAGE, 1),
    naming.GPU_ENERGY: (f.ENERGY, 1000),
    naming.GPU_SM_CLOCK: (f.SM_CLOCK, 1e-6),
    naming.GPU_UTILIZATION: (f.GPU_UTIL, 100),
    naming.GPU_ROW_REMAP_FAILURE: (f.ROW_REMAP_FAILURE, 1),
    naming.GPU_ROW_REMAP_PENDING: (f.ROW_REMAP_PENDING, 1),
    naming.GPU_RETIRED_PAGES_PENDING: (f.RETIRED_PENDING, 1),
    naming.GPU_PCIE_REPLAYS: (f.PCIE_REPLAY, 1),
}
_LABELLED: dict[tuple[str, str], f.Field] = {
    (naming.GPU_ECC_ERRORS, "uncorrected"): f.ECC_DBE_AGGREGATE,
    (naming.GPU_ECC_VOLATILE_ERRORS, "uncorrected"): f.ECC_DBE_VOLATILE,
    (naming.GPU_REMAPPED_ROWS, "uncorrectable"): f.UNCORRECTABLE_REMAPPED_ROWS,
    (naming.GPU_REMAPPED_ROWS, "correctable"): f.CORRECTABLE_REMAPPED_ROWS,
    (naming.GPU_RETIRED_PAGES, "double_bit_ecc"): f.RETIRED_DBE,
    (naming.GPU_RETIRED_PAGES, "single_bit_ecc"): f.RETIRED_SBE,
    (naming.GPU_NVLINK_ERRORS, "replay"): f.NVLINK_REPLAY,
    (naming.GPU_NVLINK_ERRORS, "recovery"): f.NVLINK_RECOVERY,
    (naming.GPU_NVLINK_ERRORS, "crc_flit"): f.NVLINK_CRC_FLIT,
    (naming.GPU_NVLINK_ERRORS, "crc_data"): f.NVLINK_CRC_DATA,
}
_LABEL = {
    naming.GPU_ECC_ERRORS: "error_type",
    naming.GPU_ECC_VOLATILE_ERRORS: "error_type",
    naming.GPU_NVLINK_ERRORS: "counter",
    naming.GPU_REMAPPED_ROWS: "cause",
    naming.GPU_RETIRED_PAGES: "cause",
}


def put(plan: ServicePlan, s: Series, metric: str, values: str, label: str | None = None) -> None:
    """The example GPU's sidecar ``metric`` reads ``values`` (promtool notation, sidecar units;
    ``label``: its ``error_type`` / ``counter`` value, NVLink link 0): the series of the source."""
    if not dcgm(plan):
        extra = {_LABEL[metric]: label} if label is not None else {}
        if metric == naming.GPU_NVLINK_ERRORS:
            extra["link"] = "0"
        s.gauge(metric, {**device_labels(plan), **extra}, values)
        return
    if label is not None:
        field, factor = _LABELLED[(metric, label)], 1.0
    else:
        field, factor = _SAME[metric]
    s.gauge(field.name, device_labels(plan), _scaled(values, factor))


def xid(plan: ServicePlan, s: Series, code: int, values: str) -> None:
    """The driver reports Xid ``code`` on the example GPU as often as the counter ``values``
    (promtool notation) says; dcgm-exporter shows the last Xid (0 before any) as a gauge,
    one series per ``err_code`` (the series of the previous code goes stale at the change)."""
    if not dcgm(plan):
        s.gauge(naming.GPU_XID_ERRORS, {**device_labels(plan), "xid": str(code)}, values)
        return
    counts = expand(values)
    labels = device_labels(plan)
    for key in [k for k in s.gauges if k[0] == f.XID_ERRORS.name]:
        del s.gauges[key]
    seen = [c is not None and c > 0 for c in counts]
    before = [None if c is None or hit else 0.0 for c, hit in zip(counts, seen, strict=True)]
    after = [float(code) if hit else None for hit in seen]
    codes = (("0", "No Error", before), (str(code), f"Xid {code}", after))
    for err_code, message, steps in codes:
        if any(v is not None for v in steps):
            extra = {f.XID_CODE: err_code, f.XID_MESSAGE: message}
            _put(s, f.XID_ERRORS.name, {**labels, **extra}, steps)


def clock_reasons(plan: ServicePlan, s: Series, active: Mapping[str, str]) -> None:
    """The example GPU's clock event reasons: ``active[reason]`` 1 while that reason holds the
    clocks down (promtool notation); dcgm-exporter shows one bitmask of all of them."""
    if not dcgm(plan):
        for reason, values in active.items():
            labels = {**device_labels(plan), "reason": reason}
            s.gauge(naming.GPU_CLOCK_EVENT_ACTIVE, labels, values)
        return
    bits = dict((reason, bit) for bit, reason in f.CLOCK_EVENT_BITS)
    steps = {reason: expand(values) for reason, values in active.items()}
    length = max(len(v) for v in steps.values())
    mask: list[float | None] = []
    for i in range(length):
        held = [(r, v[i]) for r, v in steps.items() if i < len(v)]
        mask.append(sum(bits[r] for r, v in held if v) if held else None)
    s.gauge(f.CLOCK_EVENTS.name, device_labels(plan), values_text(mask))


def lose(plan: ServicePlan, s: Series, up_steps: int, length: int = 60) -> None:
    """The example GPU is lost after ``up_steps`` + 1 samples: the sidecar reports it down
    (its readings gone); dcgm-exporter stops reporting every field of it, its target up."""
    if not dcgm(plan):
        for metric in (naming.GPU_MEMORY_FREE, naming.GPU_MEMORY_TOTAL, naming.GPU_TEMPERATURE):
            without(s, metric)
        values = f"1x{up_steps} 0x{length - up_steps}"
        s.gauge(naming.GPU_DEVICE_UP, device_labels(plan), values)
        return
    for key in [k for k in s.gauges if dict(k[1]).get(f.UUID) == UUID]:
        steps = expand(s.gauges[key])[: up_steps + 1]
        s.gauges[key] = values_text([*steps, None])  # stale from the next step


def exporter_blind(plan: ServicePlan, s: Series, length: int = 60) -> None:
    """The GPU exporter reads nothing: the sidecar's NVML is down; dcgm-exporter's target is
    down (no series of the GPU at all)."""
    if not dcgm(plan):
        s.gauge(naming.GPU_EXPORTER_UP, sidecar_labels(plan), f"0+0x{length}")
        return
    for key in [k for k in s.gauges if dict(k[1]).get(f.UUID) == UUID]:
        del s.gauges[key]
    s.gauge("up", target_labels(plan), f"0+0x{length}")


def healthy_gpu(plan: ServicePlan, s: Series, length: int, free: int, celsius: str) -> None:
    """A healthy GPU of ``free`` bytes free and ``celsius`` °C, every reading the plan's
    alerts read at rest, its exporter up."""
    steady = f"+0x{length}"
    memory(plan, s, f"{free}{steady}", length=length)
    put(plan, s, naming.GPU_TEMPERATURE, f"{celsius}{steady}")
    xid(plan, s, 79, "0" + steady)
    clock_reasons(
        plan, s, {r: "0" + steady for r in ("gpu_idle", *naming.GPU_HARDWARE_SLOWDOWN_REASONS)}
    )
    # Health readings where an alert reads them (the sidecar exports them on every GPU).
    health: list[tuple[str, str, str | None]] = [
        ("gpu_ecc_errors", naming.GPU_ECC_ERRORS, "uncorrected"),
        ("gpu_ecc_errors", naming.GPU_ECC_VOLATILE_ERRORS, "uncorrected"),
        ("gpu_nv_link_errors", naming.GPU_NVLINK_ERRORS, "replay"),
        ("gpu_nv_link_errors", naming.GPU_NVLINK_ERRORS, "recovery"),
        ("gpu_row_remap_failure", naming.GPU_ROW_REMAP_FAILURE, None),
        ("gpu_row_remap_pending", naming.GPU_ROW_REMAP_PENDING, None),
        ("gpu_pcie_replays", naming.GPU_PCIE_REPLAYS, None),
        ("gpu_uncorrectable_remaps", naming.GPU_REMAPPED_ROWS, "uncorrectable"),
        ("gpu_uncorrectable_remaps", naming.GPU_REMAPPED_ROWS, "correctable"),
        ("gpu_pages_retired", naming.GPU_RETIRED_PAGES, "double_bit_ecc"),
        ("gpu_pages_retired", naming.GPU_RETIRED_PAGES, "single_bit_ecc"),
        ("gpu_page_retirement_pending", naming.GPU_RETIRED_PAGES_PENDING, None),
    ]
    for key, metric, label in health:
        if key in plan.alerts:
            put(plan, s, metric, "0" + steady, label)
    s.gauge("up", target_labels(plan), "1" + steady)
    if not dcgm(plan):
        s.gauge(naming.GPU_DEVICE_UP, device_labels(plan), "1" + steady)
        s.gauge(naming.GPU_EXPORTER_UP, sidecar_labels(plan), "1" + steady)
        return
    put(plan, s, naming.GPU_POWER_USAGE, f"{go_float(350.0)}{steady}")
    put(plan, s, naming.GPU_ENERGY, f"0+{go_float(21000.0)}x{length}")
    put(plan, s, naming.GPU_SM_CLOCK, f"{go_float(1.98e9)}{steady}")
    put(plan, s, naming.GPU_UTILIZATION, f"{go_float(0.9)}{steady}")
