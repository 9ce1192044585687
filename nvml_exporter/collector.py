"""The prometheus-client custom collector: NVML readings to metric families at scrape time.

Shape (node_exporter style): each NVML concern is one *reader*, a function
``read_x(ctx, device, out)`` that reads one GPU and adds samples to ``out``. All readers are
listed once, in :data:`READERS`. :class:`NvmlCollector` runs every reader on every GPU and
isolates failures at three levels:

* **one call** (:meth:`ReadContext.call`): ``NotSupported``, ``FunctionNotFound`` and
  ``ArgumentVersionMismatch``, and a function or constant missing from the installed
  nvidia-ml-py (:class:`nvml.BindingMissing`), mean "absent": the series is omitted (never a
  fake 0), the answer is cached per (GPU, call) so the call is not retried, a fallback call
  runs where one exists, and no error is counted. A reading left with no call that answers
  (a unified-memory GB10 has no frame-buffer memory info) is logged once at info and
  reported as ``gpu_reading_unsupported{reading}``. Any other exception, including
  ``NVMLLibraryMismatchError`` (not an ``NVMLError``), is counted in
  ``gpu_exporter_collector_errors_total{collector, error}`` and drops only that reading. Errors
  are told apart by NVML return code (:mod:`nvml_exporter.nvml`), so a binding that raises a
  code as plain ``NVMLError`` is handled the same.
* **one MIG slot**: each slot's handle, UUID, instance id and memory are read in isolation; an
  empty slot (``NotFound``) is skipped, any other failure of a slot (``NoPermission`` in a
  container that sees only its own instance, ``GpuIsLost``, anything) is counted under
  ``collector="mig"`` and drops that slot's readings only.
* **one reader**: an exception escaping a reader is counted under the reader's name; the
  other readers still run.
* **one GPU**: ``GpuIsLost`` marks the GPU lost: ``gpu_device_up`` 0, its readings of this
  scrape dropped, its identity and Xid series kept, the other GPUs unaffected. A lost GPU is
  re-probed after a backoff (:data:`REPROBE_INITIAL_S`, doubling to :data:`REPROBE_MAX_S`);
  when it answers again its identity is completed and its Xid events are registered again. A
  GPU whose handle or UUID cannot be read at init is re-probed the same way and reported once
  identified.
* **NVML itself**: ``Uninitialized``, ``DriverNotLoaded`` or ``LibRmVersionMismatch`` from any
  call (the driver was restarted or upgraded under the exporter) ends the collection:
  ``gpu_exporter_nvml_up`` 0, no device series (never a GPU reported up without readings),
  counted under ``collector="nvml"``, and :attr:`NvmlCollector.on_nvml_lost` is called so that
  the server re-initialises NVML (:meth:`NvmlCollector.initialise` shuts the old session down
  first).

Nothing raised by NVML escapes :meth:`NvmlCollector.collect`.
"""

from __future__ import annotations

import logging
import platform
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib import metadata
from typing import Protocol, TypeVar

from prometheus_client.core import Metric
from prometheus_client.registry import CollectorRegistry

from nvml_exporter import metrics as m
from nvml_exporter import nvml
from nvml_exporter.nvml import Handle, MemoryInfo, NvmlBackend

log = logging.getLogger(__name__)

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
    """Lifetime (aggregate) ECC error counts, corrected and uncorrected."""
    b = ctx.backend
    for error_type, label in (
        (nvml.MEMORY_ERROR_CORRECTED, "corrected"),
        (nvml.MEMORY_ERROR_UNCORRECTED, "uncorrected"),
    ):
        count = ctx.call(
            "ecc",
            dev,
            f"ecc_{label}",
            partial(b.device_total_ecc_errors, dev.handle, error_type, nvml.AGGREGATE_ECC),
        )
        if count is not None:
            out.add("gpu_ecc_errors_total", (*dev.labels, label), count)


def read_remapped_rows(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """Rows remapped because of correctable and uncorrectable memory errors."""
    rows = ctx.call(
        "remapped_rows", dev, "remapped_rows", lambda: ctx.backend.device_remapped_rows(dev.handle)
    )
    if rows is None:
        return
    out.add("gpu_remapped_rows_total", (*dev.labels, "correctable"), rows.correctable)
    out.add("gpu_remapped_rows_total", (*dev.labels, "uncorrectable"), rows.uncorrectable)


def read_pcie(ctx: ReadContext, dev: Device, out: Samples) -> None:
    """PCIe replay counter."""
    replays = ctx.call(
        "pcie", dev, "pcie_replays", lambda: ctx.backend.device_pcie_replay_counter(dev.handle)
    )
    if replays is not None:
        out.add("gpu_pcie_replay_errors_total", dev.labels, replays)


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
    ("pcie", read_pcie),
)
"""Every NVML reader, ``(name, function)``; the name is the ``collector`` label of errors."""


def _build_labels() -> LabelValues:
    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "unknown"

    return (version("obsgen"), version("nvidia-ml-py"), platform.python_version())


class NvmlCollector:
    """prometheus-client collector of NVML GPU metrics (see the module docstring).

    Args:
        backend: the NVML backend (real or fake).
        gpu_uuids: report only these GPUs; empty reports every visible GPU.
        xids: where Xid counts come from; None emits no Xid series.
        registry: registered there when given (``describe()`` makes this NVML-free).
        timer: monotonic clock in seconds (durations and re-probe backoff).
        build_labels: ``(version, nvidia_ml_py_version, python_version)`` of
            ``gpu_exporter_build_info``; taken from the installed packages when None.

    Call :meth:`initialise` (retried by the server) before device metrics appear; until then
    :meth:`collect` yields only the self metrics with ``gpu_exporter_nvml_up 0``.

    Attributes:
        on_nvml_lost: called (from the collecting thread) when a collection finds NVML gone
            (:data:`nvml.GONE_CODES`); the server then re-initialises. None: nothing called.
    """

    def __init__(
        self,
        backend: NvmlBackend,
        *,
        gpu_uuids: Iterable[str] = (),
        xids: XidSource | None = None,
        registry: CollectorRegistry | None = None,
        timer: Callable[[], float] = time.monotonic,
        build_labels: LabelValues | None = None,
    ) -> None:
        self.backend = backend
        self.gpu_uuids = frozenset(gpu_uuids)
        self.xids = xids
        self.timer = timer
        self.build_labels = build_labels if build_labels is not None else _build_labels()
        self.devices: list[Device] = []
        self.unidentified: list[Unidentified] = []
        self.on_nvml_lost: Callable[[], None] | None = None
        self._ctx = ReadContext(backend, self.count_error)
        self._errors: Counter[tuple[str, str]] = Counter()
        self._errors_lock = threading.Lock()
        # Held by initialise(), shutdown() and each collection, so that NVML is never shut
        # down or re-initialised under a collection still using the old handles.
        self._nvml_lock = threading.Lock()
        self._initialised = False  # nvmlInit succeeded and nvmlShutdown is still owed
        self._up = False  # NVML initialised, GPUs enumerated and not found gone since
        self.losses = 0  # how many collections found NVML gone (see Exporter.scrape)
        if registry is not None:
            registry.register(self)

    # -- state -----------------------------------------------------------------------------

    @property
    def up(self) -> bool:
        """Whether NVML is initialised and the GPUs were enumerated."""
        return self._up

    def count_error(self, collector: str, exc: BaseException) -> None:
        """Add one to ``gpu_exporter_collector_errors_total{collector, error}``."""
        with self._errors_lock:
            self._errors[(collector, nvml.error_name(exc))] += 1

    def initialise(self) -> bool:
        """Initialise NVML and enumerate the GPUs to report; safe to call repeatedly.

        After NVML was found gone, the old session is shut down first (``nvmlShutdown``) and
        everything is learnt again: driver version, GPUs, handles, unsupported readings.
        Stop the Xid watcher before calling it then: its event set dies with the session.

        Returns:
            True when NVML is up (now or already). On failure the error is counted under
            ``collector="init"`` and logged, NVML is left shut down, and False is returned.
        """
        with self._nvml_lock:
            if self._up:
                return True
            if self._initialised:
                self._shutdown_backend()
            self._ctx = ReadContext(self.backend, self.count_error)
            try:
                self.backend.init()
            except Exception as exc:
                self.count_error("init", exc)
                log.warning("NVML init failed: %s (%s)", exc, nvml.error_name(exc))
                return False
            self._initialised = True
            try:
                self.devices = self._enumerate()
            except Exception as exc:
                self.count_error("init", exc)
                log.warning("GPU enumeration failed: %s (%s)", exc, nvml.error_name(exc))
                self._shutdown_backend()
                return False
            self._up = True
            log.info(
                "NVML initialised: driver %s, CUDA %s, reporting %d GPU(s)",
                self._ctx.driver_version or "unknown",
                self._ctx.cuda_driver_version or "unknown",
                len(self.devices),
            )
            return True

    def shutdown(self) -> None:
        """Shut NVML down (``nvmlShutdown``) if it was initialised; errors are logged."""
        with self._nvml_lock:
            self._up = False
            if self._initialised:
                self._shutdown_backend()

    def _shutdown_backend(self) -> None:
        self._initialised = False
        try:
            self.backend.shutdown()
            log.info("NVML shut down")
        except Exception as exc:
            log.warning("nvmlShutdown failed: %r", exc)

    def _enumerate(self) -> list[Device]:
        b = self.backend
        try:
            self._ctx.driver_version = b.system_driver_version()
        except Exception as exc:
            self.count_error("init", exc)
        try:
            cuda = b.system_cuda_driver_version()
            self._ctx.cuda_driver_version = f"{cuda // 1000}.{cuda % 1000 // 10}"
        except Exception as exc:
            self.count_error("init", exc)
        devices: list[Device] = []
        self.unidentified = []
        for index in range(b.device_count()):
            try:
                handle = b.device_handle_by_index(index)
                uuid = b.device_uuid(handle)
            except Exception as exc:
                # Without its UUID a GPU cannot be labelled: probe it again with backoff.
                self.count_error("init", exc)
                log.error("GPU %d could not be identified: %r; re-probing with backoff", index, exc)
                self.unidentified.append(Unidentified(index, self.timer() + REPROBE_INITIAL_S))
                continue
            if self.gpu_uuids and uuid not in self.gpu_uuids:
                continue
            device = Device(index=index, uuid=uuid, handle=handle)
            try:
                self._read_identity(device, "init")
            except GpuLost:
                self._mark_lost(device)
            devices.append(device)
        missing = self.gpu_uuids - {d.uuid for d in devices}
        if missing and not self.unidentified:
            log.warning("--gpu-uuids not visible to this process: %s", ", ".join(sorted(missing)))
        return devices

    def _read_identity(self, dev: Device, collector: str) -> None:
        """Fill in the model name and PCI bus id of ``dev`` where still unknown.

        Other failures are counted under ``collector``.

        Raises:
            GpuLost: the GPU is lost.
            NvmlGone: NVML is gone.
        """
        b = self.backend
        for attr, read in (("model_name", b.device_name), ("pci_bus_id", b.device_pci_bus_id)):
            if getattr(dev, attr):
                continue
            try:
                setattr(dev, attr, read(dev.handle))
            except Exception as exc:
                raise_if_lost_or_gone(exc, dev.uuid)
                self.count_error(collector, exc)

    # -- collection ------------------------------------------------------------------------

    def describe(self) -> Iterator[Metric]:
        """Yield every family without samples; registering the collector reads no NVML."""
        yield from m.empty_families()

    def collect(self) -> Iterator[Metric]:
        """Read every GPU now and yield fresh families: device metrics, then self metrics.

        Never raises for NVML failures (see the module docstring).
        """
        start = self.timer()
        sink = Samples()
        self.collect_into(sink)
        yield from sink.families()
        yield from self.self_families(self.timer() - start)

    def collect_into(self, sink: Samples) -> None:
        """Read every GPU and merge its samples into ``sink``, one GPU at a time.

        Used by the server to serve a partial result when a call hangs past the deadline:
        the GPUs finished before the hang are already in ``sink``.
        """
        if not self._up:
            return
        with self._nvml_lock:
            if not self._up:  # NVML was found gone by an earlier collection
                return
            try:
                self._identify_late()
                for device in list(self.devices):
                    try:
                        sink.merge(self._collect_device(device))
                    except NvmlGone:
                        raise
                    except Exception as exc:  # a bug in the device loop itself: keep other GPUs
                        self.count_error("device", exc)
                        log.exception("collecting GPU %s failed", device.uuid)
            except NvmlGone as gone:
                self._nvml_gone(gone.__cause__ or gone)
        if not self._up and self.on_nvml_lost is not None:
            self.on_nvml_lost()

    def _nvml_gone(self, cause: BaseException) -> None:
        """NVML stopped answering: report it down until :meth:`initialise` succeeds again."""
        self.count_error("nvml", cause)
        log.error("NVML stopped working (%s): re-initialising", nvml.error_name(cause))
        self._up = False
        self.losses += 1

    def _identify_late(self) -> None:
        """Probe the GPUs that could not be identified at init, once their backoff expired."""
        b = self.backend
        for pending in list(self.unidentified):
            if self.timer() < pending.next_probe:
                continue
            try:
                handle = b.device_handle_by_index(pending.index)
                uuid = b.device_uuid(handle)
            except Exception as exc:
                if nvml.is_nvml_gone(exc):
                    raise NvmlGone() from exc
                self.count_error("device", exc)
                pending.probe_backoff = min(pending.probe_backoff * 2, REPROBE_MAX_S)
                pending.next_probe = self.timer() + pending.probe_backoff
                continue
            self.unidentified.remove(pending)
            if self.gpu_uuids and uuid not in self.gpu_uuids:
                log.info("GPU %d identified as %s: not in --gpu-uuids", pending.index, uuid)
                continue
            device = Device(index=pending.index, uuid=uuid, handle=handle)
            try:
                self._read_identity(device, "device")
            except GpuLost:
                self._mark_lost(device)
            self.devices = sorted([*self.devices, device], key=lambda d: d.index)
            log.warning("GPU %d identified as %s; reporting it", device.index, uuid)
            if not device.lost and self.xids is not None:
                self.xids.watch(device.handle, device.uuid)

    def _collect_device(self, dev: Device) -> Samples:
        out = Samples()
        if dev.lost and not self._reprobe(dev):
            self._add_always(dev, out, up=False)
            return out
        try:
            for name, reader in READERS:
                try:
                    reader(self._ctx, dev, out)
                except (GpuLost, NvmlGone):
                    raise
                except Exception as exc:
                    raise_if_lost_or_gone(exc, dev.uuid)  # from a reader's own direct call
                    self.count_error(name, exc)
                    log.debug("reader %s failed on GPU %s: %r", name, dev.uuid, exc)
        except GpuLost:
            self._mark_lost(dev)
            out = Samples()  # drop this GPU's partial readings
            self._add_always(dev, out, up=False)
            return out
        self._add_always(dev, out, up=True)
        return out

    def _add_always(self, dev: Device, out: Samples, *, up: bool) -> None:
        """Series every GPU has, lost or not: identity, ``gpu_device_up`` and Xid counts."""
        info = (
            dev.model_name,
            dev.pci_bus_id,
            self._ctx.driver_version,
            self._ctx.cuda_driver_version,
            dev.mig_mode,
        )
        out.add("gpu_info", (*dev.labels, *info), 1)
        out.add("gpu_device_up", dev.labels, 1 if up else 0)
        if up:
            for reading in self._ctx.unsupported(dev):
                out.add("gpu_reading_unsupported", (*dev.labels, reading), 1)
        if self.xids is None:
            return
        for (uuid, xid), (count, last) in sorted(self.xids.snapshot().items()):
            if uuid == dev.uuid:
                out.add("gpu_xid_errors_total", (*dev.labels, str(xid)), count)
                out.add("gpu_xid_last_timestamp_seconds", (*dev.labels, str(xid)), last)

    def _mark_lost(self, dev: Device) -> None:
        if not dev.lost:
            log.error("GPU %s (index %d) is lost; re-probing with backoff", dev.uuid, dev.index)
            dev.probe_backoff = REPROBE_INITIAL_S
        else:
            dev.probe_backoff = min(dev.probe_backoff * 2, REPROBE_MAX_S)
        dev.lost = True
        dev.next_probe = self.timer() + dev.probe_backoff

    def _reprobe(self, dev: Device) -> bool:
        """Try a lost GPU again once its backoff expired; True when it answers again."""
        if self.timer() < dev.next_probe:
            return False
        try:
            dev.handle = self.backend.device_handle_by_uuid(dev.uuid)
            self.backend.device_uuid(dev.handle)
            self._read_identity(dev, "device")  # when it was lost already at init
        except GpuLost:
            self._mark_lost(dev)
            return False
        except NvmlGone:
            raise
        except Exception as exc:
            if nvml.is_gpu_lost(exc):
                self._mark_lost(dev)
                return False
            if nvml.is_nvml_gone(exc):
                raise NvmlGone() from exc
            self.count_error("device", exc)
            self._mark_lost(dev)
            return False
        log.warning("GPU %s answers again", dev.uuid)
        dev.lost = False
        self._ctx.forget(dev)  # it may have been reset: re-learn what it supports
        if self.xids is not None:
            self.xids.watch(dev.handle, dev.uuid)  # a reset GPU forgot its registration
        return True

    def self_families(self, duration_s: float, up_seen: bool | None = None) -> list[Metric]:
        """Return the ``gpu_exporter_*`` families; ``duration_s`` is this scrape's time in s,
        ``up_seen`` whether its collection found NVML up (None: whether it is up now)."""
        up = m.NVML_UP.family()
        up.add_metric((), 1 if (self._up if up_seen is None else up_seen) else 0)
        errors = m.COLLECTOR_ERRORS.family()
        with self._errors_lock:
            counts = sorted(self._errors.items())
        for labels, count in counts:
            errors.add_metric(labels, count)
        duration = m.SCRAPE_DURATION.family()
        duration.add_metric((), duration_s)
        build = m.BUILD_INFO.family()
        build.add_metric(self.build_labels, 1)
        return [up, errors, duration, build]
