"""What one scrape reads of one GPU: the call context that isolates each NVML call, the readers.

Each NVML concern is one reader, ``read_x(ctx, device, out)``, listed once in :data:`READERS`;
:class:`ReadContext` turns an absent reading into an omitted series and counts other failures.
:mod:`nvml_exporter.collector` runs them; how each failure is handled: docs/exporter.md, "The
collector: failures isolated at five levels".
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol, TypeVar

from prometheus_client.core import Metric

from nvml_exporter import metrics as m
from nvml_exporter import nvml
from nvml_exporter.nvml import Handle, MemoryInfo, NvmlBackend

# The readers are part of the collector: their lines keep its logger name.
log = logging.getLogger("nvml_exporter.collector")

T = TypeVar("T")

REPROBE_INITIAL_S = 5.0
"""Seconds before a lost GPU is probed again the first time."""
REPROBE_MAX_S = 300.0
"""Upper bound in seconds of the doubling re-probe interval of a lost GPU."""


LabelValues = tuple[str, ...]


class GpuLost(Exception):
    """Internal: NVML answered ``GpuIsLost`` for the device being read."""


class NvmlGone(Exception):
    """Internal: NVML answered one of :data:`nvml.GONE_CODES`; the cause is ``__cause__``."""


def raise_if_lost_or_gone(exc: BaseException, uuid: str) -> None:
    """Re-raise an NVML error of one GPU's call as :class:`GpuLost` or :class:`NvmlGone`.

    Returns normally for any other exception (the caller counts it).
    """
    if nvml.is_nvml_gone(exc):
        raise NvmlGone() from exc
    if nvml.is_gpu_lost(exc):
        raise GpuLost(uuid) from exc


class XidSource(Protocol):
    """What the collector reads Xid series from (see :class:`nvml_exporter.xid.XidWatcher`)."""

    def snapshot(self) -> dict[tuple[str, int], tuple[int, float]]:
        """Return ``{(gpu uuid, xid): (count, last unix time in seconds)}``."""

    def watch(self, handle: Handle, uuid: str) -> bool:
        """Register Xid events on one GPU (``uuid``) that came back or was identified late."""


@dataclass
class Device:
    """Collector state of one monitored GPU.

    Attributes:
        index: NVML index in this process (the ``gpu`` label).
        uuid: ``GPU-...`` (the ``uuid`` label).
        handle: current NVML handle.
        model_name, pci_bus_id: identity, read once at discovery.
        mig_mode: ``enabled``, ``disabled`` or ``""`` when unknown; refreshed every scrape.
        lost: NVML reported ``GpuIsLost``.
        next_probe: monotonic time in seconds when a lost GPU is probed again.
        probe_backoff: current re-probe interval in seconds.
    """

    index: int
    uuid: str
    handle: Handle
    model_name: str = ""
    pci_bus_id: str = ""
    mig_mode: str = ""
    lost: bool = False
    next_probe: float = 0.0
    probe_backoff: float = REPROBE_INITIAL_S

    @property
    def labels(self) -> LabelValues:
        """The ``(uuid, gpu)`` label values."""
        return (self.uuid, str(self.index))


@dataclass
class Unidentified:
    """A GPU index whose handle or UUID could not be read; probed again with backoff.

    Attributes:
        index: NVML index in this process.
        next_probe: monotonic time in seconds of the next probe.
        probe_backoff: current probe interval in seconds.
    """

    index: int
    next_probe: float
    probe_backoff: float = REPROBE_INITIAL_S


@dataclass
class Samples:
    """Samples of one collection, keyed by metric name; merged per device under a lock."""

    by_metric: dict[str, list[tuple[LabelValues, float]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, name: str, labels: LabelValues, value: float) -> None:
        """Add one sample; ``labels`` are the values in the order of ``metrics.SPECS[name]``."""
        self.by_metric[name].append((labels, value))

    def merge(self, other: Samples) -> None:
        """Append every sample of ``other`` (thread-safe)."""
        with self._lock:
            for name, samples in other.by_metric.items():
                self.by_metric[name].extend(samples)

    def families(self) -> list[Metric]:
        """Return the non-empty device families, in :data:`metrics.DEVICE_METRICS` order."""
        with self._lock:
            copy = {name: list(samples) for name, samples in self.by_metric.items()}
        out: list[Metric] = []
        for spec in m.DEVICE_METRICS:
            samples = copy.get(spec.name)
            if not samples:
                continue
            family = spec.family()
            for labels, value in samples:
                family.add_metric(labels, value)
            out.append(family)
        return out


class ReadContext:
    """What a reader uses to call NVML: error handling and the absent-reading cache.

    Args:
        backend: the NVML backend.
        count_error: called with ``(collector name, exception)`` for each counted failure.
    """

    def __init__(self, backend: NvmlBackend, count_error: Callable[[str, BaseException], None]):
        self.backend = backend
        self.driver_version = ""
        self.cuda_driver_version = ""
        self._count_error = count_error
        self._absent: set[tuple[str, str]] = set()
        self._unsupported: set[tuple[str, str]] = set()
        self._absent_lock = threading.Lock()

    def count_error(self, collector: str, exc: BaseException) -> None:
        """Count one failure under ``collector`` (``gpu_exporter_collector_errors_total``)."""
        self._count_error(collector, exc)

    def call(
        self,
        reader: str,
        device: Device,
        key: str,
        fn: Callable[[], T],
        *,
        slot: bool = False,
    ) -> T | None:
        """Run one NVML call for ``device``; return its value, or None when there is none.

        Args:
            reader: the reader's name (the ``collector`` label of counted errors).
            device: the GPU read.
            key: names this reading in the absent cache, per GPU.
            fn: the call, e.g. ``lambda: backend.device_power_usage(device.handle)``.
            slot: the call reads one MIG slot: ``GpuIsLost`` is then that slot's failure
                (counted, None returned), not the GPU's.

        Returns:
            The value; None when the reading is absent (cached) or failed (counted).

        Raises:
            GpuLost: NVML answered ``GpuIsLost`` (unless ``slot``).
            NvmlGone: NVML as a whole stopped working.
        """
        value, refused = self._attempt(reader, device, key, fn, slot)
        if refused is not None:
            self._unsupported_reading(device, key, refused)
        return value

    def _attempt(
        self, reader: str, device: Device, key: str, fn: Callable[[], T], slot: bool
    ) -> tuple[T | None, BaseException | None]:
        """One call: (value or None, the absent answer when it made ``key`` absent just now)."""
        cache_key = (device.uuid, key)
        if cache_key in self._absent:
            return None, None
        try:
            return fn(), None
        except Exception as exc:
            if nvml.is_nvml_gone(exc):
                raise NvmlGone() from exc
            if nvml.is_gpu_lost(exc) and not slot:
                raise GpuLost(device.uuid) from exc
            if nvml.is_absent(exc):
                log.debug("%s on GPU %s: %r; omitting it", key, device.uuid, exc)
                with self._absent_lock:
                    self._absent.add(cache_key)
                return None, exc
            self._count_error(reader, exc)
            log.debug("%s on GPU %s failed: %r", key, device.uuid, exc)
            return None, None

    def _unsupported_reading(self, device: Device, reading: str, exc: BaseException) -> None:
        """Record that no call of ``reading`` answers on ``device``; logged once at info (the
        answer is cached, so a reading becomes unsupported once per GPU, or again after
        :meth:`forget`)."""
        log.info(
            "GPU %s: NVML answers %s for %s; its series are omitted",
            device.uuid,
            nvml.error_name(exc),
            reading,
        )
        with self._absent_lock:
            self._unsupported.add((device.uuid, reading))

    def unsupported(self, device: Device) -> list[str]:
        """Readings of ``device`` no call answers (NotSupported, FunctionNotFound, …), sorted."""
        with self._absent_lock:
            return sorted(r for uuid, r in self._unsupported if uuid == device.uuid)

    def call_first(
        self,
        reader: str,
        device: Device,
        key: str,
        fns: Sequence[Callable[[], T]],
        *,
        slot: bool = False,
    ) -> T | None:
        """Like :meth:`call`, trying ``fns`` in order while they are absent (API fallbacks).

        A call that fails for another reason ends the attempt (counted, None returned); a
        fallback is used only when the newer call does not exist or is not supported. When
        every call is absent, ``key`` is an unsupported reading (logged once at info).
        """
        refused: BaseException | None = None
        for number, fn in enumerate(fns):
            variant = f"{key}#{number}"
            if (device.uuid, variant) in self._absent:
                continue
            value, answer = self._attempt(reader, device, variant, fn, slot)
            if answer is None:
                return value
            refused = answer
        if refused is not None:
            self._unsupported_reading(device, key, refused)
        return None

    def probe(self, reader: str, device: Device, key: str, fn: Callable[[], T]) -> T | None:
        """Like :meth:`call` for a reading that may not exist on this GPU (an NVLink number
        past the GPU's last link): ``InvalidArgument`` and the absent answers return None,
        cached under ``key`` and neither counted nor reported unsupported."""
        cache_key = (device.uuid, key)
        if cache_key in self._absent:
            return None
        try:
            return fn()
        except Exception as exc:
            if nvml.is_nvml_gone(exc):
                raise NvmlGone() from exc
            if nvml.is_gpu_lost(exc):
                raise GpuLost(device.uuid) from exc
            if nvml.is_absent(exc) or nvml.error_code(exc) == nvml.ERROR_INVALID_ARGUMENT:
                log.debug("%s on GPU %s: %r; not probed again", key, device.uuid, exc)
                with self._absent_lock:
                    self._absent.add(cache_key)
                return None
            self._count_error(reader, exc)
            log.debug("%s on GPU %s failed: %r", key, device.uuid, exc)
            return None

    def forget(self, device: Device) -> None:
        """Drop the absent-reading cache of ``device`` (after a reset or a MIG mode change)."""
        with self._absent_lock:
            self._absent = {k for k in self._absent if k[0] != device.uuid}
            self._unsupported = {k for k in self._unsupported if k[0] != device.uuid}


# --- readers -----------------------------------------------------------------------------
# Each reader reads one NVML concern of one GPU: read_x(ctx, device, out) -> None.


def read_mig(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """MIG mode (for ``gpu_info``) and memory of each MIG GPU instance, in bytes."""
    b = ctx.backend
    mode = ctx.call("mig", dev, "mig_mode", lambda: b.device_mig_mode(dev.handle))
    label = "" if mode is None else ("enabled" if mode[0] == nvml.MIG_ENABLED else "disabled")
    if dev.mig_mode and label and label != dev.mig_mode:
        ctx.forget(dev)  # supported readings differ between MIG and non-MIG mode
    dev.mig_mode = label or dev.mig_mode
    if mode is None or mode[0] != nvml.MIG_ENABLED:
        return
    slots = ctx.call("mig", dev, "mig_slots", lambda: b.device_max_mig_device_count(dev.handle))
    for slot in range(slots or 0):
        if not read_mig_slot(ctx, dev, slot, out):
            return


def read_mig_slot(ctx: ReadContext, dev: Device, slot: int, out: Samples) -> bool:
    """Memory of the MIG device in ``slot``, in bytes; every failure stays in this slot.

    An empty slot (``NotFound``) is skipped silently. Any other failure, ``NoPermission`` (a
    container that sees only its own instance) and ``GpuIsLost`` included, is counted under
    ``collector="mig"`` and drops this slot's readings only.

    Returns:
        False when MIG devices cannot be enumerated here at all (the handle lookup is not
        supported, or missing from the binding): the other slots are not tried either.

    Raises:
        NvmlGone: NVML as a whole stopped working.
    """
    b = ctx.backend
    try:
        mig = b.device_mig_device_handle(dev.handle, slot)
    except Exception as exc:
        if nvml.is_nvml_gone(exc):
            raise NvmlGone() from exc
        if nvml.is_absent(exc):
            log.debug("MIG devices of GPU %s: %r; omitting them", dev.uuid, exc)
            return False
        if not nvml.is_not_found(exc):  # NotFound: an empty slot
            ctx.count_error("mig", exc)
            log.debug("MIG slot %d of GPU %s failed: %r", slot, dev.uuid, exc)
        return True
    key = f"mig{slot}"
    mig_uuid = ctx.call("mig", dev, f"{key}_uuid", partial(b.device_uuid, mig), slot=True)
    if mig_uuid is None:
        return True
    instance = ctx.call("mig", dev, f"{key}_gi", partial(b.device_gpu_instance_id, mig), slot=True)
    if instance is None:
        return True
    mem = ctx.call_first(
        "mig",
        dev,
        f"{key}_memory",
        [partial(b.device_memory_info_v2, mig), partial(b.device_memory_info_v1, mig)],
        slot=True,
    )
    if mem is None:
        return True
    labels = (*dev.labels, mig_uuid, str(instance))
    out.add("gpu_mig_memory_total_bytes", labels, mem.total)
    out.add("gpu_mig_memory_used_bytes", labels, mem.used)
    out.add("gpu_mig_memory_free_bytes", labels, mem.free)
    return True


def read_memory(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """Frame-buffer memory in bytes: ``nvmlDeviceGetMemoryInfo_v2``, v1 fallback (no reserved)."""
    b = ctx.backend
    mem: MemoryInfo | None = ctx.call_first(
        "memory",
        dev,
        "memory_info",
        [lambda: b.device_memory_info_v2(dev.handle), lambda: b.device_memory_info_v1(dev.handle)],
    )
    if mem is None:
        return
    out.add("gpu_memory_total_bytes", dev.labels, mem.total)
    out.add("gpu_memory_used_bytes", dev.labels, mem.used)
    out.add("gpu_memory_free_bytes", dev.labels, mem.free)
    if mem.reserved is not None:
        out.add("gpu_memory_reserved_bytes", dev.labels, mem.reserved)


def read_utilization(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """GPU and memory-controller utilisation, NVML percent / 100 = ratio 0-1."""
    rates = ctx.call(
        "utilization", dev, "utilization", lambda: ctx.backend.device_utilization(dev.handle)
    )
    if rates is None:
        return
    out.add("gpu_utilization_ratio", dev.labels, rates.gpu / 100)
    out.add("gpu_memory_controller_utilization_ratio", dev.labels, rates.memory / 100)


def read_temperature(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """GPU temperature in °C: ``nvmlDeviceGetTemperatureV``, deprecated call as fallback."""
    b = ctx.backend
    celsius = ctx.call_first(
        "temperature",
        dev,
        "temperature",
        [
            lambda: b.device_temperature_v(dev.handle, nvml.TEMPERATURE_GPU),
            lambda: b.device_temperature_legacy(dev.handle, nvml.TEMPERATURE_GPU),
        ],
    )
    if celsius is not None:
        out.add("gpu_temperature_celsius", dev.labels, celsius)


def read_power(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """Power draw and limit (NVML mW / 1000 = W) and energy (NVML mJ / 1000 = J)."""
    b = ctx.backend
    usage = ctx.call("power", dev, "power_usage", lambda: b.device_power_usage(dev.handle))
    if usage is not None:
        out.add("gpu_power_usage_watts", dev.labels, usage / 1000)
    limit = ctx.call("power", dev, "power_limit", lambda: b.device_enforced_power_limit(dev.handle))
    if limit is not None:
        out.add("gpu_power_limit_watts", dev.labels, limit / 1000)
    energy = ctx.call("power", dev, "energy", lambda: b.device_total_energy_consumption(dev.handle))
    if energy is not None:
        out.add("gpu_energy_joules_total", dev.labels, energy / 1000)


def read_clocks(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """SM and memory clocks (NVML MHz * 1e6 = Hz) and the active clock event reasons."""
    b = ctx.backend
    sm = ctx.call("clocks", dev, "sm_clock", lambda: b.device_clock(dev.handle, nvml.CLOCK_SM))
    if sm is not None:
        out.add("gpu_sm_clock_hertz", dev.labels, sm * 1_000_000)
    mem = ctx.call("clocks", dev, "mem_clock", lambda: b.device_clock(dev.handle, nvml.CLOCK_MEM))
    if mem is not None:
        out.add("gpu_memory_clock_hertz", dev.labels, mem * 1_000_000)
    supported = ctx.call_first(
        "clocks",
        dev,
        "supported_reasons",
        [
            lambda: b.device_supported_clock_event_reasons(dev.handle),
            lambda: b.device_supported_clock_throttle_reasons(dev.handle),
        ],
    )
    if not supported:
        return
    current = ctx.call_first(
        "clocks",
        dev,
        "current_reasons",
        [
            lambda: b.device_current_clock_event_reasons(dev.handle),
            lambda: b.device_current_clock_throttle_reasons(dev.handle),
        ],
    )
    if current is None:
        return
    for bit, reason in nvml.CLOCK_EVENT_REASONS:
        if supported & bit:
            out.add("gpu_clock_event_active", (*dev.labels, reason), 1 if current & bit else 0)


def read_ecc(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """ECC error counts, corrected and uncorrected: lifetime (aggregate, readings
    ``ecc_<type>``) and since the driver loaded (volatile, ``ecc_volatile_<type>``)."""
    b = ctx.backend
    for counter_type, metric, prefix in (
        (nvml.AGGREGATE_ECC, "gpu_ecc_errors_total", "ecc"),
        (nvml.VOLATILE_ECC, "gpu_ecc_volatile_errors_total", "ecc_volatile"),
    ):
        for error_type, label in (
            (nvml.MEMORY_ERROR_CORRECTED, "corrected"),
            (nvml.MEMORY_ERROR_UNCORRECTED, "uncorrected"),
        ):
            count = ctx.call(
                "ecc",
                dev,
                f"{prefix}_{label}",
                partial(b.device_total_ecc_errors, dev.handle, error_type, counter_type),
            )
            if count is not None:
                out.add(metric, (*dev.labels, label), count)


def read_retired_pages(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """Pages retired for multiple single-bit and for double-bit ECC errors (GPUs before
    Ampere; later ones answer NotSupported, as they remap rows) and whether retirements wait
    for a reset (0/1). One reading, ``retired_pages``: a GPU without page retirement answers
    none of the three calls."""
    b = ctx.backend
    for cause, label in nvml.PAGE_RETIREMENT_CAUSES:
        count = ctx.call(
            "retired_pages",
            dev,
            "retired_pages",
            partial(b.device_retired_pages, dev.handle, cause),
        )
        if count is not None:
            out.add("gpu_retired_pages_total", (*dev.labels, label), count)
    pending = ctx.call(
        "retired_pages",
        dev,
        "retired_pages",
        lambda: b.device_retired_pages_pending(dev.handle),
    )
    if pending is not None:
        out.add("gpu_retired_pages_pending", dev.labels, 1 if pending else 0)


def read_remapped_rows(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """Rows remapped because of correctable and uncorrectable memory errors, and the
    pending and failure flags (0/1) of the same call."""
    rows = ctx.call(
        "remapped_rows", dev, "remapped_rows", lambda: ctx.backend.device_remapped_rows(dev.handle)
    )
    if rows is None:
        return
    out.add("gpu_remapped_rows_total", (*dev.labels, "correctable"), rows.correctable)
    out.add("gpu_remapped_rows_total", (*dev.labels, "uncorrectable"), rows.uncorrectable)
    out.add("gpu_row_remap_pending", dev.labels, 1 if rows.pending else 0)
    out.add("gpu_row_remap_failure", dev.labels, 1 if rows.failure else 0)


def read_pcie(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """PCIe replay counter."""
    replays = ctx.call(
        "pcie", dev, "pcie_replays", lambda: ctx.backend.device_pcie_replay_counter(dev.handle)
    )
    if replays is not None:
        out.add("gpu_pcie_replay_errors_total", dev.labels, replays)


def active_links(ctx: ReadContext, dev: Device) -> list[int] | None:
    """The GPU's active NVLink links (``nvmlDeviceGetNvLinkState``), in order.

    Link 0 is the ``nvlink`` reading: absent on a GPU without NVLink (reported unsupported,
    cached), None returned. Links 1 to :data:`nvml.NVLINK_MAX_LINKS` - 1 are probed: a number
    past the GPU's last link (``InvalidArgument``) is not asked again.
    """
    b = ctx.backend
    first = ctx.call("nvlink", dev, "nvlink", partial(b.device_nvlink_state, dev.handle, 0))
    if first is None:
        return None
    links = [0] if first == nvml.NVLINK_ACTIVE else []
    for link in range(1, nvml.NVLINK_MAX_LINKS):
        state = ctx.probe(
            "nvlink", dev, f"nvlink{link}", partial(b.device_nvlink_state, dev.handle, link)
        )
        if state == nvml.NVLINK_ACTIVE:
            links.append(link)
    return links


def read_nvlink(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """NVLink error counts of each active link, by counter (:data:`nvml.NVLINK_COUNTERS`).

    A GPU whose links are all inactive (a PCIe card without a bridge) has none to read: that
    scrape reports the ``nvlink`` reading unsupported, not cached (links train later). A
    counter NVML refuses is the reading ``nvlink_<counter>`` (unsupported on every link).
    """
    links = active_links(ctx, dev)
    if links is None:
        return
    if not links:
        out.add("gpu_reading_unsupported", (*dev.labels, "nvlink"), 1)
        return
    b = ctx.backend
    for link in links:
        for counter, label in nvml.NVLINK_COUNTERS:
            count = ctx.call(
                "nvlink",
                dev,
                f"nvlink_{label}",
                partial(b.device_nvlink_error_counter, dev.handle, link, counter),
            )
            if count is not None:
                out.add("gpu_nvlink_errors_total", (*dev.labels, str(link), label), count)


Reader = Callable[[ReadContext, Device, Samples], None]

READERS: tuple[tuple[str, Reader], ...] = (
    ("mig", read_mig),
    ("memory", read_memory),
    ("utilization", read_utilization),
    ("temperature", read_temperature),
    ("power", read_power),
    ("clocks", read_clocks),
    ("ecc", read_ecc),
    ("remapped_rows", read_remapped_rows),
    ("retired_pages", read_retired_pages),
    ("pcie", read_pcie),
    ("nvlink", read_nvlink),
)
"""Every NVML reader, ``(name, function)``; the name is the ``collector`` label of errors."""
