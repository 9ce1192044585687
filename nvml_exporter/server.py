"""The exporter process: HTTP endpoints, NVML init with backoff, deadline-bound collection.

More: docs/exporter.md, "The exporter process".
"""

from __future__ import annotations

import gzip
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from prometheus_client.core import Metric
from prometheus_client.process_collector import ProcessCollector

from nvml_exporter.collector import NvmlCollector
from nvml_exporter.httpd import HttpLimits, HttpServer, Request, Response, Route, gzip_acceptable
from nvml_exporter.negotiation import DEFAULT, negotiate
from nvml_exporter.nvml import NvmlBackend
from nvml_exporter.readers import Samples
from nvml_exporter.xid import XidWatcher

log = logging.getLogger(__name__)

DEFAULT_PORT = 9445
"""Default TCP port: neither dcgm-exporter (9400) nor nvidia_gpu_exporter (9835)."""
DEFAULT_SCRAPE_TIMEOUT_S = 10.0
"""Scrape timeout in seconds assumed when Prometheus sends no timeout header."""
TIMEOUT_HEADER = "X-Prometheus-Scrape-Timeout-Seconds"
INIT_BACKOFF_INITIAL_S = 1.0
"""First NVML init retry delay in seconds; it doubles up to :data:`INIT_BACKOFF_MAX_S`."""
INIT_BACKOFF_MAX_S = 60.0
"""Largest NVML init retry delay in seconds."""
SHUTDOWN_GRACE_S = 2.0
"""Seconds :meth:`Exporter.stop` waits for an in-flight collection before ``nvmlShutdown``."""


class DeadlineExceeded(Exception):
    """Counted (``collector="scrape"``) when a scrape's deadline passes mid-collection."""


class PreviousCollectionHung(Exception):
    """Counted (``collector="scrape"``) when a scrape finds an earlier collection still hung."""


def collection_deadline(header: str | None) -> float:
    """Return how long in seconds a scrape may wait for the collection.

    Args:
        header: the ``X-Prometheus-Scrape-Timeout-Seconds`` value, or None.

    Returns:
        ``timeout - min(0.5, timeout / 2)``: half a second (or half the timeout, if shorter)
        is kept for rendering and sending. A missing, unparsable or non-positive header means
        :data:`DEFAULT_SCRAPE_TIMEOUT_S`.
    """
    try:
        timeout = float(header) if header is not None else DEFAULT_SCRAPE_TIMEOUT_S
    except ValueError:
        timeout = DEFAULT_SCRAPE_TIMEOUT_S
    if not timeout > 0 or timeout == float("inf"):  # also rejects NaN
        timeout = DEFAULT_SCRAPE_TIMEOUT_S
    return timeout - min(0.5, timeout / 2)


@dataclass
class _Collection:
    sink: Samples = field(default_factory=Samples)
    done: threading.Event = field(default_factory=threading.Event)
    hung: bool = False  # a scrape's deadline expired while it ran


class SingleFlight:
    """At most one collection at a time, shared by all scrapes that arrive while it runs.

    Args:
        collect_into: fills a :class:`Samples` (``NvmlCollector.collect_into``); runs in a
            daemon thread so that a hung NVML call never blocks a scrape past its deadline.

    Attributes:
        started: collections started so far.
        joined: scrapes that joined a collection another scrape had started.
    """

    def __init__(self, collect_into: Callable[[Samples], None]) -> None:
        self._collect_into = collect_into
        self._lock = threading.Lock()
        self._current: _Collection | None = None
        self.started = 0
        self.joined = 0

    def gather(self, deadline_s: float) -> tuple[list[Metric], Exception | None]:
        """Join the running collection, or start one, and wait up to ``deadline_s`` seconds.

        Returns:
            ``(families, problem)``. ``problem`` is None for a complete collection;
            :class:`DeadlineExceeded` when the deadline passed (``families`` then holds the
            GPUs finished so far); :class:`PreviousCollectionHung` when an earlier collection
            overran its deadline and still runs (``families`` is empty: its readings may be
            stale).
        """
        with self._lock:
            current = self._current
            if current is None or current.done.is_set():
                current = _Collection()
                self._current = current
                self.started += 1
                threading.Thread(
                    target=self._run, args=(current,), name="nvml-collect", daemon=True
                ).start()
            elif current.hung:
                return [], PreviousCollectionHung()
            else:
                self.joined += 1
        if current.done.wait(deadline_s):
            return current.sink.families(), None
        with self._lock:
            current.hung = True
        return current.sink.families(), DeadlineExceeded()

    def _run(self, collection: _Collection) -> None:
        try:
            self._collect_into(collection.sink)
        except Exception:  # collect_into isolates failures; this is a last guard
            log.exception("collection failed")
        finally:
            collection.done.set()

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` seconds for the running collection; True when none runs."""
        with self._lock:
            current = self._current
        return current is None or current.done.wait(timeout_s)


class _Families:
    """A prometheus-client ``Collector`` over a fixed list of families (for the encoders)."""

    def __init__(self, families: Iterable[Metric]) -> None:
        self._families = list(families)

    def collect(self) -> Iterable[Metric]:
        return self._families


class Exporter:
    """The exporter: HTTP server, NVML lifecycle and Xid watcher.

    Args:
        backend: the NVML backend.
        host: address to listen on (``""`` for all IPv4 interfaces, ``"::"`` for IPv6).
        port: TCP port; 0 picks a free one (see :attr:`port`).
        gpu_uuids: report only these GPUs; empty reports all.
        init_backoff: ``(initial, max)`` NVML init retry delays in seconds.
        timer: monotonic clock in seconds.
        http_limits: HTTP timeouts and connection cap (:class:`~nvml_exporter.httpd.HttpLimits`
            defaults when None).

    Raises:
        OSError: from :meth:`start` when the address cannot be bound.
    """

    def __init__(
        self,
        backend: NvmlBackend,
        *,
        host: str = "",
        port: int = DEFAULT_PORT,
        gpu_uuids: Iterable[str] = (),
        init_backoff: tuple[float, float] = (INIT_BACKOFF_INITIAL_S, INIT_BACKOFF_MAX_S),
        timer: Callable[[], float] = time.monotonic,
        http_limits: HttpLimits | None = None,
    ) -> None:
        self.host = host
        self.http_limits = http_limits or HttpLimits()
        self.requested_port = port
        self.timer = timer
        self.init_backoff = init_backoff
        self.collector = NvmlCollector(backend, gpu_uuids=gpu_uuids, timer=timer)
        self.xids = XidWatcher(backend, on_error=self.collector.count_error)
        self.collector.xids = self.xids
        self.flight = SingleFlight(self.collector.collect_into)
        self.process = ProcessCollector(registry=None)
        self._stopping = threading.Event()
        self._wake = threading.Event()  # NVML found gone, or stopping
        self.collector.on_nvml_lost = self._wake.set
        self.http: HttpServer | None = None
        self._init_thread: threading.Thread | None = None
        self._stopped = False

    @property
    def ready(self) -> bool:
        """Whether NVML is initialised (``/readyz``)."""
        return self.collector.up

    @property
    def port(self) -> int:
        """The bound TCP port (after :meth:`start`)."""
        if self.http is None:
            return self.requested_port
        return self.http.port

    def start(self) -> None:
        """Bind and serve HTTP in a thread, then start NVML init (retried in a thread)."""
        routes = {
            "/metrics": Route(self._metrics, blocking=True),
            "/healthz": Route(lambda _: Response(200, b"ok\n")),
            "/readyz": Route(self._readyz),
            "/": Route(lambda _: Response(200, b"nvml-exporter: /metrics /healthz /readyz\n")),
        }
        self.http = HttpServer(self.host, self.requested_port, routes, self.http_limits)
        self.http.start()
        self._init_thread = threading.Thread(target=self._supervise, name="nvml-init", daemon=True)
        self._init_thread.start()

    def _supervise(self) -> None:
        """Initialise NVML with backoff, start the Xid watcher, and do it again whenever a
        collection finds NVML gone; until :meth:`stop`."""
        delay, max_delay = self.init_backoff
        while not self._stopping.is_set():
            if not self.collector.initialise():
                log.info("retrying NVML init in %.1f s", delay)
                if self._stopping.wait(delay):
                    return
                delay = min(delay * 2, max_delay)
                continue
            delay = self.init_backoff[0]
            if self._stopping.is_set():
                return
            self.xids.start([(d.handle, d.uuid) for d in self.collector.devices if not d.lost])
            while self.collector.up and not self._stopping.is_set():
                self._wake.wait()
                self._wake.clear()
            if self._stopping.is_set():
                return
            # The old event set dies with the NVML session: stop its thread before
            # initialise() shuts the session down, and never while it is inside NVML.
            while not self.xids.stop(SHUTDOWN_GRACE_S):
                if self._stopping.is_set():
                    return

    def _readyz(self, request: Request) -> Response:
        if self.ready:
            return Response(200, b"ready\n")
        return Response(503, b"NVML is not initialised yet\n")

    def _metrics(self, request: Request) -> Response:
        """``/metrics``: gather, encode in the format ``Accept`` asks for (:func:`negotiate`:
        never a failed scrape), gzip if acceptable."""
        queued_s = time.monotonic() - request.received_at
        families = self.gather(request.headers.get(TIMEOUT_HEADER.lower()), queued_s=queued_s)
        wanted = negotiate(request.headers.get("accept"))
        try:
            body = wanted.encode(_Families(families))
        except Exception:  # a bug in one writer: the scrape still gets the default format
            log.error(
                "writing %s failed; answering %s",
                wanted.content_type,
                DEFAULT.content_type,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            wanted, body = DEFAULT, DEFAULT.encode(_Families(families))
        headers: tuple[tuple[str, str], ...] = (("Vary", "Accept, Accept-Encoding"),)
        if gzip_acceptable(request.headers.get("accept-encoding")):
            body = gzip.compress(body, compresslevel=5)
            headers += (("Content-Encoding", "gzip"),)
        return Response(200, body, wanted.content_type, headers)

    def gather(self, timeout_header: str | None, *, queued_s: float = 0.0) -> list[Metric]:
        """Collect for one scrape; never raises.

        Args:
            timeout_header: the ``X-Prometheus-Scrape-Timeout-Seconds`` header, or None.
            queued_s: seconds the request already waited (for a worker thread); taken off
                the collection deadline.

        Returns:
            Device families (all, or those finished before the deadline), the
            ``gpu_exporter_*`` families and the ``process_*`` families.
        """
        start = self.timer()
        families: list[Metric] = []
        # What this scrape's collection saw: the re-init thread, woken by a collection that
        # found NVML gone, may bring it back before the self metrics are read, and a scrape
        # must not report NVML up beside no GPU readings.
        up_seen, losses = self.collector.up, self.collector.losses
        try:
            if up_seen:
                deadline_s = max(0.0, collection_deadline(timeout_header) - queued_s)
                families, problem = self.flight.gather(deadline_s)
                if problem is not None:
                    self.collector.count_error("scrape", problem)
                    log.warning(
                        "scrape served without complete GPU data: %s", type(problem).__name__
                    )
        except Exception as exc:  # a bug; still answer with the self metrics
            self.collector.count_error("scrape", exc)
            log.exception("collection failed")
        up_seen = up_seen and self.collector.losses == losses
        families.extend(self.collector.self_families(self.timer() - start, up_seen))
        try:
            families.extend(self.process.collect())
        except Exception as exc:
            log.debug("process metrics unavailable: %r", exc)
        return families

    def stop(self) -> None:
        """Stop serving, stop init and Xid threads, then ``nvmlShutdown``; idempotent.

        ``nvmlShutdown`` is skipped (and logged) when NVML init, the Xid event thread or a
        collection is still hung after :data:`SHUTDOWN_GRACE_S`, so that it never races a call
        in progress.
        """
        if self._stopped:
            return
        self._stopped = True
        self._stopping.set()
        self._wake.set()
        if self.http is not None:
            self.http.stop()
        if self._init_thread is not None:
            self._init_thread.join(SHUTDOWN_GRACE_S)
            if self._init_thread.is_alive():
                log.warning("NVML (re-)init is still hung; exiting without nvmlShutdown")
                return
        if not self.xids.stop(SHUTDOWN_GRACE_S):
            log.warning("the Xid event thread is still in NVML; exiting without nvmlShutdown")
            return
        if not self.flight.wait_idle(SHUTDOWN_GRACE_S):
            log.warning("a collection is still hung in NVML; exiting without nvmlShutdown")
            return
        self.collector.shutdown()
