"""Fake scrape targets of the end-to-end suite on 127.0.0.1 (free ports), each served from a
process of its service's own (:class:`FakeHost`, driven through proxies): a model server's
metrics with synthetic traffic (:class:`FakeModelServer`), its pod's cAdvisor and
kube-state-metrics series on a second port, and the real NVML exporter over a one-GPU fake
(:class:`FakeGpuSidecar`). Every target answers with bytes rendered beforehand
(:class:`Exposition`), so a scrape's answer time is a copy, never a collection: rendered per
scrape, answers took up to 1.5 s of the 1 s scrape timeout at a load average of 11, and a
healthy service paged. More: docs/scale-out.md, "The end-to-end suite".
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing import get_context
from multiprocessing.managers import BaseManager
from pathlib import Path
from typing import Any

import requests
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import CollectorRegistry
from prometheus_client.utils import floatToGoString

from tests.e2e.e2e_clock import RENDER_S

GIB = 1024**3

HEALTHY_LATENCY_S = 0.05
"""Latency in seconds of every request of a healthy fake server."""
HEALTHY_RATE = 100.0
"""Requests per second of a healthy fake server."""
READY_S = 30.0
"""Bound for the NVML exporter to initialise its fake NVML (a thread of a fresh process)."""


TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"
"""Content-Type of the fakes' answers: the text format every engine parses (Prometheus 3
fails a scrape whose Content-Type it does not know, unless ``fallback_scrape_protocol`` is
set)."""


class _Collector:
    """Adapter: a registry collector calling ``collect``."""

    def __init__(self, collect: Any) -> None:
        self.collect = collect


def text_of(collect: Callable[[], Iterable[Metric]]) -> bytes:
    """The text exposition (format 0.0.4) of the families ``collect`` returns."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector(collect))  # type: ignore[arg-type]
    return generate_latest(registry)


class _Answer(BaseHTTPRequestHandler):
    """Answers every GET with its server's latest rendered bytes (HTTP/1.1, kept alive)."""

    protocol_version = "HTTP/1.1"
    server: _ExpositionServer

    def do_GET(self) -> None:
        body, content_type = self.server.latest
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class _ExpositionServer(ThreadingHTTPServer):
    """Keeps its open connections, so that closing the server ends the kept-alive ones too
    (a scraper's next request then fails, as a killed process' would)."""

    daemon_threads = True
    latest: tuple[bytes, str] = (b"", TEXT_FORMAT)

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(address, _Answer)
        self.open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self.open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self.open.discard(request)
        super().shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        with self._open_lock:
            for connection in list(self.open):
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)


class Exposition:
    """A scrape target that answers with bytes rendered beforehand.

    :meth:`start` renders once, binds a free 127.0.0.1 port and serves; a thread calls
    ``render`` again every :data:`~tests.e2e.e2e_clock.RENDER_S` seconds, and :meth:`refresh`
    renders at once (after a change). ``render`` returns ``(body, content type)``; when it
    raises, the last answer stays.
    """

    def __init__(self, render: Callable[[], tuple[bytes, str]]) -> None:
        self._render = render
        self._server: _ExpositionServer | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self.port = 0

    def refresh(self) -> None:
        """Render now; the next scrape gets the result."""
        with self._lock:
            server = self._server
            if server is None:
                return
            try:
                server.latest = self._render()
            except Exception:  # the last answer stays; the log says why
                logging.getLogger(__name__).exception("rendering failed")

    def start(self) -> None:
        """Render, bind and serve; re-render every RENDER_S until :meth:`stop`."""
        self._server = _ExpositionServer(("127.0.0.1", 0))
        self.refresh()
        self.port = int(self._server.server_address[1])
        serving = threading.Thread(target=self._server.serve_forever, args=(RENDER_S,))
        ticking = threading.Thread(target=self._tick)
        self._threads = [serving, ticking]
        for thread in self._threads:
            thread.daemon = True
            thread.start()

    def _tick(self) -> None:
        while not self._stopping.wait(RENDER_S):
            self.refresh()

    def stop(self) -> None:
        """Stop serving and close the port (connections are refused from now on);
        idempotent."""
        self._stopping.set()
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(5)
        self._threads = []


class FakeModelServer:
    """Synthetic model-server and Kubernetes metrics for one pod; see the module docstring.

    Args:
        metric: latency histogram base name (``http_request_duration_seconds``).
        buckets: histogram upper bounds in seconds, ascending, without ``+Inf``.
        queue_metric: queue-depth gauge name.
        namespace, pod, container: the pod's identity on the Kubernetes series.
        memory_limit_bytes: the container's memory limit (kube-state-metrics).
        deployment, replicaset: the pod's owners (kube-state-metrics owner series; one replica).
        rate: requests per second.
    """

    def __init__(
        self,
        *,
        metric: str,
        buckets: Sequence[float],
        queue_metric: str,
        namespace: str,
        pod: str,
        container: str,
        memory_limit_bytes: int = GIB,
        deployment: str = "model",
        replicaset: str = "model-6d9f7c8b5",
        rate: float = HEALTHY_RATE,
    ) -> None:
        self.metric = metric
        self.buckets = tuple(buckets)
        self.queue_metric = queue_metric
        self.namespace = namespace
        self.pod = pod
        self.container = container
        self.memory_limit_bytes = memory_limit_bytes
        self.deployment = deployment
        self.replicaset = replicaset
        self._lock = threading.Lock()
        self._rate = rate
        self._latency_s = HEALTHY_LATENCY_S
        self._error_ratio = 0.0
        self._queue = 3.0
        self._last = time.monotonic()
        # status -> cumulative count per bucket (index len(buckets) is +Inf), and sum.
        self._counts = {s: [0.0] * (len(self.buckets) + 1) for s in ("200", "500")}
        self._sums = {"200": 0.0, "500": 0.0}
        self._tokens = 0.0
        self._started = time.monotonic()
        self.model = Exposition(lambda: (text_of(self.collect_model), TEXT_FORMAT))
        self.kube = Exposition(lambda: (text_of(self.collect_kube), TEXT_FORMAT))

    # -- control -----------------------------------------------------------------------------

    def set_traffic(
        self,
        *,
        rate: float | None = None,
        latency_s: float | None = None,
        error_ratio: float | None = None,
        queue: float | None = None,
    ) -> None:
        """Change the traffic from now on: requests/s, latency (s) of every request, error
        ratio 0–1, queued requests. Traffic so far is booked at the old settings first."""
        with self._lock:
            self._advance()
            if rate is not None:
                self._rate = rate
            if latency_s is not None:
                self._latency_s = latency_s
            if error_ratio is not None:
                self._error_ratio = error_ratio
            if queue is not None:
                self._queue = queue
        self.model.refresh()

    def _advance(self) -> None:
        now = time.monotonic()
        requests = self._rate * (now - self._last)
        self._last = now
        first = next((i for i, b in enumerate(self.buckets) if self._latency_s <= b), None)
        first = len(self.buckets) if first is None else first
        for status, share in (("200", 1 - self._error_ratio), ("500", self._error_ratio)):
            n = requests * share
            counts = self._counts[status]
            for i in range(first, len(counts)):
                counts[i] += n
            self._sums[status] += n * self._latency_s
        self._tokens += requests * 200

    # -- exposition --------------------------------------------------------------------------

    def collect_model(self) -> Iterable[Metric]:
        """The model server's own families (the ``/metrics`` of the model container)."""
        with self._lock:
            self._advance()
            hist = HistogramMetricFamily(
                self.metric, "End-to-end request latency in seconds.", labels=["status"]
            )
            for status, counts in sorted(self._counts.items()):
                bounds = [*(floatToGoString(b) for b in self.buckets), "+Inf"]
                hist.add_metric(
                    [status], list(zip(bounds, counts, strict=True)), self._sums[status]
                )
            total = CounterMetricFamily("http_requests", "Requests by status.", labels=["status"])
            for status, counts in sorted(self._counts.items()):
                total.add_metric([status], counts[-1])
            queue = GaugeMetricFamily(self.queue_metric, "Requests waiting in the queue.")
            queue.add_metric([], self._queue)
            tokens = CounterMetricFamily("generation_tokens", "Generated tokens.")
            tokens.add_metric([], self._tokens)
        return [hist, total, queue, tokens]

    def collect_kube(self) -> Iterable[Metric]:
        """cAdvisor and kube-state-metrics series of the pod (values constant, 50 % of limit)."""
        labels = ["namespace", "pod", "container"]
        ident = [self.namespace, self.pod, self.container]
        working_set = GaugeMetricFamily(
            "container_memory_working_set_bytes", "Working set in bytes.", labels=labels
        )
        working_set.add_metric(ident, self.memory_limit_bytes / 2)
        limits = GaugeMetricFamily(
            "kube_pod_container_resource_limits",
            "Container resource limits.",
            labels=[*labels, "resource", "unit"],
        )
        limits.add_metric([*ident, "memory", "byte"], self.memory_limit_bytes)
        limits.add_metric([*ident, "cpu", "core"], 4)
        requests = GaugeMetricFamily(
            "kube_pod_container_resource_requests",
            "Container resource requests.",
            labels=[*labels, "resource", "unit"],
        )
        requests.add_metric([*ident, "memory", "byte"], self.memory_limit_bytes / 2)
        # An OOM kill long ago: the reason series exists, the restart counter stays flat, so
        # ModelContainerOOMKilled must stay quiet (its increase guard is what is tested).
        restarts = CounterMetricFamily(
            "kube_pod_container_status_restarts", "Container restarts.", labels=labels
        )
        restarts.add_metric(ident, 1)
        reason = GaugeMetricFamily(
            "kube_pod_container_status_last_terminated_reason",
            "Reason of the last termination.",
            labels=[*labels, "reason"],
        )
        reason.add_metric([*ident, "OOMKilled"], 1)
        # cAdvisor's OOM kill counter: no kill in this container (the reason above is old).
        oom_events = CounterMetricFamily(
            "container_oom_events", "OOM kills in the container.", labels=labels
        )
        oom_events.add_metric(ident, 0)
        # cAdvisor CPU counters: 1.5 cores used, 10 CFS periods/s of which 1 throttled.
        seconds = time.monotonic() - self._started
        cpu = []
        for name, help_text, per_s in (
            ("container_cpu_usage_seconds", "CPU time used in seconds.", 1.5),
            ("container_cpu_cfs_periods", "Elapsed CFS enforcement periods.", 10.0),
            ("container_cpu_cfs_throttled_periods", "Throttled CFS periods.", 1.0),
        ):
            family = CounterMetricFamily(name, help_text, labels=labels)
            family.add_metric(ident, per_s * seconds)
            cpu.append(family)
        return [working_set, limits, requests, restarts, reason, oom_events, *cpu, *self._owners()]

    def _owners(self) -> list[Metric]:
        """kube-state-metrics: pod → ReplicaSet → Deployment, and the Deployment's replicas."""
        pod_owner = GaugeMetricFamily(
            "kube_pod_owner",
            "Information about the Pod's owner.",
            labels=["namespace", "pod", "owner_kind", "owner_name", "owner_is_controller"],
        )
        pod_owner.add_metric([self.namespace, self.pod, "ReplicaSet", self.replicaset, "true"], 1)
        rs_owner = GaugeMetricFamily(
            "kube_replicaset_owner",
            "Information about the ReplicaSet's owner.",
            labels=["namespace", "replicaset", "owner_kind", "owner_name", "owner_is_controller"],
        )
        rs_owner.add_metric(
            [self.namespace, self.replicaset, "Deployment", self.deployment, "true"], 1
        )
        replicas = []
        for name, help_text in (
            ("kube_deployment_spec_replicas", "Number of desired pods for a deployment."),
            ("kube_deployment_status_replicas_available", "The number of available replicas."),
        ):
            family = GaugeMetricFamily(name, help_text, labels=["namespace", "deployment"])
            family.add_metric([self.namespace, self.deployment], 1)
            replicas.append(family)
        return [pod_owner, rs_owner, *replicas]

    def start(self) -> None:
        """Serve the model metrics and the Kubernetes metrics on two free 127.0.0.1 ports."""
        self.model.start()
        self.kube.start()

    def ports(self) -> tuple[int, int]:
        """``(model port, Kubernetes port)`` once started (for a proxy, which sees methods)."""
        return self.model.port, self.kube.port

    def kill(self) -> None:
        """Stop serving the model metrics (the Kubernetes series stay); idempotent."""
        self.model.stop()

    def stop(self) -> None:
        """Stop both; idempotent."""
        self.model.stop()
        self.kube.stop()


class FakeGpuSidecar:
    """The real NVML exporter over a one-GPU fake; ``fill(0.97)`` uses 97 % of its memory.

    The engines scrape an :class:`Exposition` holding the exporter's latest ``/metrics``
    answer (fetched over HTTP every ``RENDER_S``, without a scrape timeout header: the
    exporter's default deadline), so a collection never holds a scrape up; the exporter's own
    HTTP path and deadlines are tested in tests/exporter/.
    """

    def __init__(self) -> None:
        from nvml_exporter.fake import FakeGpu, FakeNvml
        from nvml_exporter.nvml import CLOCK_EVENT_REASONS
        from nvml_exporter.server import Exporter

        self.gpu = FakeGpu(
            index=0,
            uuid="GPU-e2e00000-0000-4000-8000-000000000000",
            pci_bus_id="00000000:18:00.0",
            current_reasons=CLOCK_EVENT_REASONS[0][0],  # clocks held by the GPU-idle reason
        )
        self.gpu.memory_used = int(self.gpu.memory_total * 0.4)
        self.nvml = FakeNvml([self.gpu])
        self.exporter = Exporter(self.nvml, host="127.0.0.1", port=0)
        self.session = requests.Session()
        self.exposition = Exposition(self._fetch)
        self._stopped = False

    def _fetch(self) -> tuple[bytes, str]:
        """The exporter's answer to a scrape asking for the text format."""
        response = self.session.get(
            f"http://127.0.0.1:{self.exporter.port}/metrics",
            headers={"Accept": TEXT_FORMAT},
            timeout=READY_S,
        )
        response.raise_for_status()
        return response.content, response.headers["Content-Type"]

    def bound_port(self) -> int:
        """The port the engines scrape (for a proxy, which sees methods)."""
        return self.exposition.port

    def fill(self, ratio: float) -> None:
        """Set used GPU memory to ``ratio`` (0–1) of the total; the next scrape sees it."""
        self.gpu.memory_used = int(self.gpu.memory_total * ratio)
        self.exposition.refresh()

    def emit_xid(self, xid: int) -> None:
        """Deliver an Xid error event for the GPU (the exporter counts it)."""
        self.nvml.emit_xid(0, xid)

    def start(self) -> None:
        """Start the exporter, wait until NVML is up and the Xid watcher has the GPU (so an
        Xid emitted from now on is counted), then serve its answers.

        Raises:
            RuntimeError: not ready within :data:`READY_S`.
        """
        self.exporter.start()
        deadline = time.monotonic() + READY_S
        while not (self.exporter.ready and self.nvml.xid_registered(0)):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the NVML exporter was not ready within {READY_S:.0f}s")
            time.sleep(RENDER_S)
        self.exposition.start()

    def stop(self) -> None:
        """Stop serving and the exporter (the "exporter killed" scenario); idempotent."""
        if not self._stopped:
            self._stopped = True
            self.exposition.stop()
            self.exporter.stop()
            self.session.close()


class FakeHost(BaseManager):
    """A process serving one service's fakes: ``host.FakeModelServer(...)`` and
    ``host.FakeGpuSidecar()`` build them there and return proxies whose method calls
    (``start``, ``set_traffic``, ``fill``, ``kill``, …) run there. Their log records go to
    ``log_file``, not to the suite's output.
    """

    def __init__(self, log_file: Path) -> None:
        super().__init__(ctx=get_context("spawn"))
        self.log_file = log_file

    def start(self) -> None:  # type: ignore[override]
        """Start the process (a fresh interpreter; seconds under load)."""
        super().start(initializer=_log_to, initargs=(str(self.log_file),))


def _log_to(path: str) -> None:
    logging.basicConfig(
        filename=path, level=logging.INFO, format="%(asctime)s %(name)s %(message)s"
    )


FakeHost.register("FakeModelServer", FakeModelServer)
FakeHost.register("FakeGpuSidecar", FakeGpuSidecar)
