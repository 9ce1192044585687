"""Session fixture of the end-to-end suite: a real Prometheus scraping fake targets.

One service per scenario (``e2e-<scenario>``, rendered from ``specs/model.yaml``; the burn-rate
scenario from ``specs/burn.yaml``), each with its own fake model server, its own Kubernetes
series and (when the spec has a GPU sidecar) its own NVML exporter on a one-GPU fake. All
rules are rendered in memory through :func:`generator.render.build_outputs` and loaded by one
Prometheus. The scenarios start together as soon as Prometheus is ready, each in its own
thread (they touch different services and alerts), and each test waits for its scenario's
outcome. Processes are stopped and the temporary folder removed whatever happens.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from generator import naming
from generator.render import build_outputs
from tests.e2e.e2e_env import SERVICES, Env, Service, make_service, scrape_jobs
from tests.e2e.e2e_prometheus import PrometheusServer, find_prometheus


@pytest.fixture(scope="session")
def e2e() -> Iterator[Env]:
    """Start everything, start the scenarios, yield the :class:`Env`; tear all down after."""
    binary = find_prometheus()
    if binary is None:
        message = "prometheus binary not found (/usr/bin/prometheus or PATH); run `make prometheus`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from tests.e2e.e2e_scenarios import SCENARIOS

    with contextlib.ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="obsgen-e2e-")))
        services = {s: make_service(s, path) for s, path in SERVICES.items()}
        for service in services.values():
            stack.callback(service.model.stop)
            service.model.start()
            if service.gpu is not None:
                stack.callback(service.gpu.stop)
                service.gpu.start()
        outputs = build_outputs([s.plan for s in services.values()])
        rule_files = []
        for service in services.values():
            path = workdir / f"{service.name}.rules.yaml"
            path.write_text(outputs[naming.rules_file(service.name)], encoding="utf-8")
            rule_files.append(path)
        prometheus = PrometheusServer(binary, workdir)
        stack.callback(prometheus.stop)
        prometheus.start([j for s in services.values() for j in scrape_jobs(s)], rule_files)
        env = Env(prometheus, services, outputs, workdir)
        pool = ThreadPoolExecutor(max_workers=len(SCENARIOS), thread_name_prefix="scenario")
        stack.callback(pool.shutdown, wait=True, cancel_futures=True)
        stack.callback(setattr, env, "stopping", True)  # runs first: ends pending waits
        for scenario, run in SCENARIOS.items():
            env.results[scenario] = pool.submit(_run, run, env, services[scenario])
        yield env


def _run(scenario: Callable[[Env, Service], None], env: Env, service: Service) -> None:
    scenario(env, service)
