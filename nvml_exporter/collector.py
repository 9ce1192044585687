"""The prometheus-client custom collector: NVML readings to metric families at scrape time.

Each NVML concern is one reader of :mod:`nvml_exporter.readers` (:data:`READERS`);
:class:`NvmlCollector` runs every reader on every GPU and isolates failures per call, MIG slot,
reader, GPU and NVML session: nothing raised by NVML escapes :meth:`NvmlCollector.collect`.
How each level is handled: docs/exporter.md, "The collector: failures isolated at five levels".
"""

from __future__ import annotations

import logging
import platform
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from importlib import metadata

from prometheus_client.core import Metric
from prometheus_client.registry import CollectorRegistry

from nvml_exporter import metrics as m
from nvml_exporter import nvml
from nvml_exporter.nvml import NvmlBackend
from nvml_exporter.readers import (
    READERS,
    REPROBE_INITIAL_S,
    REPROBE_MAX_S,
    Device,
    GpuLost,
    LabelValues,
    NvmlGone,
    ReadContext,
    Samples,
    Unidentified,
    XidSource,
    raise_if_lost_or_gone,
)

log = logging.getLogger(__name__)


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
