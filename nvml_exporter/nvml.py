"""The NVML backend interface and its real implementation over nvidia-ml-py.

The collector reads NVML only through :class:`NvmlBackend` (one method per NVML call, NVML's
own units); errors are the binding's, classified by return code (:func:`is_absent` …).
Errors, compatibility with old bindings: docs/exporter.md, "The NVML backend".
"""

from __future__ import annotations

import ctypes
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

import pynvml

Handle: TypeAlias = Any
"""An opaque NVML device handle (a ctypes pointer for the real backend)."""

EventSet: TypeAlias = Any
"""An opaque NVML event set."""

# NVML constants the collector uses. They are C ABI values fixed by nvml.h; the binding only
# mirrors them, and an older binding may lack a name (e.g. ``nvmlClocksEventReason*``), so they
# are spelled here. tests/exporter/test_exporter_bindings.py checks them against the binding.
CLOCK_SM = 1  # NVML_CLOCK_SM
CLOCK_MEM = 2  # NVML_CLOCK_MEM
TEMPERATURE_GPU = 0  # NVML_TEMPERATURE_GPU
MEMORY_ERROR_CORRECTED = 0  # NVML_MEMORY_ERROR_TYPE_CORRECTED
# nvmlPageRetirementCause_t (nvml.h; nvidia-ml-py NVML_PAGE_RETIREMENT_CAUSE_*): the cause value
# and the ``cause`` label of gpu_retired_pages_total.
PAGE_RETIREMENT_CAUSES: tuple[tuple[int, str], ...] = (
    (0, "single_bit_ecc"),  # NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
    (1, "double_bit_ecc"),  # NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
)
MEMORY_ERROR_UNCORRECTED = 1  # NVML_MEMORY_ERROR_TYPE_UNCORRECTED
VOLATILE_ECC = 0  # NVML_VOLATILE_ECC: counts since the driver loaded
AGGREGATE_ECC = 1  # NVML_AGGREGATE_ECC
MIG_ENABLED = 1  # NVML_DEVICE_MIG_ENABLE
NVLINK_ACTIVE = 1  # NVML_FEATURE_ENABLED from nvmlDeviceGetNvLinkState (NVML_NVLINK_STATE_ACTIVE)
NVLINK_MAX_LINKS = 36  # NVML_NVLINK_MAX_LINKS of nvml.h (18 before CUDA 13): links probed
EVENT_XID_CRITICAL = 0x8  # nvmlEventTypeXidCriticalError

# Clock event ("throttle") reason bits (nvmlClocksEventReason*) and their label values.
CLOCK_EVENT_REASONS: tuple[tuple[int, str], ...] = (
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

# NVLink data-link error counters (nvmlNvLinkErrorCounter_t) and their ``counter`` label values.
NVLINK_COUNTERS: tuple[tuple[int, str], ...] = (
    (0, "replay"),  # NVML_NVLINK_ERROR_DL_REPLAY
    (1, "recovery"),  # NVML_NVLINK_ERROR_DL_RECOVERY
    (2, "crc_flit"),  # NVML_NVLINK_ERROR_DL_CRC_FLIT
    (3, "crc_data"),  # NVML_NVLINK_ERROR_DL_CRC_DATA
)

# NVML return codes (nvmlReturn_t in nvml.h). The binding raises ``NVMLError(code)``, which is
# the subclass it defines for that code, or plain ``NVMLError`` for a code newer than the
# binding; so errors are told apart by code (:func:`error_code`), never by class.
ERROR_UNINITIALIZED = 1
ERROR_INVALID_ARGUMENT = 2
ERROR_NOT_SUPPORTED = 3
ERROR_NO_PERMISSION = 4
ERROR_NOT_FOUND = 6
ERROR_DRIVER_NOT_LOADED = 9
ERROR_TIMEOUT = 10
ERROR_LIBRARY_NOT_FOUND = 12
ERROR_FUNCTION_NOT_FOUND = 13
ERROR_GPU_IS_LOST = 15
ERROR_LIB_RM_VERSION_MISMATCH = 18
ERROR_ARGUMENT_VERSION_MISMATCH = 25
ERROR_UNKNOWN = 999

_ERROR_NAMES: dict[int, str] = {
    ERROR_UNINITIALIZED: "Uninitialized",
    ERROR_INVALID_ARGUMENT: "InvalidArgument",
    ERROR_NOT_SUPPORTED: "NotSupported",
    ERROR_NO_PERMISSION: "NoPermission",
    ERROR_NOT_FOUND: "NotFound",
    ERROR_DRIVER_NOT_LOADED: "DriverNotLoaded",
    ERROR_TIMEOUT: "Timeout",
    ERROR_LIBRARY_NOT_FOUND: "LibraryNotFound",
    ERROR_FUNCTION_NOT_FOUND: "FunctionNotFound",
    ERROR_GPU_IS_LOST: "GpuIsLost",
    ERROR_LIB_RM_VERSION_MISMATCH: "LibRmVersionMismatch",
    ERROR_ARGUMENT_VERSION_MISMATCH: "ArgumentVersionMismatch",
    ERROR_UNKNOWN: "Unknown",
}

ABSENT_CODES = frozenset(
    {ERROR_NOT_SUPPORTED, ERROR_FUNCTION_NOT_FOUND, ERROR_ARGUMENT_VERSION_MISMATCH}
)
"""Codes meaning "this GPU, driver or binding does not offer that reading"."""
GONE_CODES = frozenset(
    {ERROR_UNINITIALIZED, ERROR_DRIVER_NOT_LOADED, ERROR_LIB_RM_VERSION_MISMATCH}
)
"""Codes meaning NVML as a whole stopped working (the driver was restarted or upgraded)."""

NVMLError: type[Exception] = pynvml.NVMLError


class BindingMissing(Exception):
    """The installed nvidia-ml-py lacks a function or constant a call needs.

    Treated exactly like ``NVMLError_FunctionNotFound`` (the reading is absent; fallbacks run).
    ``args[0]`` is the missing name.
    """


def _error_class(code: int) -> type[Exception]:
    """The binding's ``NVMLError_<Name>`` class for ``code``, or a stand-in with that code.

    Either kind, raised with no argument, carries ``.value == code`` like the binding's own.
    """
    name = f"NVMLError_{_ERROR_NAMES[code]}"
    found = getattr(pynvml, name, None)
    if isinstance(found, type) and issubclass(found, NVMLError):
        return found

    def new(cls: type[Exception]) -> Exception:
        obj = Exception.__new__(cls)
        obj.value = code  # type: ignore[attr-defined]
        return obj

    return type(name, (NVMLError,), {"__new__": new})


# Error classes, for the fake and the tests to raise (handling goes by code, see above).
# NVMLLibraryMismatchError is not an NVMLError; bindings before 12.555 do not define it.
NVMLLibraryMismatchError: type[Exception] = getattr(
    pynvml, "NVMLLibraryMismatchError", None
) or type("NVMLLibraryMismatchError", (Exception,), {"__doc__": "Stand-in: the binding lacks it."})
NotSupported = _error_class(ERROR_NOT_SUPPORTED)
NoPermission = _error_class(ERROR_NO_PERMISSION)
FunctionNotFound = _error_class(ERROR_FUNCTION_NOT_FOUND)
ArgumentVersionMismatch = _error_class(ERROR_ARGUMENT_VERSION_MISMATCH)
GpuIsLost = _error_class(ERROR_GPU_IS_LOST)
NotFound = _error_class(ERROR_NOT_FOUND)
Timeout = _error_class(ERROR_TIMEOUT)
LibraryNotFound = _error_class(ERROR_LIBRARY_NOT_FOUND)
DriverNotLoaded = _error_class(ERROR_DRIVER_NOT_LOADED)
LibRmVersionMismatch = _error_class(ERROR_LIB_RM_VERSION_MISMATCH)
Unknown = _error_class(ERROR_UNKNOWN)
Uninitialized = _error_class(ERROR_UNINITIALIZED)
InvalidArgument = _error_class(ERROR_INVALID_ARGUMENT)


def error_code(exc: BaseException) -> int | None:
    """Return the NVML return code of ``exc``, or None when it is not an ``NVMLError``."""
    if not isinstance(exc, NVMLError):
        return None
    value = getattr(exc, "value", None)
    return value if isinstance(value, int) else None


def is_absent(exc: BaseException) -> bool:
    """Whether ``exc`` means the reading does not exist here (:data:`ABSENT_CODES`, or a name
    missing from the binding)."""
    return isinstance(exc, BindingMissing) or error_code(exc) in ABSENT_CODES


def is_gpu_lost(exc: BaseException) -> bool:
    """Whether ``exc`` is NVML's ``GpuIsLost``."""
    return error_code(exc) == ERROR_GPU_IS_LOST


def is_nvml_gone(exc: BaseException) -> bool:
    """Whether ``exc`` means NVML as a whole stopped working (:data:`GONE_CODES`)."""
    return error_code(exc) in GONE_CODES


def is_not_found(exc: BaseException) -> bool:
    """Whether ``exc`` is NVML's ``NotFound`` (e.g. an empty MIG slot)."""
    return error_code(exc) == ERROR_NOT_FOUND


def is_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` is NVML's ``Timeout`` (e.g. no event within the wait)."""
    return error_code(exc) == ERROR_TIMEOUT


def error_name(exc: BaseException) -> str:
    """Return a short, bounded name for an exception, used as the ``error`` label value.

    An NVML error is named by its code: ``GpuIsLost`` whatever class the binding raised it as,
    ``NVMLError_26`` for a code this module does not name; any other exception keeps its class
    name (``NVMLLibraryMismatchError``, ``BindingMissing``, ``ValueError``).
    """
    code = error_code(exc)
    if code is not None:
        return _ERROR_NAMES.get(code) or f"NVMLError_{code}"
    return type(exc).__name__


def binding(name: str) -> Any:
    """Return ``pynvml.<name>`` (a function or constant of the installed binding).

    Raises:
        BindingMissing: the installed nvidia-ml-py has no such name.
    """
    try:
        return getattr(pynvml, name)
    except AttributeError:
        raise BindingMissing(name) from None


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

    The device is given as its :meth:`NvmlBackend.device_key`, never as a UUID: the GPU may
    no longer answer by the time the event is read (Xid 79: fallen off the bus), so the
    watcher maps the key to the identity it learnt when it registered the GPU.

    Attributes:
        device: :meth:`NvmlBackend.device_key` of the GPU that raised it.
        xid: the Xid number (e.g. 79: GPU has fallen off the bus).
    """

    device: Hashable
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

    def device_key(self, handle: Handle) -> Hashable:
        """A key equal for every handle of the same device in this NVML session (no NVML call).

        Event data carries a fresh handle object for the device; its key matches the key of
        the handle that was registered.
        """

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

    def device_retired_pages(self, handle: Handle, cause: int) -> int:
        """``nvmlDeviceGetRetiredPages``: how many pages the GPU retired for ``cause``
        (:data:`PAGE_RETIREMENT_CAUSES`; the binding returns their addresses). Page retirement
        is how GPUs before Ampere take bad memory out of use; later ones remap rows."""

    def device_retired_pages_pending(self, handle: Handle) -> bool:
        """``nvmlDeviceGetRetiredPagesPendingStatus``: pages wait for the driver to reload
        (a GPU reset or reboot) to be retired."""

    def device_pcie_replay_counter(self, handle: Handle) -> int:
        """``nvmlDeviceGetPcieReplayCounter``: replays since the driver loaded."""

    def device_nvlink_state(self, handle: Handle, link: int) -> int:
        """``nvmlDeviceGetNvLinkState``: :data:`NVLINK_ACTIVE` for an active link, 0 for an
        inactive one; ``InvalidArgument`` for a link number the GPU does not have,
        ``NotSupported`` on a GPU without NVLink."""

    def device_nvlink_error_counter(self, handle: Handle, link: int, counter: int) -> int:
        """``nvmlDeviceGetNvLinkErrorCounter``: errors of one kind (:data:`NVLINK_COUNTERS`)
        on one link, as NVML counts them until they are reset (a GPU reset, or
        ``nvmlDeviceResetNvLinkErrorCounters``)."""

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

        Reads nothing but the event: the device is given by :meth:`device_key`.

        Raises ``NVMLError_Timeout`` when nothing arrives within ``timeout_ms`` milliseconds.
        """

    def event_set_free(self, event_set: EventSet) -> None:
        """``nvmlEventSetFree``."""


class PynvmlBackend:
    """:class:`NvmlBackend` over nvidia-ml-py (``import pynvml``); needs ``libnvidia-ml.so.1``.

    Every binding function is looked up when called (:func:`binding`): one the installed
    nvidia-ml-py lacks raises :class:`BindingMissing`, so that reading is absent and its
    fallback runs, instead of the import or the whole scrape failing.
    """

    def init(self) -> None:
        """See :meth:`NvmlBackend.init`."""
        binding("nvmlInit")()

    def shutdown(self) -> None:
        """See :meth:`NvmlBackend.shutdown`."""
        binding("nvmlShutdown")()

    def system_driver_version(self) -> str:
        """See :meth:`NvmlBackend.system_driver_version`."""
        return _text(binding("nvmlSystemGetDriverVersion")())

    def system_cuda_driver_version(self) -> int:
        """See :meth:`NvmlBackend.system_cuda_driver_version`."""
        return int(binding("nvmlSystemGetCudaDriverVersion")())

    def device_count(self) -> int:
        """See :meth:`NvmlBackend.device_count`."""
        return int(binding("nvmlDeviceGetCount")())

    def device_handle_by_index(self, index: int) -> Handle:
        """See :meth:`NvmlBackend.device_handle_by_index`."""
        return binding("nvmlDeviceGetHandleByIndex")(index)

    def device_handle_by_uuid(self, uuid: str) -> Handle:
        """See :meth:`NvmlBackend.device_handle_by_uuid`."""
        return binding("nvmlDeviceGetHandleByUUID")(uuid)

    def device_key(self, handle: Handle) -> Hashable:
        """See :meth:`NvmlBackend.device_key`: the address a ctypes handle points to."""
        try:
            address = ctypes.cast(handle, ctypes.c_void_p).value
        except (ctypes.ArgumentError, TypeError):
            return handle if isinstance(handle, Hashable) else id(handle)
        return ("nvmlDevice", address)

    def device_uuid(self, handle: Handle) -> str:
        """See :meth:`NvmlBackend.device_uuid`."""
        return _text(binding("nvmlDeviceGetUUID")(handle))

    def device_name(self, handle: Handle) -> str:
        """See :meth:`NvmlBackend.device_name`."""
        return _text(binding("nvmlDeviceGetName")(handle))

    def device_pci_bus_id(self, handle: Handle) -> str:
        """See :meth:`NvmlBackend.device_pci_bus_id`."""
        return _text(binding("nvmlDeviceGetPciInfo")(handle).busId)

    def device_mig_mode(self, handle: Handle) -> tuple[int, int]:
        """See :meth:`NvmlBackend.device_mig_mode`."""
        current, pending = binding("nvmlDeviceGetMigMode")(handle)
        return int(current), int(pending)

    def device_memory_info_v2(self, handle: Handle) -> MemoryInfo:
        """See :meth:`NvmlBackend.device_memory_info_v2`."""
        version = binding("nvmlMemory_v2")
        mem = binding("nvmlDeviceGetMemoryInfo")(handle, version=version)
        return MemoryInfo(int(mem.total), int(mem.used), int(mem.free), int(mem.reserved))

    def device_memory_info_v1(self, handle: Handle) -> MemoryInfo:
        """See :meth:`NvmlBackend.device_memory_info_v1`."""
        mem = binding("nvmlDeviceGetMemoryInfo")(handle)
        return MemoryInfo(int(mem.total), int(mem.used), int(mem.free), None)

    def device_utilization(self, handle: Handle) -> Utilization:
        """See :meth:`NvmlBackend.device_utilization`."""
        rates = binding("nvmlDeviceGetUtilizationRates")(handle)
        return Utilization(int(rates.gpu), int(rates.memory))

    def device_temperature_v(self, handle: Handle, sensor: int) -> int:
        """See :meth:`NvmlBackend.device_temperature_v`."""
        return int(binding("nvmlDeviceGetTemperatureV")(handle, sensor))

    def device_temperature_legacy(self, handle: Handle, sensor: int) -> int:
        """See :meth:`NvmlBackend.device_temperature_legacy`."""
        return int(binding("nvmlDeviceGetTemperature")(handle, sensor))

    def device_power_usage(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_power_usage`."""
        return int(binding("nvmlDeviceGetPowerUsage")(handle))

    def device_enforced_power_limit(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_enforced_power_limit`."""
        return int(binding("nvmlDeviceGetEnforcedPowerLimit")(handle))

    def device_total_energy_consumption(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_total_energy_consumption`."""
        return int(binding("nvmlDeviceGetTotalEnergyConsumption")(handle))

    def device_clock(self, handle: Handle, clock_type: int) -> int:
        """See :meth:`NvmlBackend.device_clock`."""
        return int(binding("nvmlDeviceGetClockInfo")(handle, clock_type))

    def device_supported_clock_event_reasons(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_supported_clock_event_reasons`."""
        return int(binding("nvmlDeviceGetSupportedClocksEventReasons")(handle))

    def device_current_clock_event_reasons(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_current_clock_event_reasons`."""
        return int(binding("nvmlDeviceGetCurrentClocksEventReasons")(handle))

    def device_supported_clock_throttle_reasons(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_supported_clock_throttle_reasons`."""
        return int(binding("nvmlDeviceGetSupportedClocksThrottleReasons")(handle))

    def device_current_clock_throttle_reasons(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_current_clock_throttle_reasons`."""
        return int(binding("nvmlDeviceGetCurrentClocksThrottleReasons")(handle))

    def device_total_ecc_errors(self, handle: Handle, error_type: int, counter_type: int) -> int:
        """See :meth:`NvmlBackend.device_total_ecc_errors`."""
        return int(binding("nvmlDeviceGetTotalEccErrors")(handle, error_type, counter_type))

    def device_remapped_rows(self, handle: Handle) -> RemappedRows:
        """See :meth:`NvmlBackend.device_remapped_rows`."""
        corr, unc, pending, failure = binding("nvmlDeviceGetRemappedRows")(handle)
        return RemappedRows(int(corr), int(unc), bool(pending), bool(failure))

    def device_retired_pages(self, handle: Handle, cause: int) -> int:
        """See :meth:`NvmlBackend.device_retired_pages`."""
        return len(binding("nvmlDeviceGetRetiredPages")(handle, cause))

    def device_retired_pages_pending(self, handle: Handle) -> bool:
        """See :meth:`NvmlBackend.device_retired_pages_pending`."""
        return bool(binding("nvmlDeviceGetRetiredPagesPendingStatus")(handle))

    def device_pcie_replay_counter(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_pcie_replay_counter`."""
        return int(binding("nvmlDeviceGetPcieReplayCounter")(handle))

    def device_nvlink_state(self, handle: Handle, link: int) -> int:
        """See :meth:`NvmlBackend.device_nvlink_state`."""
        return int(binding("nvmlDeviceGetNvLinkState")(handle, link))

    def device_nvlink_error_counter(self, handle: Handle, link: int, counter: int) -> int:
        """See :meth:`NvmlBackend.device_nvlink_error_counter`."""
        return int(binding("nvmlDeviceGetNvLinkErrorCounter")(handle, link, counter))

    def device_max_mig_device_count(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_max_mig_device_count`."""
        return int(binding("nvmlDeviceGetMaxMigDeviceCount")(handle))

    def device_mig_device_handle(self, handle: Handle, index: int) -> Handle:
        """See :meth:`NvmlBackend.device_mig_device_handle`."""
        return binding("nvmlDeviceGetMigDeviceHandleByIndex")(handle, index)

    def device_gpu_instance_id(self, mig_handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_gpu_instance_id`."""
        return int(binding("nvmlDeviceGetGpuInstanceId")(mig_handle))

    def device_supported_event_types(self, handle: Handle) -> int:
        """See :meth:`NvmlBackend.device_supported_event_types`."""
        return int(binding("nvmlDeviceGetSupportedEventTypes")(handle))

    def event_set_create(self) -> EventSet:
        """See :meth:`NvmlBackend.event_set_create`."""
        return binding("nvmlEventSetCreate")()

    def device_register_events(self, handle: Handle, event_types: int, event_set: EventSet) -> None:
        """See :meth:`NvmlBackend.device_register_events`."""
        binding("nvmlDeviceRegisterEvents")(handle, event_types, event_set)

    def event_set_wait(self, event_set: EventSet, timeout_ms: int) -> XidEvent | None:
        """See :meth:`NvmlBackend.event_set_wait`."""
        data = binding("nvmlEventSetWait")(event_set, timeout_ms)
        if int(data.eventType) != EVENT_XID_CRITICAL:
            return None
        return XidEvent(device=self.device_key(data.device), xid=int(data.eventData))

    def event_set_free(self, event_set: EventSet) -> None:
        """See :meth:`NvmlBackend.event_set_free`."""
        binding("nvmlEventSetFree")(event_set)


def _text(value: object) -> str:
    """A binding's string answer as ``str`` (some bindings return ``bytes``)."""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
