"""Fake scrape targets for the end-to-end suite, all served on 127.0.0.1 with free ports.

* :class:`FakeModelServer`: an OpenAI-style model server's metrics (prometheus-client
  families): the latency histogram ``http_request_duration_seconds`` with the spec's buckets
  and a ``status`` label, the request counter ``http_requests_total`` by ``status`` (where
  prometheus-fastapi-instrumentator puts the outcome), the queue gauge, and token counters. Traffic is synthetic: every scrape advances the counters by ``rate × elapsed``
  requests, split over the buckets by the current latency profile and over ``200``/``500`` by
  the current error ratio, so a test can make counters jump by thousands in one second.
* On a second port of the same object, the cAdvisor / kube-state-metrics series of the
  service's pod (``container_memory_working_set_bytes``, ``kube_pod_container_resource_limits``,
  …) with their own ``namespace``/``pod``/``container`` labels (scraped with ``honor_labels``),
  and the owner chain pod → ReplicaSet → Deployment and the Deployment's replica counts.
* :class:`FakeGpuSidecar`: the real ``nvml_exporter.server.Exporter`` over a one-GPU
  ``FakeNvml`` whose memory use the test sets.
* :class:`FakeHost`: a process of its own serving one service's fakes, driven through proxies.
  Served from the test process, the fakes shared its interpreter lock with 12 scenario threads
  and their polls: at the suite's start that lock was busy all the time, a GPU exporter's
  collection thread waited past the 1 s scrape timeout, and a healthy service was paged for
  ``GPUExporterDown``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
from multiprocessing import get_context
from multiprocessing.managers import BaseManager
from pathlib import Path
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import start_http_server
from prometheus_client.registry import CollectorRegistry
from prometheus_client.utils import floatToGoString

GIB = 1024**3

HEALTHY_LATENCY_S = 0.05
"""Latency in seconds of every request of a healthy fake server."""


class _Collector:
    """Adapter: a registry collector calling ``collect``."""

    def __init__(self, collect: Any) -> None:
        self.collect = collect


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
        rate: float = 100.0,
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
        self._servers: list[Any] = []
        self.port = 0
        self.kube_port = 0

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
        for collect in (self.collect_model, self.collect_kube):
            registry = CollectorRegistry(auto_describe=False)
            registry.register(_Collector(collect))  # type: ignore[arg-type]
            server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
            self._servers.append((server, thread))
        self.port = self._servers[0][0].server_port
        self.kube_port = self._servers[1][0].server_port

    def ports(self) -> tuple[int, int]:
        """``(model port, Kubernetes port)`` once started (for a proxy, which sees methods)."""
        return self.port, self.kube_port

    def kill(self) -> None:
        """Stop serving the model metrics (the Kubernetes series stay); idempotent."""
        if self._servers and self._servers[0] is not None:
            server, thread = self._servers[0]
            server.shutdown()
            server.server_close()
            thread.join(5)
            self._servers[0] = None

    def stop(self) -> None:
        """Stop both HTTP servers; idempotent."""
        self.kill()
        for entry in self._servers[1:]:
            if entry is not None:
                server, thread = entry
                server.shutdown()
                server.server_close()
                thread.join(5)
        self._servers = []


class FakeGpuSidecar:
    """The real NVML exporter over a one-GPU fake; ``fill(0.97)`` uses 97 % of its memory."""

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
        self.fill(0.4)
        self.nvml = FakeNvml([self.gpu])
        self.exporter = Exporter(self.nvml, host="127.0.0.1", port=0)
        self._stopped = False

    def bound_port(self) -> int:
        """The exporter's bound port (for a proxy, which sees methods)."""
        return self.exporter.port

    def fill(self, ratio: float) -> None:
        """Set used GPU memory to ``ratio`` (0–1) of the total."""
        self.gpu.memory_used = int(self.gpu.memory_total * ratio)

    def emit_xid(self, xid: int) -> None:
        """Deliver an Xid error event for the GPU (the exporter counts it)."""
        self.nvml.emit_xid(0, xid)

    def start(self) -> None:
        """Start the exporter (HTTP now, NVML init in the background)."""
        self.exporter.start()

    def stop(self) -> None:
        """Stop the exporter (the "exporter killed" scenario); idempotent."""
        if not self._stopped:
            self._stopped = True
            self.exporter.stop()


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
