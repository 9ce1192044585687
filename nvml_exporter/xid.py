"""Xid critical errors, counted by a background thread that waits on an NVML event set.

More: docs/exporter.md, "Xid errors".
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Sequence

from nvml_exporter import nvml
from nvml_exporter.nvml import EventSet, Handle, NvmlBackend

log = logging.getLogger(__name__)

WAIT_MS = 500
"""Milliseconds one ``nvmlEventSetWait`` blocks; bounds how long :meth:`XidWatcher.stop` takes."""
RETRY_S = 5.0
"""Seconds to pause after a failed wait before waiting again."""


class UnknownXidDevice(Exception):
    """Counted (``collector="xid"``) for an Xid event of a device that was never registered."""


class XidWatcher:
    """Counts Xid critical errors per GPU from an NVML event thread.

    Args:
        backend: the NVML backend (initialised before :meth:`start`).
        wall_clock: Unix time in seconds, for ``gpu_xid_last_timestamp_seconds``.
        on_error: called with ``("xid", exception)`` for each failed NVML call (the collector's
            ``count_error``); None only logs.
        wait_ms: milliseconds per event wait.
        retry_s: pause in seconds after a failed wait.
    """

    def __init__(
        self,
        backend: NvmlBackend,
        *,
        wall_clock: Callable[[], float] = time.time,
        on_error: Callable[[str, BaseException], None] | None = None,
        wait_ms: int = WAIT_MS,
        retry_s: float = RETRY_S,
    ) -> None:
        self.backend = backend
        self.wall_clock = wall_clock
        self.on_error = on_error
        self.wait_ms = wait_ms
        self.retry_s = retry_s
        self._counts: dict[tuple[str, int], tuple[int, float]] = {}
        self._lock = threading.Lock()  # counts and identities
        self._identities: dict[Hashable, str] = {}  # device_key -> UUID, this NVML session
        # Event-set lifecycle (create, register, free) and thread start/stop: one at a time.
        self._state_lock = threading.Lock()
        self._accepting = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._event_set: EventSet | None = None

    def record(self, uuid: str, xid: int) -> None:
        """Count one Xid ``xid`` on GPU ``uuid`` at the current wall-clock time."""
        now = self.wall_clock()
        with self._lock:
            count, _ = self._counts.get((uuid, xid), (0, 0.0))
            self._counts[(uuid, xid)] = (count + 1, now)
        log.warning("Xid %d on GPU %s", xid, uuid)

    def snapshot(self) -> dict[tuple[str, int], tuple[int, float]]:
        """Return ``{(gpu uuid, xid): (count, last Unix time in seconds)}``."""
        with self._lock:
            return dict(self._counts)

    def _error(self, exc: BaseException) -> None:
        if self.on_error is not None:
            self.on_error("xid", exc)

    def start(self, devices: Sequence[tuple[Handle, str]]) -> bool:
        """Register Xid events on ``devices``, ``(handle, uuid)`` pairs, and start the thread;
        again after :meth:`stop`.

        After ``start``, :meth:`watch` may add GPUs (a recovered or late-identified one), even
        when none could be registered now.

        Returns:
            True when the thread runs; False when no GPU supports Xid events or NVML failed
            (counted through ``on_error``, never raised).
        """
        with self._state_lock:
            self._accepting = True
            return self._register(devices)

    def watch(self, handle: Handle, uuid: str) -> bool:
        """Register Xid events on one more GPU (again, after a recovery); start the thread if
        none runs. A no-op (False) before :meth:`start` and after :meth:`stop`.

        Returns:
            True when the thread runs and the GPU was registered.
        """
        with self._state_lock:
            return self._accepting and self._register([(handle, uuid)], every=True)

    def _register(self, devices: Sequence[tuple[Handle, str]], *, every: bool = False) -> bool:
        """Register ``devices`` in the event set (created if needed); hold ``_state_lock``.

        Returns True when the thread runs and (``every``) every handle was registered.
        """
        created = self._event_set is None
        if created:
            try:
                self._event_set = self.backend.event_set_create()
            except Exception as exc:
                if not nvml.is_absent(exc):  # not offered here: absent, not a failure
                    self._error(exc)
                log.warning("Xid events unavailable: cannot create an NVML event set: %r", exc)
                return False
        registered = 0
        for handle, uuid in devices:
            with self._lock:  # learnt before registering: an event may follow at once
                self._identities[self.backend.device_key(handle)] = uuid
            try:
                if not self.backend.device_supported_event_types(handle) & nvml.EVENT_XID_CRITICAL:
                    continue
                self.backend.device_register_events(
                    handle, nvml.EVENT_XID_CRITICAL, self._event_set
                )
                registered += 1
            except Exception as exc:
                if nvml.is_absent(exc):
                    continue
                self._error(exc)
                log.warning("cannot register Xid events on GPU %s: %r", uuid, exc)
        if self._thread is None:
            if not registered:
                if created:
                    self._free(self._event_set)
                    self._event_set = None
                log.info("no GPU supports Xid events; gpu_xid_* series will be absent")
                return False
            stop = threading.Event()
            self._stop = stop
            self._thread = threading.Thread(
                target=self._run, args=(self._event_set, stop), name="nvml-xid-events", daemon=True
            )
            self._thread.start()
        log.info("watching Xid events on %d more GPU(s)", registered)
        return registered == len(devices) if every else True

    def _run(self, event_set: EventSet, stop: threading.Event) -> None:
        # The set and the stop flag are this thread's own: a later start() never revives it.
        while not stop.is_set():
            try:
                event = self.backend.event_set_wait(event_set, self.wait_ms)
            except Exception as exc:
                if nvml.is_timeout(exc):
                    continue
                self._error(exc)
                log.warning("waiting for NVML events failed: %r", exc)
                stop.wait(self.retry_s)
                continue
            if event is None:
                continue
            with self._lock:
                uuid = self._identities.get(event.device)
            if uuid is None:  # never registered by us: nothing to label it with
                self._error(UnknownXidDevice(event.xid))
                log.warning("Xid %d on a GPU this exporter did not register", event.xid)
                continue
            self.record(uuid, event.xid)

    def stop(self, timeout_s: float = 2.0) -> bool:
        """Stop the thread (within about ``wait_ms``) and free the event set; idempotent.

        :meth:`watch` is a no-op afterwards, until :meth:`start`. The event set is freed only
        once the thread has ended, so a hung NVML call is never raced; call ``stop`` again to
        retry.

        Returns:
            True when no thread runs and the event set is freed (NVML may be shut down);
            False when a registration or the thread is still inside NVML after ``timeout_s``
            seconds.
        """
        if not self._state_lock.acquire(timeout=timeout_s):
            log.warning("an Xid registration is still hung in NVML after %.1f s", timeout_s)
            return False
        try:
            self._accepting = False
            if self._thread is not None:
                self._stop.set()
                self._thread.join(timeout_s)
                if self._thread.is_alive():
                    log.warning("Xid event thread did not stop within %.1f s", timeout_s)
                    return False
                self._thread = None
            if self._event_set is not None:
                self._free(self._event_set)
                self._event_set = None
            with self._lock:
                self._identities.clear()  # handles die with the NVML session
            return True
        finally:
            self._state_lock.release()

    def _free(self, event_set: EventSet) -> None:
        try:
            self.backend.event_set_free(event_set)
        except Exception as exc:
            log.debug("nvmlEventSetFree failed: %r", exc)
