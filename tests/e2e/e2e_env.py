"""The end-to-end environment: services under test, their plans and fake targets.

Kept out of ``conftest.py`` so test modules import it by a unique name.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from generator.parts.pods import example_pods
from generator.plan import ServicePlan, resolve
from generator.spec import parse_spec
from tests.alertmanager_server import AlertmanagerServer, WebhookRecorder
from tests.e2e.e2e_clock import POLL_S, bound, react_s
from tests.e2e.e2e_fakes import FakeGpuSidecar, FakeHost, FakeModelServer
from tests.e2e.e2e_prometheus import PrometheusServer, ScrapeJob
from tests.e2e.e2e_victoriametrics import VictoriaMetricsStack

SPECS = Path(__file__).resolve().parent / "specs"
MODEL_SPEC = SPECS / "model.yaml"
BURN_SPEC = SPECS / "burn.yaml"
INCIDENT_SPEC = SPECS / "incident.yaml"
INHIBIT_SPEC = SPECS / "inhibit.yaml"


def spec_data(path: Path, name: str | None = None) -> dict[str, Any]:
    """The spec at ``path`` as data; with ``name``, renamed to service ``name`` (its job and
    deployment too), so one base spec gives one independent service per scenario."""
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    if name is not None:
        data["metadata"]["name"] = name
        data["spec"]["selector"]["job"] = name
        data["spec"]["deployment"]["name"] = name
    return data


def plan_of(data: dict[str, Any], source: str) -> ServicePlan:
    """Validate and resolve spec data (raises ObsgenError on a bad spec)."""
    return resolve(parse_spec(data, source), source)


@dataclass
class Service:
    """One service under test: its plan, and its fake targets (proxies of the fakes its
    :class:`FakeHost` serves) with their ports once started."""

    name: str
    plan: ServicePlan
    spec: dict[str, Any]
    model: FakeModelServer
    gpu: FakeGpuSidecar | None
    pod: str
    model_port: int = 0
    kube_port: int = 0
    gpu_port: int = 0

    def start(self) -> None:
        """Start serving the fakes and note their ports."""
        self.model.start()
        self.model_port, self.kube_port = self.model.ports()
        if self.gpu is not None:
            self.gpu.start()
            self.gpu_port = self.gpu.bound_port()


class Engine(Protocol):
    """What a scenario needs of a rule engine: its query API and its active alerts."""

    name: str

    def log(self) -> str: ...

    def query(self, expr: str) -> list[dict[str, Any]]: ...

    def alerts(self, service: str) -> list[dict[str, Any]]: ...

    def alert_states(self, service: str) -> dict[str, set[str]]: ...


ENGINES = ("prometheus", "victoriametrics")
"""Engine names; the first is the reference the others' timings are compared with."""
SCENARIO_S = 20 * bound(react_s())
"""Bound for a scenario to end: it is a sequence of fewer than 20 waits, each bounded."""


@dataclass
class Env:
    """What the tests see: the engines (Prometheus, and VictoriaMetrics + vmalert scraping the
    same targets and loading the same rules), the Alertmanager Prometheus sends to and the
    webhook receiving its notifications, the services, rendered outputs, scenario outcomes.

    A scenario drives each service once and watches every engine of it (the Alertmanager
    scenarios' services, ``reference_only``, Prometheus alone): ``failures`` holds, per
    service and engine, why that engine did not reach an expected state (the scenario goes on
    for the other engines); ``timings`` the seconds each engine took per awaited event.
    """

    prometheus: PrometheusServer
    alertmanager: AlertmanagerServer
    webhook: WebhookRecorder
    services: dict[str, Service]
    outputs: dict[str, str]
    workdir: Path
    results: dict[str, Future[None]] = field(default_factory=dict)
    stopping: bool = False
    victoriametrics: VictoriaMetricsStack | None = None
    failures: dict[str, dict[str, str]] = field(default_factory=dict)
    timings: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    reference_only: frozenset[str] = frozenset()
    warmed: dict[str, threading.Event] = field(init=False)

    def __post_init__(self) -> None:
        self.warmed = {s.name: threading.Event() for s in self.services.values()}

    @property
    def engines(self) -> list[Engine]:
        """Every running engine, the reference (Prometheus) first."""
        found: list[Engine] = [self.prometheus]
        if self.victoriametrics is not None:
            found.append(self.victoriametrics)
        return found

    def engines_of(self, service: str) -> list[Engine]:
        """The engines that watch ``service`` (its targets and rules): Prometheus alone for a
        service in ``reference_only``, else every running engine."""
        return self.engines[:1] if service in self.reference_only else self.engines

    def result(
        self, scenario: str, engine: str = "prometheus", timeout_s: float = SCENARIO_S
    ) -> None:
        """Wait for ``scenario``; re-raise its failure, or the failure it recorded for
        ``engine``, in the calling test."""
        self.results[scenario].result(timeout=timeout_s)
        failed = self.failures.get(self.services[scenario].name, {}).get(engine)
        if failed is not None:
            raise AssertionError(f"{engine}: {failed}")

    def warmed_up(self, scenario: str, timeout_s: float = SCENARIO_S) -> None:
        """Wait until ``scenario``'s service has warmed up on Prometheus (every series its
        warm-up waits for exists), whatever the scenario's verdict after that.

        Raises:
            AssertionError: the scenario ended, or ``timeout_s`` passed, before that; the
                scenario's own failure when it raised one.
        """
        warmed = self.warmed[self.services[scenario].name]
        outcome = self.results[scenario]
        deadline = time.monotonic() + timeout_s
        while not warmed.wait(POLL_S):
            if outcome.done() and not warmed.is_set():
                outcome.result()
                raise AssertionError(f"{scenario}: ended before its warm-up was done")
            if time.monotonic() > deadline:
                raise AssertionError(f"{scenario}: not warmed up within {timeout_s:.0f}s")


# scenario name -> spec file; the services of the suite.
SERVICES: dict[str, Path] = {
    "healthy": MODEL_SPEC,
    "latency": MODEL_SPEC,
    "errors": MODEL_SPEC,
    "queue": MODEL_SPEC,
    "gpu-memory": MODEL_SPEC,
    "exporter-down": MODEL_SPEC,
    "target-down": MODEL_SPEC,
    "burn": BURN_SPEC,
    "dashboard": MODEL_SPEC,
    "incident": INCIDENT_SPEC,
    "inhibit": INHIBIT_SPEC,
    "silence": MODEL_SPEC,
}


def make_service(scenario: str, spec_file: Path, host: FakeHost) -> Service:
    """The service of ``scenario``, its fakes built in ``host`` (started) and not started."""
    name = f"e2e-{scenario}"
    data = spec_data(spec_file, name)
    plan = plan_of(data, f"{spec_file.name} as {name}")
    latency = plan.histograms["requestDuration"]
    assert plan.queue_depth is not None
    # Named as Kubernetes names a Deployment's pods; attributed by owner series, not by name.
    pod, replicaset = example_pods(plan)[0]
    model = host.FakeModelServer(  # type: ignore[attr-defined]
        metric=latency.metric,
        buckets=[b * latency.seconds_per_unit for b in latency.buckets],
        queue_metric=plan.queue_depth.name,
        namespace=plan.namespace or "e2e",
        pod=pod,
        container=plan.container,
        memory_limit_bytes=plan.memory_limit_bytes or 2**30,
        deployment=plan.deployment_name,
        replicaset=replicaset,
    )
    gpu = host.FakeGpuSidecar() if plan.gpu_exporter else None  # type: ignore[attr-defined]
    return Service(name, plan, data, model, gpu, pod)


def scrape_jobs(service: Service) -> list[ScrapeJob]:
    namespace = service.plan.namespace or "e2e"
    jobs = [
        ScrapeJob(
            service.name,
            service.model_port,
            {"namespace": namespace, "pod": service.pod, "container": service.plan.container},
        ),
        # cAdvisor / kube-state-metrics carry their own namespace/pod/container labels.
        ScrapeJob(f"{service.name}-kube", service.kube_port, honor_labels=True),
    ]
    if service.gpu is not None:
        # The job label obsgen's GPU PodMonitor sets, which the GPU rules select.
        gpu_job = next(m.value for m in service.plan.gpu_matchers if m.label == "job")
        jobs.append(
            ScrapeJob(
                gpu_job,
                service.gpu_port,
                {"namespace": namespace, "pod": service.pod, "container": "nvml-exporter"},
            )
        )
    return jobs
