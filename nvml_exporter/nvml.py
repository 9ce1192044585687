"""The NVML backend interface and its real implementation over nvidia-ml-py.

The collector reads NVML only through :class:`NvmlBackend`, a small ``Protocol`` with one
method per NVML call, returning plain Python values in NVML's own units (bytes, percent,
milliwatts, millijoules, megahertz). All logic (unit conversion, fallbacks, error handling,
caching) lives in the collector, so the fake in :mod:`nvml_exporter.fake` exercises it fully.

Errors: every method raises what nvidia-ml-py raises, i.e. a subclass of ``pynvml.NVMLError``
(``NVMLError_NotSupported``, ``NVMLError_GpuIsLost``, ...) or ``pynvml.NVMLLibraryMismatchError``
(not an ``NVMLError``). The fake raises the same classes.

The nvidia-ml-py package (``import pynvml``) is pure Python over ctypes: importing it never
loads ``libnvidia-ml.so.1``; only :meth:`PynvmlBackend.init` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

import pynvml

Handle: TypeAlias = Any
"""An opaque NVML device handle (a ctypes pointer for the real backend)."""

EventSet: TypeAlias = Any
"""An opaque NVML event set."""

# NVML constants the collector uses, re-exported so that callers need not import pynvml.
CLOCK_SM: int = pynvml.NVML_CLOCK_SM
CLOCK_MEM: int = pynvml.NVML_CLOCK_MEM
TEMPERATURE_GPU: int = pynvml.NVML_TEMPERATURE_GPU
MEMORY_ERROR_CORRECTED: int = pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED
MEMORY_ERROR_UNCORRECTED: int = pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
AGGREGATE_ECC: int = pynvml.NVML_AGGREGATE_ECC
MIG_ENABLED: int = pynvml.NVML_DEVICE_MIG_ENABLE
EVENT_XID_CRITICAL: int = pynvml.nvmlEventTypeXidCriticalError

# Clock event ("throttle") reason bits and their label values, in bit order.
CLOCK_EVENT_REASONS: tuple[tuple[int, str], ...] = (
    (pynvml.nvmlClocksEventReasonGpuIdle, "gpu_idle"),
    (pynvml.nvmlClocksEventReasonApplicationsClocksSetting, "applications_clocks_setting"),
    (pynvml.nvmlClocksEventReasonSwPowerCap, "sw_power_cap"),
    (pynvml.nvmlClocksEventReasonHwSlowdown, "hw_slowdown"),
    (pynvml.nvmlClocksEventReasonSyncBoost, "sync_boost"),
    (pynvml.nvmlClocksEventReasonSwThermalSlowdown, "sw_thermal_slowdown"),
    (pynvml.nvmlClocksEventReasonHwThermalSlowdown, "hw_thermal_slowdown"),
    (pynvml.nvmlClocksEventReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"),
    (pynvml.nvmlClocksEventReasonDisplayClockSetting, "display_clock_setting"),
)

# Error classes, re-exported for the collector, the fake and the tests.
NVMLError = pynvml.NVMLError
NVMLLibraryMismatchError = pynvml.NVMLLibraryMismatchError
NotSupported: type[pynvml.NVMLError] = pynvml.NVMLError_NotSupported
FunctionNotFound: type[pynvml.NVMLError] = pynvml.NVMLError_FunctionNotFound
ArgumentVersionMismatch: type[pynvml.NVMLError] = pynvml.NVMLError_ArgumentVersionMismatch
GpuIsLost: type[pynvml.NVMLError] = pynvml.NVMLError_GpuIsLost
NotFound: type[pynvml.NVMLError] = pynvml.NVMLError_NotFound
Timeout: type[pynvml.NVMLError] = pynvml.NVMLError_Timeout
LibraryNotFound: type[pynvml.NVMLError] = pynvml.NVMLError_LibraryNotFound
DriverNotLoaded: type[pynvml.NVMLError] = pynvml.NVMLError_DriverNotLoaded
LibRmVersionMismatch: type[pynvml.NVMLError] = pynvml.NVMLError_LibRmVersionMismatch
Unknown: type[pynvml.NVMLError] = pynvml.NVMLError_Unknown
Uninitialized: type[pynvml.NVMLError] = pynvml.NVMLError_Uninitialized
InvalidArgument: type[pynvml.NVMLError] = pynvml.NVMLError_InvalidArgument


def error_name(exc: BaseException) -> str:
    """Return a short, bounded name for an exception, used as the ``error`` label value.

    ``NVMLError_GpuIsLost`` becomes ``GpuIsLost``; any other exception keeps its class name
    (``NVMLLibraryMismatchError``, ``ValueError``).
    """
    name = type(exc).__name__
    return name.removeprefix("NVMLError_") if isinstance(exc, NVMLError) else name


@dataclass(frozen=True)
class MemoryInfo:
    """Frame-buffer memory of a GPU or MIG instance, in bytes.

    Attributes:
        total: installed memory.
        used: memory allocated by processes (v2 excludes ``reserved``; v1 includes it).
        free: memory available for allocation.
        reserved: memory reserved by the driver and firmware; None from the v1 call, which does
            not report it.
    """

    total: int
    used: int
    free: int
    reserved: int | None


@dataclass(frozen=True)
class Utilization:
    """GPU and memory-controller utilisation over NVML's last sample period, in percent 0-100."""

    gpu: int
    memory: int


@dataclass(frozen=True)
class RemappedRows:
    """Row-remapping counters (Ampere and later).

    Attributes:
        correctable: rows remapped because of correctable errors.
        uncorrectable: rows remapped because of uncorrectable errors.
        pending: a remapping waits for a GPU reset.
        failure: a remapping failed.
    """

    correctable: int
    uncorrectable: int
    pending: bool
    failure: bool


@dataclass(frozen=True)
class XidEvent:
    """One Xid critical error delivered by an NVML event set.

    Attributes:
        uuid: UUID of the GPU that raised it.
        xid: the Xid number (e.g. 79: GPU has fallen off the bus).
    """

    uuid: str
    xid: int


class NvmlBackend(Protocol):
    """The NVML calls the exporter makes; one method per NVML function.

    Every method may raise ``pynvml.NVMLError`` subclasses or ``NVMLLibraryMismatchError``.
    Values are in NVML's units; the collector converts them to base units.
    """

    def init(self) -> None:
        """``nvmlInit``: load the library and initialise NVML."""

    def shutdown(self) -> None:
        """``nvmlShutdown``: release NVML."""

    def system_driver_version(self) -> str:
        """``nvmlSystemGetDriverVersion``, e.g. ``"550.54.15"``."""

    def system_cuda_driver_version(self) -> int:
        """``nvmlSystemGetCudaDriverVersion``: CUDA version as ``1000*major + 10*minor``."""

    def device_count(self) -> int:
        """``nvmlDeviceGetCount``: GPUs visible to this process."""

    def device_handle_by_index(self, index: int) -> Handle:
        """``nvmlDeviceGetHandleByIndex``."""

    def device_handle_by_uuid(self, uuid: str) -> Handle:
        """``nvmlDeviceGetHandleByUUID``."""

    def device_uuid(self, handle: Handle) -> str:
        """``nvmlDeviceGetUUID``: ``"GPU-..."`` or ``"MIG-..."``."""

    def device_name(self, handle: Handle) -> str:
        """``nvmlDeviceGetName``: the product name."""

    def device_pci_bus_id(self, handle: Handle) -> str:
        """``nvmlDeviceGetPciInfo().busId``, e.g. ``"00000000:17:00.0"``."""

    def device_mig_mode(self, handle: Handle) -> tuple[int, int]:
        """``nvmlDeviceGetMigMode``: (current, pending); 1 is enabled."""

    def device_memory_info_v2(self, handle: Handle) -> MemoryInfo:
        """``nvmlDeviceGetMemoryInfo_v2``: memory in bytes, with ``reserved``."""

    def device_memory_info_v1(self, handle: Handle) -> MemoryInfo:
        """``nvmlDeviceGetMemoryInfo``: memory in bytes, ``reserved`` None."""

    def device_utilization(self, handle: Handle) -> Utilization:
        """``nvmlDeviceGetUtilizationRates``: percent 0-100."""

    def device_temperature_v(self, handle: Handle, sensor: int) -> int:
        """``nvmlDeviceGetTemperatureV``: degrees Celsius."""

    def device_temperature_legacy(self, handle: Handle, sensor: int) -> int:
        """``nvmlDeviceGetTemperature`` (deprecated): degrees Celsius."""

    def device_power_usage(self, handle: Handle) -> int:
        """``nvmlDeviceGetPowerUsage``: milliwatts."""

    def device_enforced_power_limit(self, handle: Handle) -> int:
        """``nvmlDeviceGetEnforcedPowerLimit``: milliwatts."""

    def device_total_energy_consumption(self, handle: Handle) -> int:
        """``nvmlDeviceGetTotalEnergyConsumption``: millijoules since the driver loaded."""

    def device_clock(self, handle: Handle, clock_type: int) -> int:
        """``nvmlDeviceGetClockInfo``: current clock in MHz."""

    def device_supported_clock_event_reasons(self, handle: Handle) -> int:
        """``nvmlDeviceGetSupportedClocksEventReasons``: bit mask."""

    def device_current_clock_event_reasons(self, handle: Handle) -> int:
        """``nvmlDeviceGetCurrentClocksEventReasons``: bit mask."""

    def device_supported_clock_throttle_reasons(self, handle: Handle) -> int:
        """``nvmlDeviceGetSupportedClocksThrottleReasons`` (deprecated name, older drivers)."""

    def device_current_clock_throttle_reasons(self, handle: Handle) -> int:
        """``nvmlDeviceGetCurrentClocksThrottleReasons`` (deprecated name, older drivers)."""

    def device_total_ecc_errors(self, handle: Handle, error_type: int, counter_type: int) -> int:
        """``nvmlDeviceGetTotalEccErrors``: error count."""

    def device_remapped_rows(self, handle: Handle) -> RemappedRows:
        """``nvmlDeviceGetRemappedRows``."""

    def device_pcie_replay_counter(self, handle: Handle) -> int:
        """``nvmlDeviceGetPcieReplayCounter``: replays since the driver loaded."""

    def device_max_mig_device_count(self, handle: Handle) -> int:
        """``nvmlDeviceGetMaxMigDeviceCount``: MIG slots on this GPU."""

    def device_mig_device_handle(self, handle: Handle, index: int) -> Handle:
        """``nvmlDeviceGetMigDeviceHandleByIndex``; ``NVMLError_NotFound`` for an empty slot."""

    def device_gpu_instance_id(self, mig_handle: Handle) -> int:
        """``nvmlDeviceGetGpuInstanceId`` of a MIG device handle."""

    def device_supported_event_types(self, handle: Handle) -> int:
        """``nvmlDeviceGetSupportedEventTypes``: bit mask."""

    def event_set_create(self) -> EventSet:
        """``nvmlEventSetCreate``."""

    def device_register_events(self, handle: Handle, event_types: int, event_set: EventSet) -> None:
        """``nvmlDeviceRegisterEvents``."""

    def event_set_wait(self, event_set: EventSet, timeout_ms: int) -> XidEvent | None:
        """``nvmlEventSetWait``: the next Xid event, or None for another event type.

        Raises ``NVMLError_Timeout`` when nothing arrives within ``timeout_ms`` milliseconds.
        """

    def event_set_free(self, event_set: EventSet) -> None:
        """``nvmlEventSetFree``."""


class PynvmlBackend:
    """:class:`NvmlBackend` over nvidia-ml-py (``import pynvml``); needs ``libnvidia-ml.so.1``."""

    def init(self) -> None:
        """See :meth:`NvmlBackend.init`."""
        pynvml.nvmlInit()

    def shutdown(self) -> None:
        """See :meth:`NvmlBackend.shutdown`."""
        pynvml.nvmlShutdown()

    def system_driver_version(self) -> str:
        """See :meth:`NvmlBackend.system_driver_version`."""
        return str(pynvml.nvmlSystemGetDriverVersion())

    def system_cuda_driver_version(self) -> int:
        """See :meth:`NvmlBackend.system_cuda_driver_version`."""
        return int(pynvml.nvmlSystemGetCudaDriverVersion())

    def device_count(self) -> int:
        """See :meth:`NvmlBackend.device_count`."""
        return int(pynvml.nvmlDeviceGetCount())

    def device_handle_by_index(self, index: int) -> Handle:
        """See :meth:`NvmlBackend.device_handle_by_index`."""
        return pynvml.nvmlDeviceGetHandleByIndex(index)

    def device_handle_by_uuid(self, uuid: str) -> Handle:
        """See :meth:`NvmlBackend.device_handle_by_uuid`."""
        return pynvml.nvmlDeviceGetHandleByUUID(uuid)

    def device_uuid(self, handle: Handle) -> str:
        """See :meth:`NvmlBackend.device_uuid`."""
        return str(pynvml.nvmlDeviceGetUUID(handle))

    def device_name(self, handle: Handle) -> str:
        """See :meth:`NvmlBackend.device_name`."""
        return str(pynvml.nvmlDeviceGetName(handle))

    def device_pci_bus_id(self, handle: Handle) -> str:
        """See :meth:`NvmlBackend.device_pci_bus_id`."""
        bus_id = pynvml.nvmlDeviceGetPciInfo(handle).busId
        return bus_id.decode() if isinstance(bus_id, bytes) else str(bus_id)

    def device_mig_mode(self, handle: Handle) -> tuple[int, int]:
        """See :meth:`NvmlBackend.device_mig_mode`."""
        current, pending = pynvml.nvmlDeviceGetMigMode(handle)
        return int(current), int(pending)

    def device_memory_info_v2(self, handle: Handle) -> MemoryInfo:
        """See :meth:`NvmlBackend.device_memory_info_v2`."""
        mem = pynvml.nvmlDeviceGetMemoryInfo(handle, version=pynvml.nvmlMemory_v2)
        return MemoryInfo(int(mem.total), int(mem.used), int(mem.free), int(mem.reserved))

    def device_memory_info_v1(self, handle: Handle) -> MemoryInfo:
        """See :meth:`NvmlBackend.device_memory_info_v1`."""
        mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
        return MemoryInfo(int(mem.total), int(mem.used), int(mem.free), None)

    def device_utilization(self, handle: Handle) -> Utilization:
        """See :meth:`NvmlBackend.device_utilization`."""
        rates = pynvml.nvmlDeviceGetUtilizationRates(handle)
        return Utilization(int(rates.gpu), int(rates.memory))

    def device_temperature_v(self, handle: Handle, sensor: int) -> int:
        """See :meth:`NvmlBackend.device_temperature_v`."""
        return int(pynvml.nvmlDeviceGetTemperatureV(handle, sensor))

    def device_temperature_legacy(self, handle: Handle, sensor: int) -> int:
        """See :meth:`NvmlBackend.device_temperature_legacy`."""
        return int(pynvml.nvmlDeviceGetTemperature(handle, sensor))

    def device_power_usage(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_power_usage`."""
        return int(pynvml.nvmlDeviceGetPowerUsage(handle))

    def device_enforced_power_limit(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_enforced_power_limit`."""
        return int(pynvml.nvmlDeviceGetEnforcedPowerLimit(handle))

    def device_total_energy_consumption(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_total_energy_consumption`."""
        return int(pynvml.nvmlDeviceGetTotalEnergyConsumption(handle))

    def device_clock(self, handle: Handle, clock_type: int) -> int:
        """See :meth:`NvmlBackend.device_clock`."""
        return int(pynvml.nvmlDeviceGetClockInfo(handle, clock_type))

    def device_supported_clock_event_reasons(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_supported_clock_event_reasons`."""
        return int(pynvml.nvmlDeviceGetSupportedClocksEventReasons(handle))

    def device_current_clock_event_reasons(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_current_clock_event_reasons`."""
        return int(pynvml.nvmlDeviceGetCurrentClocksEventReasons(handle))

    def device_supported_clock_throttle_reasons(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_supported_clock_throttle_reasons`."""
        return int(pynvml.nvmlDeviceGetSupportedClocksThrottleReasons(handle))

    def device_current_clock_throttle_reasons(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_current_clock_throttle_reasons`."""
        return int(pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle))

    def device_total_ecc_errors(self, handle: Handle, error_type: int, counter_type: int) -> int:
        """See :meth:`NvmlBackend.device_total_ecc_errors`."""
        return int(pynvml.nvmlDeviceGetTotalEccErrors(handle, error_type, counter_type))

    def device_remapped_rows(self, handle: Handle) -> RemappedRows:
        """See :meth:`NvmlBackend.device_remapped_rows`."""
        corr, unc, pending, failure = pynvml.nvmlDeviceGetRemappedRows(handle)
        return RemappedRows(int(corr), int(unc), bool(pending), bool(failure))

    def device_pcie_replay_counter(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_pcie_replay_counter`."""
        return int(pynvml.nvmlDeviceGetPcieReplayCounter(handle))

    def device_max_mig_device_count(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_max_mig_device_count`."""
        return int(pynvml.nvmlDeviceGetMaxMigDeviceCount(handle))

    def device_mig_device_handle(self, handle: Handle, index: int) -> Handle:
        """See :meth:`NvmlBackend.device_mig_device_handle`."""
        return pynvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, index)

    def device_gpu_instance_id(self, mig_handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_gpu_instance_id`."""
        return int(pynvml.nvmlDeviceGetGpuInstanceId(mig_handle))

    def device_supported_event_types(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_supported_event_types`."""
        return int(pynvml.nvmlDeviceGetSupportedEventTypes(handle))

    def event_set_create(self) -> EventSet:
        """See :meth:`NvmlBackend.event_set_create`."""
        return pynvml.nvmlEventSetCreate()

    def device_register_events(self, handle: Handle, event_types: int, event_set: EventSet) -> None:
        """See :meth:`NvmlBackend.device_register_events`."""
        pynvml.nvmlDeviceRegisterEvents(handle, event_types, event_set)

    def event_set_wait(self, event_set: EventSet, timeout_ms: int) -> XidEvent | None:
        """See :meth:`NvmlBackend.event_set_wait`."""
        data = pynvml.nvmlEventSetWait(event_set, timeout_ms)
        if int(data.eventType) != EVENT_XID_CRITICAL:
            return None
        return XidEvent(uuid=str(pynvml.nvmlDeviceGetUUID(data.device)), xid=int(data.eventData))

    def event_set_free(self, event_set: EventSet) -> None:
        """See :meth:`NvmlBackend.event_set_free`."""
        pynvml.nvmlEventSetFree(event_set)
