"""Package fixture of the end-to-end suite: a real Prometheus 3 sending its alerts to a real
Alertmanager (receivers: a local webhook recorder), and a real VictoriaMetrics with vmalert,
both scraping the same fakes (one service per scenario, each served by a process of its own)
and loading the same rendered rules once every target has answered; the Alertmanager
scenarios' services are watched on Prometheus alone. The scenarios start together, each in a
thread of its own; each test waits for its scenario's outcome on one engine. Everything is
stopped once the package's last test is done, and the seconds each engine took per event are
printed after the run. More: docs/scale-out.md, "The end-to-end suite".
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

import pytest

from generator import core, naming
from generator.builders.alertmanager import CONFIG_FILE
from generator.receivers import ReceiversConfig, parse_receivers
from tests.alertmanager_server import AlertmanagerServer, WebhookRecorder, find_alertmanager
from tests.e2e.e2e_clock import GROUP_INTERVAL_S, GROUP_WAIT_S
from tests.e2e.e2e_env import SERVICES, Env, Service, make_service, scrape_jobs
from tests.e2e.e2e_fakes import FakeHost
from tests.e2e.e2e_prometheus import PrometheusServer, find_prometheus, seconds
from tests.e2e.e2e_timings import TIMINGS, WORKER_OUTPUT_KEY, print_timings, timing_lines
from tests.e2e.e2e_victoriametrics import VictoriaMetricsStack, find_victoriametrics

RETENTION = "30d"
"""The suite's Prometheus retention: the specs' longest SLO window."""
FAST = {
    "groupWait": seconds(GROUP_WAIT_S),
    "groupInterval": seconds(GROUP_INTERVAL_S),
    "repeatInterval": "1h",
}
"""Every service of the suite belongs to team e2e; its groups are notified at the suite's
clock, and again only when they change (a repeat interval of an hour)."""


def receivers(webhook: WebhookRecorder) -> ReceiversConfig:
    """The suite's receivers: team e2e pages to ``/page``, tickets to ``/ticket``."""
    return parse_receivers(
        {
            "apiVersion": "obsgen/v1alpha1",
            "kind": "AlertReceivers",
            "timing": {"page": FAST, "ticket": FAST},
            "default": [{"webhook": {"url": webhook.url("default")}}],
            "teams": [
                {
                    "name": "e2e",
                    "page": [{"webhook": {"url": webhook.url("page")}}],
                    "ticket": [{"webhook": {"url": webhook.url("ticket")}}],
                }
            ],
        },
        "tests/e2e/conftest.py",
    )


@pytest.fixture(scope="package")
def e2e() -> Iterator[Env]:
    """Start everything, start the scenarios, yield the :class:`Env`; tear all down after."""
    binary = find_prometheus()
    if binary is None:
        pytest.fail("prometheus not found on PATH; run `make tools` (make test does)")
    am_binary = find_alertmanager()
    if am_binary is None:
        pytest.fail("alertmanager not found on PATH; run `make tools` (make test does)")
    from tests.e2e.e2e_alerting import ALERTING_SCENARIOS

    vm_binaries = find_victoriametrics()
    if vm_binaries is None:
        pytest.fail("victoria-metrics or vmalert not found on PATH; run `make tools`")
    from tests.e2e.e2e_scenarios import SCENARIOS

    scenarios = {**SCENARIOS, **ALERTING_SCENARIOS}

    with contextlib.ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="obsgen-e2e-")))
        hosts = {s: FakeHost(workdir / f"e2e-{s}.fakes.log") for s in SERVICES}
        stack.callback(_shut_down, hosts.values())
        with ThreadPoolExecutor(max_workers=len(hosts)) as starting:
            list(starting.map(FakeHost.start, hosts.values()))
        # Ending a host's process ends its fakes: no stop() of each, which waits out every
        # HTTP server's poll interval in turn.
        services = {s: make_service(s, path, hosts[s]) for s, path in SERVICES.items()}
        with ThreadPoolExecutor(max_workers=len(services)) as starting:
            list(starting.map(Service.start, services.values()))
        webhook = WebhookRecorder()
        stack.callback(webhook.stop)
        webhook.start()
        outputs = core.build([s.plan for s in services.values()], receivers=receivers(webhook))
        alertmanager = AlertmanagerServer(am_binary, workdir)
        stack.callback(alertmanager.stop)
        alertmanager.start(outputs[CONFIG_FILE])
        rule_files = {}
        for scenario, service in services.items():
            path = workdir / f"{service.name}.rules.yaml"
            path.write_text(outputs[naming.rules_file(service.name)], encoding="utf-8")
            rule_files[scenario] = path
        prometheus = PrometheusServer(binary, workdir)
        stack.callback(prometheus.stop)
        jobs = {s: scrape_jobs(service) for s, service in services.items()}
        prometheus.start(
            [j for js in jobs.values() for j in js],
            [],
            alertmanager.url.removeprefix("http://"),
            # keeps the specs' 30-day SLO windows, as `obsgen verify` checks
            [f"--storage.tsdb.retention.time={RETENTION}"],
        )
        victoriametrics = VictoriaMetricsStack(vm_binaries, workdir)
        stack.callback(victoriametrics.stop)
        both = [s for s in services if s not in ALERTING_SCENARIOS]
        victoriametrics.start_server([j for s in both for j in jobs[s]])
        # The rules start once every target has answered on the engine they read, so no
        # alert sees the seconds before the first scrapes (absent(), input guards).
        prometheus.wait_targets_up()
        prometheus.load_rules(list(rule_files.values()))
        victoriametrics.wait_targets_up()
        victoriametrics.start_vmalert([rule_files[s] for s in both])
        env = Env(
            prometheus,
            alertmanager,
            webhook,
            services,
            outputs,
            workdir,
            victoriametrics=victoriametrics,
            reference_only=frozenset(services[s].name for s in ALERTING_SCENARIOS),
        )
        stack.callback(TIMINGS.update, env.timings)
        pool = ThreadPoolExecutor(max_workers=len(scenarios), thread_name_prefix="scenario")
        stack.callback(pool.shutdown, wait=True, cancel_futures=True)
        stack.callback(setattr, env, "stopping", True)  # runs first: ends pending waits
        for scenario, run in scenarios.items():
            env.results[scenario] = pool.submit(_run, run, env, services[scenario])
        # VictoriaMetrics only serves the scenarios: once they are over, stop it, so that its
        # scrapes of the fakes do not slow the package's remaining tests.
        threading.Thread(
            target=_stop_when_done, args=(env, victoriametrics), daemon=True, name="vm-stop"
        ).start()
        yield env


def _shut_down(hosts: Iterable[FakeHost]) -> None:
    started = [h for h in hosts if hasattr(h, "shutdown")]  # set by a start that succeeded
    with ThreadPoolExecutor(max_workers=max(1, len(started))) as stopping:
        list(stopping.map(lambda host: host.shutdown(), started))


def _stop_when_done(env: Env, victoriametrics: VictoriaMetricsStack) -> None:
    wait(env.results.values())
    victoriametrics.stop()


def _run(scenario: Callable[[Env, Service], None], env: Env, service: Service) -> None:
    from tests.e2e.e2e_scenarios import EngineFailed

    with contextlib.suppress(EngineFailed):  # each engine's failure is in env.failures
        scenario(env, service)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker, hand the table to the controller (tests/conftest.py)."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None and TIMINGS:
        output[WORKER_OUTPUT_KEY] = timing_lines()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print how many seconds each engine took from a fault to each awaited alert state."""
    if TIMINGS:
        print_timings(terminalreporter, timing_lines())
