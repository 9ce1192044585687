"""A scripted, in-memory :class:`~nvml_exporter.nvml.NvmlBackend` for tests, demos and benchmarks.

More: docs/exporter.md, "The fake NVML".
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType, SimpleNamespace
from typing import Any

import pynvml
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import CollectorRegistry

from nvml_exporter import nvml
from nvml_exporter.collector import NvmlCollector
from nvml_exporter.nvml import Handle, MemoryInfo, RemappedRows, Utilization, XidEvent
from nvml_exporter.xid import XidWatcher

_MIB = 1024 * 1024


@dataclass
class FakeMig:
    """One MIG device (GPU instance) of a :class:`FakeGpu`; its own handle in the fake."""

    slot: int
    uuid: str
    gpu_instance_id: int
    memory_total: int
    memory_used: int


@dataclass
class FakeGpu:
    """One fake GPU; also serves as its own device handle. Values are in NVML units.

    ``unsupported`` and ``missing`` hold backend method names (e.g. ``"device_utilization"``)
    that raise ``NVMLError_NotSupported`` and ``NVMLError_FunctionNotFound``.

    NVLink: ``nvlink_states`` holds one state per link the GPU has (1 active, 0 inactive; a
    later link number is ``InvalidArgument``), two active links by default (an H100 SXM has
    18: two keep the exposition short); empty, the GPU has no NVLink (``NotSupported``).
    ``nvlink_errors`` maps (link, counter) to a count; ``nvlink_unsupported_counters`` holds
    counters (:data:`nvml.NVLINK_COUNTERS`) answering ``NotSupported`` on every link.
    """

    index: int
    uuid: str
    pci_bus_id: str
    name: str = "NVIDIA H100 80GB HBM3"
    memory_total: int = 81559 * _MIB
    memory_reserved: int = 566 * _MIB
    memory_used: int = 0
    utilization_gpu: int = 0
    utilization_memory: int = 0
    temperature: int = 35
    power_usage_mw: int = 70_000
    power_limit_mw: int = 700_000
    energy_mj: int = 0
    sm_clock_mhz: int = 1980
    mem_clock_mhz: int = 2619
    supported_reasons: int = 0xFF
    current_reasons: int = 0
    ecc_corrected: int = 0
    ecc_uncorrected: int = 0
    ecc_volatile_corrected: int = 0
    ecc_volatile_uncorrected: int = 0
    remapped_correctable: int = 0
    remapped_uncorrectable: int = 0
    remap_pending: bool = False
    remap_failure: bool = False
    retired_single_bit: int = 0
    retired_double_bit: int = 0
    retirement_pending: bool = False
    pcie_replays: int = 0
    nvlink_states: tuple[int, ...] = (nvml.NVLINK_ACTIVE, nvml.NVLINK_ACTIVE)
    nvlink_errors: dict[tuple[int, int], int] = field(default_factory=dict)
    nvlink_unsupported_counters: set[int] = field(default_factory=set)
    mig_mode: int = 0
    mig_slots: int = 0
    migs: list[FakeMig] = field(default_factory=list)
    unsupported: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)

    __hash__ = object.__hash__  # handles are compared by identity

    @property
    def memory_free(self) -> int:
        """Free memory in bytes (v2 semantics: total - reserved - used)."""
        return self.memory_total - self.memory_reserved - self.memory_used


class FakeEventSet:
    """An event set of the fake: the GPU indices registered in it."""

    def __init__(self) -> None:
        self.registered: set[int] = set()


def _uuid(index: int) -> str:
    return f"GPU-{index:08x}-5e1c-4b7e-9a31-0c8d2e4f6a1b"


def default_fake() -> FakeNvml:
    """Return the eight-GPU fake described in the module docstring (deterministic values)."""
    gpus: list[FakeGpu] = []
    for i in range(8):
        gpus.append(
            FakeGpu(
                index=i,
                uuid=_uuid(i),
                pci_bus_id=f"00000000:{0x18 + 0x10 * i:02X}:00.0",
                memory_used=(10_000 + 8_000 * i) * _MIB,
                utilization_gpu=(15 + 11 * i) % 100,
                utilization_memory=(7 + 9 * i) % 100,
                temperature=34 + 3 * i,
                power_usage_mw=120_500 + 45_250 * i,
                energy_mj=3_600_000_000 + 1_000_123 * i,
                pcie_replays=i,
                current_reasons=nvml.CLOCK_EVENT_REASONS[0][0] if i == 0 else 0,
            )
        )
    gpus[1].unsupported.add("device_total_ecc_errors")
    gpus[2].missing.add("device_memory_info_v2")
    gpus[3].missing.add("device_temperature_v")
    gpus[3].unsupported.add("device_pcie_replay_counter")
    gpus[3].nvlink_states = ()  # no NVLink
    gpus[4].current_reasons = 0x4  # sw_power_cap
    gpus[4].nvlink_states = (0, 0)  # NVLink, no link active
    gpus[5].current_reasons = 0x40  # hw_thermal_slowdown
    gpus[5].ecc_corrected = 12
    gpus[5].ecc_volatile_corrected = 4
    gpus[5].remapped_correctable = 2
    gpus[5].remap_pending = True
    gpus[5].retired_double_bit = 1
    gpus[5].retirement_pending = True
    gpus[3].unsupported.add("device_retired_pages")
    gpus[5].nvlink_errors[(1, 0)] = 3  # link 1, replays
    mig_gpu = gpus[6]
    mig_gpu.mig_mode = nvml.MIG_ENABLED
    mig_gpu.mig_slots = 7
    mig_gpu.unsupported.add("device_utilization")
    mig_gpu.migs = [
        FakeMig(0, "MIG-6a0b1c2d-0000-4000-8000-000000000001", 1, 40_192 * _MIB, 30_000 * _MIB),
        FakeMig(2, "MIG-6a0b1c2d-0000-4000-8000-000000000002", 5, 19_968 * _MIB, 1_024 * _MIB),
    ]
    gpus[7].missing.update(
        {"device_supported_clock_event_reasons", "device_current_clock_event_reasons"}
    )
    gpus[7].current_reasons = 0x4
    return FakeNvml(gpus)


def unified_memory_fake() -> FakeNvml:
    """One GB10-like GPU (DGX Spark): CPU and GPU share one memory, so NVML answers
    NotSupported for frame-buffer memory info (v2 and v1); every other reading is served."""
    gpu = FakeGpu(
        index=0,
        uuid=_uuid(0x10),
        pci_bus_id="0000000F:01:00.0",
        name="NVIDIA GB10",
        memory_total=0,
        memory_reserved=0,
        temperature=48,
        power_usage_mw=31_000,
    )
    gpu.unsupported.update({"device_memory_info_v2", "device_memory_info_v1"})
    return FakeNvml([gpu])


class FakeNvml:
    """Scripted NVML backend; see the module docstring. Thread-safe.

    Args:
        gpus: the GPUs, in index order.
        init_errors: exceptions ``init()`` raises, one per call, before it succeeds.
        init_error_forever: an exception ``init()`` always raises (e.g. library missing).
        driver_version: what ``system_driver_version`` returns.
        cuda_driver_version: what ``system_cuda_driver_version`` returns (12040 is 12.4).

    Attributes:
        calls: how often each ``(method, gpu index or None)`` was called.
        initialised: True between a successful ``init()`` and ``shutdown()``.
        shutdown_calls: how often ``shutdown()`` was called.
        hanging: set while a call is blocked by :meth:`hang`.
        dropped_xids: Xid events emitted for a GPU registered in no live event set.
    """

    def __init__(
        self,
        gpus: Iterable[FakeGpu] = (),
        *,
        init_errors: Iterable[BaseException] = (),
        init_error_forever: BaseException | None = None,
        driver_version: str = "550.54.15",
        cuda_driver_version: int = 12040,
    ) -> None:
        self.gpus = list(gpus)
        self._init_errors = list(init_errors)
        self._init_error_forever = init_error_forever
        self.driver_version = driver_version
        self.cuda_driver_version = cuda_driver_version
        self.calls: Counter[tuple[str, int | None]] = Counter()
        self.initialised = False
        self.shutdown_calls = 0
        self.hanging = threading.Event()
        self._lock = threading.Lock()
        self._lost: dict[int, int] = {}  # gpu index -> calls left before it is lost
        # (method, gpu index, MIG slot or None) -> exception raised
        self._faults: dict[tuple[str, int | None, int | None], BaseException] = {}
        self._hangs: set[tuple[str, int | None]] = set()
        self._release = threading.Event()
        self._xids: queue.Queue[XidEvent] = queue.Queue()
        self._event_sets: list[FakeEventSet] = []  # live (created, not freed, NVML not reset)
        self.dropped_xids = 0

    # -- scripting -------------------------------------------------------------------------

    def lose(self, index: int, after_calls: int = 0) -> None:
        """Make GPU ``index`` raise ``GpuIsLost`` from every call after ``after_calls`` more."""
        with self._lock:
            self._lost[index] = after_calls
            for event_set in self._event_sets:  # a lost (then reset) GPU forgets them
                event_set.registered.discard(index)

    def recover(self, index: int) -> None:
        """Undo :meth:`lose`."""
        with self._lock:
            self._lost.pop(index, None)

    def fail(
        self,
        method: str,
        exc: BaseException | None,
        index: int | None = None,
        *,
        slot: int | None = None,
    ) -> None:
        """Make ``method`` (on GPU ``index``, or a system call) raise ``exc``; None clears it.

        With ``slot``, only calls about that MIG slot of GPU ``index`` raise: the slot's
        handle lookup (``device_mig_device_handle``) and calls on its MIG device handle.
        Without it, only calls on the GPU's own handle raise.
        """
        with self._lock:
            if exc is None:
                self._faults.pop((method, index, slot), None)
            else:
                self._faults[(method, index, slot)] = exc

    def hang(self, method: str, index: int | None = None) -> None:
        """Make ``method`` on GPU ``index`` block until :meth:`release` is called."""
        with self._lock:
            self._release.clear()
            self._hangs.add((method, index))

    def release(self) -> None:
        """Unblock every hung call and clear all hangs."""
        with self._lock:
            self._hangs.clear()
            self._release.set()
        self.hanging.clear()

    def restart_driver(self) -> None:
        """Simulate a driver restart: every call raises ``Uninitialized`` until ``init()``."""
        with self._lock:
            self.initialised = False
            self._event_sets.clear()

    def xid_registered(self, index: int) -> bool:
        """Whether GPU ``index`` is registered for events in a live event set."""
        with self._lock:
            return any(index in s.registered for s in self._event_sets)

    def emit_xid(self, index: int, xid: int, *, lose_gpu: bool = False) -> None:
        """Deliver an Xid critical error for GPU ``index`` to the next ``event_set_wait``.

        Dropped (counted in :attr:`dropped_xids`) when no live event set has that GPU. With
        ``lose_gpu``, the GPU is lost (:meth:`lose`) before the event can be read, as after
        Xid 79: the queued event is still delivered, but its GPU answers only ``GpuIsLost``.
        The event names its device by handle, as NVML's event data does.
        """
        if not self.xid_registered(index):
            with self._lock:
                self.dropped_xids += 1
            return
        if lose_gpu:
            self.lose(index)
        self._xids.put(XidEvent(device=self.gpus[index], xid=xid))

    # -- plumbing --------------------------------------------------------------------------

    def _enter(
        self, method: str, handle: FakeGpu | FakeMig | None = None, slot: int | None = None
    ) -> None:
        gpu = self._gpu_of(handle)
        index = gpu.index if gpu is not None else None
        if isinstance(handle, FakeMig):
            slot = handle.slot
        with self._lock:
            self.calls[(method, index)] += 1
            if not self.initialised:
                raise nvml.Uninitialized()
            hang = (method, index) in self._hangs
            fault = self._faults.get((method, index, slot))
            lost = False
            if index is not None and index in self._lost:
                if self._lost[index] > 0:
                    self._lost[index] -= 1
                else:
                    lost = True
        if hang:
            self.hanging.set()
            self._release.wait()
        if lost:
            raise nvml.GpuIsLost()
        if fault is not None:
            raise fault
        if gpu is not None and isinstance(handle, FakeGpu):
            if method in gpu.missing:
                raise nvml.FunctionNotFound()
            if method in gpu.unsupported:
                raise nvml.NotSupported()

    def _gpu_of(self, handle: FakeGpu | FakeMig | None) -> FakeGpu | None:
        if isinstance(handle, FakeGpu):
            return handle
        if isinstance(handle, FakeMig):
            return next(g for g in self.gpus if handle in g.migs)
        return None

    @staticmethod
    def _as_gpu(handle: Handle) -> FakeGpu:
        if not isinstance(handle, FakeGpu):
            raise nvml.InvalidArgument()
        return handle

    # -- NvmlBackend -----------------------------------------------------------------------

    def init(self) -> None:
        """See :meth:`NvmlBackend.init`; fails as scripted by ``init_errors``."""
        with self._lock:
            self.calls[("init", None)] += 1
            if self._init_error_forever is not None:
                raise self._init_error_forever
            if self._init_errors:
                raise self._init_errors.pop(0)
            self.initialised = True

    def shutdown(self) -> None:
        """See :meth:`NvmlBackend.shutdown`."""
        with self._lock:
            self.shutdown_calls += 1
            self.initialised = False
            self._event_sets.clear()

    def system_driver_version(self) -> str:
        """See :meth:`NvmlBackend.system_driver_version`."""
        self._enter("system_driver_version")
        return self.driver_version

    def system_cuda_driver_version(self) -> int:
        """See :meth:`NvmlBackend.system_cuda_driver_version`."""
        self._enter("system_cuda_driver_version")
        return self.cuda_driver_version

    def device_count(self) -> int:
        """See :meth:`NvmlBackend.device_count`."""
        self._enter("device_count")
        return len(self.gpus)

    def device_handle_by_index(self, index: int) -> Handle:
        """See :meth:`NvmlBackend.device_handle_by_index`."""
        if not 0 <= index < len(self.gpus):
            raise nvml.InvalidArgument()
        self._enter("device_handle_by_index", self.gpus[index])
        return self.gpus[index]

    def device_handle_by_uuid(self, uuid: str) -> Handle:
        """See :meth:`NvmlBackend.device_handle_by_uuid`."""
        gpu = next((g for g in self.gpus if g.uuid == uuid), None)
        if gpu is None:
            raise nvml.NotFound()
        self._enter("device_handle_by_uuid", gpu)
        return gpu

    def device_key(self, handle: Handle) -> Hashable:
        """See :meth:`NvmlBackend.device_key`: the fake's handles are their own keys."""
        key: Hashable = handle
        return key

    def device_uuid(self, handle: Handle) -> str:
        """See :meth:`NvmlBackend.device_uuid`."""
        self._enter("device_uuid", handle)
        return str(handle.uuid)

    def device_name(self, handle: Handle) -> str:
        """See :meth:`NvmlBackend.device_name`."""
        self._enter("device_name", handle)
        return self._as_gpu(handle).name

    def device_pci_bus_id(self, handle: Handle) -> str:
        """See :meth:`NvmlBackend.device_pci_bus_id`."""
        self._enter("device_pci_bus_id", handle)
        return self._as_gpu(handle).pci_bus_id

    def device_mig_mode(self, handle: Handle) -> tuple[int, int]:
        """See :meth:`NvmlBackend.device_mig_mode`."""
        self._enter("device_mig_mode", handle)
        gpu = self._as_gpu(handle)
        return gpu.mig_mode, gpu.mig_mode

    def device_memory_info_v2(self, handle: Handle) -> MemoryInfo:
        """See :meth:`NvmlBackend.device_memory_info_v2`."""
        self._enter("device_memory_info_v2", handle)
        if isinstance(handle, FakeMig):
            free = handle.memory_total - handle.memory_used
            return MemoryInfo(handle.memory_total, handle.memory_used, free, 0)
        gpu = self._as_gpu(handle)
        return MemoryInfo(gpu.memory_total, gpu.memory_used, gpu.memory_free, gpu.memory_reserved)

    def device_memory_info_v1(self, handle: Handle) -> MemoryInfo:
        """See :meth:`NvmlBackend.device_memory_info_v1` (``used`` includes reserved memory)."""
        self._enter("device_memory_info_v1", handle)
        if isinstance(handle, FakeMig):
            free = handle.memory_total - handle.memory_used
            return MemoryInfo(handle.memory_total, handle.memory_used, free, None)
        gpu = self._as_gpu(handle)
        used = gpu.memory_used + gpu.memory_reserved
        return MemoryInfo(gpu.memory_total, used, gpu.memory_free, None)

    def device_utilization(self, handle: Handle) -> Utilization:
        """See :meth:`NvmlBackend.device_utilization`."""
        self._enter("device_utilization", handle)
        gpu = self._as_gpu(handle)
        return Utilization(gpu.utilization_gpu, gpu.utilization_memory)

    def device_temperature_v(self, handle: Handle, sensor: int) -> int:
        """See :meth:`NvmlBackend.device_temperature_v`."""
        self._enter("device_temperature_v", handle)
        return self._as_gpu(handle).temperature

    def device_temperature_legacy(self, handle: Handle, sensor: int) -> int:
        """See :meth:`NvmlBackend.device_temperature_legacy`."""
        self._enter("device_temperature_legacy", handle)
        return self._as_gpu(handle).temperature

    def device_power_usage(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_power_usage`."""
        self._enter("device_power_usage", handle)
        return self._as_gpu(handle).power_usage_mw

    def device_enforced_power_limit(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_enforced_power_limit`."""
        self._enter("device_enforced_power_limit", handle)
        return self._as_gpu(handle).power_limit_mw

    def device_total_energy_consumption(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_total_energy_consumption`."""
        self._enter("device_total_energy_consumption", handle)
        return self._as_gpu(handle).energy_mj

    def device_clock(self, handle: Handle, clock_type: int) -> int:
        """See :meth:`NvmlBackend.device_clock`."""
        self._enter("device_clock", handle)
        gpu = self._as_gpu(handle)
        return gpu.sm_clock_mhz if clock_type == nvml.CLOCK_SM else gpu.mem_clock_mhz

    def device_supported_clock_event_reasons(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_supported_clock_event_reasons`."""
        self._enter("device_supported_clock_event_reasons", handle)
        return self._as_gpu(handle).supported_reasons

    def device_current_clock_event_reasons(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_current_clock_event_reasons`."""
        self._enter("device_current_clock_event_reasons", handle)
        return self._as_gpu(handle).current_reasons

    def device_supported_clock_throttle_reasons(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_supported_clock_throttle_reasons`."""
        self._enter("device_supported_clock_throttle_reasons", handle)
        return self._as_gpu(handle).supported_reasons

    def device_current_clock_throttle_reasons(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_current_clock_throttle_reasons`."""
        self._enter("device_current_clock_throttle_reasons", handle)
        return self._as_gpu(handle).current_reasons

    def device_total_ecc_errors(self, handle: Handle, error_type: int, counter_type: int) -> int:
        """See :meth:`NvmlBackend.device_total_ecc_errors`."""
        self._enter("device_total_ecc_errors", handle)
        gpu = self._as_gpu(handle)
        corrected = error_type == nvml.MEMORY_ERROR_CORRECTED
        if counter_type == nvml.VOLATILE_ECC:
            return gpu.ecc_volatile_corrected if corrected else gpu.ecc_volatile_uncorrected
        return gpu.ecc_corrected if corrected else gpu.ecc_uncorrected

    def device_remapped_rows(self, handle: Handle) -> RemappedRows:
        """See :meth:`NvmlBackend.device_remapped_rows`."""
        self._enter("device_remapped_rows", handle)
        gpu = self._as_gpu(handle)
        return RemappedRows(
            gpu.remapped_correctable,
            gpu.remapped_uncorrectable,
            gpu.remap_pending,
            gpu.remap_failure,
        )

    def device_retired_pages(self, handle: Handle, cause: int) -> int:
        """See :meth:`NvmlBackend.device_retired_pages`."""
        self._enter("device_retired_pages", handle)
        gpu = self._as_gpu(handle)
        return gpu.retired_double_bit if cause == 1 else gpu.retired_single_bit

    def device_retired_pages_pending(self, handle: Handle) -> bool:
        """See :meth:`NvmlBackend.device_retired_pages_pending`."""
        self._enter("device_retired_pages_pending", handle)
        return self._as_gpu(handle).retirement_pending

    def device_pcie_replay_counter(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_pcie_replay_counter`."""
        self._enter("device_pcie_replay_counter", handle)
        return self._as_gpu(handle).pcie_replays

    def _nvlink_of(self, handle: Handle, link: int) -> FakeGpu:
        gpu = self._as_gpu(handle)
        if not gpu.nvlink_states:
            raise nvml.NotSupported()
        if not 0 <= link < len(gpu.nvlink_states):
            raise nvml.InvalidArgument()
        return gpu

    def device_nvlink_state(self, handle: Handle, link: int) -> int:
        """See :meth:`NvmlBackend.device_nvlink_state`."""
        self._enter("device_nvlink_state", handle)
        return self._nvlink_of(handle, link).nvlink_states[link]

    def device_nvlink_error_counter(self, handle: Handle, link: int, counter: int) -> int:
        """See :meth:`NvmlBackend.device_nvlink_error_counter`."""
        self._enter("device_nvlink_error_counter", handle)
        gpu = self._nvlink_of(handle, link)
        if counter in gpu.nvlink_unsupported_counters:
            raise nvml.NotSupported()
        return gpu.nvlink_errors.get((link, counter), 0)

    def device_max_mig_device_count(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_max_mig_device_count`."""
        self._enter("device_max_mig_device_count", handle)
        return self._as_gpu(handle).mig_slots

    def device_mig_device_handle(self, handle: Handle, index: int) -> Handle:
        """See :meth:`NvmlBackend.device_mig_device_handle`; NotFound for an empty slot."""
        self._enter("device_mig_device_handle", handle, slot=index)
        mig = next((m for m in self._as_gpu(handle).migs if m.slot == index), None)
        if mig is None:
            raise nvml.NotFound()
        return mig

    def device_gpu_instance_id(self, mig_handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_gpu_instance_id`."""
        self._enter("device_gpu_instance_id", mig_handle)
        if not isinstance(mig_handle, FakeMig):
            raise nvml.InvalidArgument()
        return mig_handle.gpu_instance_id

    def device_supported_event_types(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_supported_event_types`."""
        self._enter("device_supported_event_types", handle)
        return nvml.EVENT_XID_CRITICAL

    def event_set_create(self) -> FakeEventSet:
        """See :meth:`NvmlBackend.event_set_create`."""
        self._enter("event_set_create")
        event_set = FakeEventSet()
        with self._lock:
            self._event_sets.append(event_set)
        return event_set

    def _live(self, event_set: object) -> FakeEventSet:
        with self._lock:
            if not any(event_set is s for s in self._event_sets):
                raise nvml.InvalidArgument()  # freed, or from before a shutdown
        assert isinstance(event_set, FakeEventSet)
        return event_set

    def device_register_events(self, handle: Handle, event_types: int, event_set: object) -> None:
        """See :meth:`NvmlBackend.device_register_events`."""
        self._enter("device_register_events", handle)
        live = self._live(event_set)
        with self._lock:
            live.registered.add(self._as_gpu(handle).index)

    def event_set_wait(self, event_set: object, timeout_ms: int) -> XidEvent | None:
        """See :meth:`NvmlBackend.event_set_wait`: the next :meth:`emit_xid` event."""
        self._enter("event_set_wait")
        self._live(event_set)
        try:
            return self._xids.get(timeout=timeout_ms / 1000)
        except queue.Empty:
            raise nvml.Timeout() from None

    def event_set_free(self, event_set: object) -> None:
        """See :meth:`NvmlBackend.event_set_free`."""
        self._enter("event_set_free")
        with self._lock:
            self._event_sets = [s for s in self._event_sets if s is not event_set]


def _binding_routes(fake: FakeNvml) -> dict[str, Callable[..., Any]]:
    """nvidia-ml-py function name -> a function of the same signature answering from ``fake``.

    Values come back in the binding's own shapes (structs as attribute objects, bytes bus id).
    """

    def memory(handle: Handle, version: object = None) -> SimpleNamespace:
        if version is None:
            v1 = fake.device_memory_info_v1(handle)
            return SimpleNamespace(total=v1.total, used=v1.used, free=v1.free)
        v2 = fake.device_memory_info_v2(handle)
        return SimpleNamespace(total=v2.total, used=v2.used, free=v2.free, reserved=v2.reserved)

    def event_wait(event_set: object, timeout_ms: int) -> SimpleNamespace:
        event = fake.event_set_wait(event_set, timeout_ms)
        assert event is not None
        return SimpleNamespace(
            eventType=nvml.EVENT_XID_CRITICAL, eventData=event.xid, device=event.device
        )

    def utilization(handle: Handle) -> SimpleNamespace:
        rates = fake.device_utilization(handle)
        return SimpleNamespace(gpu=rates.gpu, memory=rates.memory)

    def remapped(handle: Handle) -> tuple[int, int, int, int]:
        rows = fake.device_remapped_rows(handle)
        return rows.correctable, rows.uncorrectable, int(rows.pending), int(rows.failure)

    return {
        "nvmlInit": fake.init,
        "nvmlShutdown": fake.shutdown,
        "nvmlSystemGetDriverVersion": fake.system_driver_version,
        "nvmlSystemGetCudaDriverVersion": fake.system_cuda_driver_version,
        "nvmlDeviceGetCount": fake.device_count,
        "nvmlDeviceGetHandleByIndex": fake.device_handle_by_index,
        "nvmlDeviceGetHandleByUUID": fake.device_handle_by_uuid,
        "nvmlDeviceGetUUID": fake.device_uuid,
        "nvmlDeviceGetName": fake.device_name,
        "nvmlDeviceGetPciInfo": lambda h: SimpleNamespace(busId=fake.device_pci_bus_id(h).encode()),
        "nvmlDeviceGetMigMode": lambda h: list(fake.device_mig_mode(h)),
        "nvmlDeviceGetMemoryInfo": memory,
        "nvmlDeviceGetUtilizationRates": utilization,
        "nvmlDeviceGetTemperatureV": lambda h, sensor, version=None: fake.device_temperature_v(
            h, sensor
        ),
        "nvmlDeviceGetTemperature": fake.device_temperature_legacy,
        "nvmlDeviceGetPowerUsage": fake.device_power_usage,
        "nvmlDeviceGetEnforcedPowerLimit": fake.device_enforced_power_limit,
        "nvmlDeviceGetTotalEnergyConsumption": fake.device_total_energy_consumption,
        "nvmlDeviceGetClockInfo": fake.device_clock,
        "nvmlDeviceGetSupportedClocksEventReasons": fake.device_supported_clock_event_reasons,
        "nvmlDeviceGetCurrentClocksEventReasons": fake.device_current_clock_event_reasons,
        "nvmlDeviceGetSupportedClocksThrottleReasons": (
            fake.device_supported_clock_throttle_reasons
        ),
        "nvmlDeviceGetCurrentClocksThrottleReasons": fake.device_current_clock_throttle_reasons,
        "nvmlDeviceGetTotalEccErrors": fake.device_total_ecc_errors,
        "nvmlDeviceGetRemappedRows": remapped,
        "nvmlDeviceGetRetiredPages": lambda h, cause: [
            0x1000 * (n + 1) for n in range(fake.device_retired_pages(h, cause))
        ],
        "nvmlDeviceGetRetiredPagesPendingStatus": lambda h: int(
            fake.device_retired_pages_pending(h)
        ),
        "nvmlDeviceGetPcieReplayCounter": fake.device_pcie_replay_counter,
        "nvmlDeviceGetNvLinkState": fake.device_nvlink_state,
        "nvmlDeviceGetNvLinkErrorCounter": fake.device_nvlink_error_counter,
        "nvmlDeviceGetMaxMigDeviceCount": fake.device_max_mig_device_count,
        "nvmlDeviceGetMigDeviceHandleByIndex": fake.device_mig_device_handle,
        "nvmlDeviceGetGpuInstanceId": fake.device_gpu_instance_id,
        "nvmlDeviceGetSupportedEventTypes": fake.device_supported_event_types,
        "nvmlEventSetCreate": fake.event_set_create,
        "nvmlDeviceRegisterEvents": fake.device_register_events,
        "nvmlEventSetWait": event_wait,
        "nvmlEventSetFree": fake.event_set_free,
    }


BINDING_NAMES: frozenset[str] = frozenset([*_binding_routes(FakeNvml()), "nvmlMemory_v2"])
"""Every nvidia-ml-py name :class:`~nvml_exporter.nvml.PynvmlBackend` looks up."""


@contextmanager
def fake_binding(
    fake: FakeNvml, *, drop: Iterable[str] = (), module: ModuleType | None = None
) -> Iterator[ModuleType]:
    """Route the installed nvidia-ml-py's NVML functions to ``fake`` while the block runs.

    Inside it, the real :class:`~nvml_exporter.nvml.PynvmlBackend` reads the fake through the
    binding's own names, constants and error classes, no GPU needed. Only names the binding
    defines are routed, so an older binding (loaded in place of the newest) lacks what it
    lacks; ``drop`` removes more names (functions, constants such as ``nvmlMemory_v2``, or
    error classes) to act as an older binding. Everything is restored on exit.

    Args:
        fake: answers the calls.
        drop: names to delete from the module for the duration.
        module: the binding module; ``pynvml`` when None.

    Yields:
        The patched module.
    """
    target = module if module is not None else pynvml
    saved = dict(vars(target))
    try:
        for name, route in _binding_routes(fake).items():
            if hasattr(target, name):
                setattr(target, name, route)
        for name in drop:
            if hasattr(target, name):
                delattr(target, name)
        yield target
    finally:
        for name in set(vars(target)) - set(saved):
            delattr(target, name)
        for name, value in saved.items():
            setattr(target, name, value)


def golden_exposition() -> str:
    """Return the text exposition of the initialised 8-GPU fake with fixed clocks and versions.

    Three Xid events (two Xid 79 on GPU 5, one Xid 48 on GPU 2) and one counted
    ``NVMLLibraryMismatchError`` are added so that every family appears. This is the content
    of ``tests/exporter/golden/fake_8gpu.prom``; regenerate it with
    ``.venv/bin/python -m nvml_exporter.fake > tests/exporter/golden/fake_8gpu.prom``.
    """
    fake = default_fake()
    xids = XidWatcher(fake, wall_clock=lambda: 1_700_000_000.0)
    xids.record(fake.gpus[5].uuid, 79)
    xids.record(fake.gpus[5].uuid, 79)
    xids.record(fake.gpus[2].uuid, 48)
    registry = CollectorRegistry(auto_describe=True)
    collector = NvmlCollector(
        fake,
        xids=xids,
        registry=registry,
        timer=lambda: 0.0,
        build_labels=("0.0.0-golden", "0.0.0-golden", "3.x"),
    )
    collector.initialise()
    collector.count_error("power", nvml.NVMLLibraryMismatchError("example"))
    return generate_latest(registry).decode()


def main() -> None:
    """Print :func:`golden_exposition` to stdout (logging only errors, to stderr)."""
    logging.basicConfig(level=logging.ERROR)
    print(golden_exposition(), end="")


if __name__ == "__main__":
    main()
