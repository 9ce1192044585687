"""Package fixture of the end-to-end suite: a real Prometheus sending its alerts to a real
Alertmanager whose receivers are a local webhook recorder, and a real VictoriaMetrics with
vmalert, both engines scraping the same fake targets and loading the same rules, but for the
Alertmanager scenarios' services, which only Prometheus watches (its alerts are the ones that
reach the Alertmanager; watched on both engines, they only loaded the machine).

One service per scenario (``e2e-<scenario>``, rendered from ``specs/model.yaml``; the burn-rate
scenario from ``specs/burn.yaml``), each with its own fake model server, its own Kubernetes
series and (when the spec has a GPU sidecar) its own NVML exporter on a one-GPU fake, all
served by a process of the service's own (:class:`~tests.e2e.e2e_fakes.FakeHost`). All rules
are rendered in memory through :func:`generator.render.build_outputs` and loaded by one
Prometheus and by one vmalert (whose notifications go to a sink). The Alertmanager runs
``alertmanager/alertmanager.yaml`` rendered for the same specs, with :data:`RECEIVERS` (the
team's page and ticket receivers are webhooks of the recorder, timings of a second). The
scenarios start together as soon as both engines are ready, each in its own thread (they touch
different services and alerts); a scenario drives its fakes once and watches its engines, and
each test waits for its scenario's outcome on one engine. Processes are stopped and the
temporary folder removed whatever happens, once the package's last test is done: left running,
Prometheus and the fakes took most of a core from the rest of the session (the promtool proof
of the committed tests ran in 127 s instead of about 60 s). The seconds each engine took per
event are printed after the run (``e2e engine timings``).
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

import pytest

from generator import naming
from generator.builders.alertmanager import CONFIG_FILE
from generator.receivers import ReceiversConfig, parse_receivers
from generator.render import build_outputs
from tests.alertmanager_server import AlertmanagerServer, WebhookRecorder, find_alertmanager
from tests.e2e.e2e_env import SERVICES, Env, Service, make_service, scrape_jobs
from tests.e2e.e2e_fakes import FakeHost
from tests.e2e.e2e_prometheus import PrometheusServer, find_prometheus
from tests.e2e.e2e_timings import TIMINGS, WORKER_OUTPUT_KEY, print_timings, timing_lines
from tests.e2e.e2e_victoriametrics import VictoriaMetricsStack, find_victoriametrics

# Every service of the suite belongs to team e2e. A second of grouping keeps the suite fast;
# a repeat interval of an hour means a group is notified again only when it changes.
RETENTION = "30d"
"""The suite's Prometheus retention: the specs' longest SLO window."""
FAST = {"groupWait": "1s", "groupInterval": "1s", "repeatInterval": "1h"}


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
        pytest.fail(
            "prometheus binary not found (/usr/bin/prometheus or PATH); "
            "run `make prometheus` (make test does)"
        )
    am_binary = find_alertmanager()
    if am_binary is None:
        pytest.fail("Alertmanager not found (prometheus-alertmanager); run `make alertmanager`")
    from tests.e2e.e2e_alerting import ALERTING_SCENARIOS

    vm_binaries = find_victoriametrics()
    if vm_binaries is None:
        pytest.fail("victoria-metrics or vmalert not found; run `make victoriametrics`")
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
        for service in services.values():
            service.start()
        webhook = WebhookRecorder()
        stack.callback(webhook.stop)
        webhook.start()
        outputs = build_outputs([s.plan for s in services.values()], receivers=receivers(webhook))
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
            list(rule_files.values()),
            alertmanager.url.removeprefix("http://"),
            # keeps the specs' 30-day SLO windows, as `obsgen verify` checks
            [f"--storage.tsdb.retention.time={RETENTION}"],
        )
        victoriametrics = VictoriaMetricsStack(vm_binaries, workdir)
        stack.callback(victoriametrics.stop)
        both = [s for s in services if s not in ALERTING_SCENARIOS]
        victoriametrics.start([j for s in both for j in jobs[s]], [rule_files[s] for s in both])
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
