"""The scenarios: each drives one service's fakes and waits on Prometheus's HTTP API.

A scenario raises ``AssertionError`` (with the last state seen) when an expected state is not
reached within its bound. Every scenario first waits for warm-up (its recorded request rate
exists) and checks that the alerts it is about to cause are not active yet, so an alert
that fires for another reason cannot pass the test.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.render import build_outputs
from tests.e2e.e2e_prometheus import wait_for

if TYPE_CHECKING:
    from tests.e2e.e2e_env import Env, Service

WARM_UP_S = 40
"""Bound in seconds for a service's first recorded rate (Prometheus start + 2 scrapes + eval)."""
FIRE_S = 40
"""Bound in seconds for an alert to fire or resolve after the fake changes (for: 2s)."""
QUIET_S = 6
"""Seconds a healthy service is watched for active alerts (3 × the 2s ``for``)."""


def _stopping(env: Env) -> Callable[[], bool]:
    return lambda: env.stopping


def warm_up(env: Env, service: Service, *extra: str) -> None:
    """Wait until the service's request rate (and each ``extra`` query) has a result."""
    queries = [
        f'{naming.record(service.plan.group_by, naming.REQUESTS, "rate5m")}{{service="{service.name}"}}',
        *extra,
    ]
    for expr in queries:
        wait_for(
            f"{expr} to have data",
            lambda e=expr: env.prometheus.query(e),  # type: ignore[misc]
            bool,
            WARM_UP_S,
            _stopping(env),
        )


def assert_quiet(env: Env, service: Service, alerts: Iterable[str]) -> None:
    """The named alerts of ``service`` are neither pending nor firing now."""
    active = env.prometheus.alert_states(service.name)
    early = {name: active[name] for name in alerts if name in active}
    assert not early, f"{service.name}: {early} active before the fault was injected"


def wait_firing(env: Env, service: Service, alerts: Iterable[str]) -> None:
    """Wait until every named alert of ``service`` is firing."""
    names = set(alerts)
    wait_for(
        f"{sorted(names)} firing for {service.name}",
        lambda: env.prometheus.alert_states(service.name),
        lambda states: all("firing" in states.get(n, ()) for n in names),
        FIRE_S,
        _stopping(env),
    )


def wait_resolved(env: Env, service: Service, alerts: Iterable[str]) -> None:
    """Wait until none of the named alerts of ``service`` is active any more."""
    names = set(alerts)
    wait_for(
        f"{sorted(names)} resolved for {service.name}",
        lambda: env.prometheus.alert_states(service.name),
        lambda states: not names & states.keys(),
        FIRE_S,
        _stopping(env),
    )


def healthy(env: Env, service: Service) -> None:
    """Healthy traffic, GPU and memory: after warm-up no alert of the service is active —
    input guards (every series an alert reads exists, pods attributed through the owner
    series), capacity and lost-GPU alerts included — and no notification of it reached a
    receiver."""
    assert service.gpu is not None
    warm_up(
        env,
        service,
        f'gpu_memory_free_bytes{{pod="{service.pod}"}}',
        f'service_pod_container:model_memory_working_set_bytes:ratio_limit{{service="{service.name}"}}',
        f'service:slo_sli_error:ratio_rate5m{{service="{service.name}"}}',
        # Targets are scraped one after another: a guard may be pending for the first seconds.
        f'absent(ALERTS{{alertname="{naming.ALERT_SIGNAL_MISSING}",service="{service.name}"}})',
    )
    deadline = time.monotonic() + QUIET_S
    while time.monotonic() < deadline:
        active = env.prometheus.alerts(service.name)
        assert not active, f"alerts active on a healthy service: {active}"
        time.sleep(0.5)
    notified = [n.body for n in env.webhook.received(service.name)]
    assert not notified, f"a healthy service was notified: {notified}"


def latency(env: Env, service: Service) -> None:
    """Every request takes 25s: slow-request ratio and p99 alerts fire; a flood of fast
    requests (so the slow ones are < 1 % of the 5m window) resolves both."""
    alerts = (naming.ALERT_SLOW_REQUESTS, naming.ALERT_LATENCY_P99)
    warm_up(env, service)
    assert_quiet(env, service, alerts)
    service.model.set_traffic(latency_s=25)
    wait_firing(env, service, alerts)
    service.model.set_traffic(latency_s=0.05, rate=200_000)
    wait_resolved(env, service, alerts)


def errors(env: Env, service: Service) -> None:
    """Half the requests fail with 500: ModelErrorRatioHigh fires."""
    warm_up(env, service)
    assert_quiet(env, service, [naming.ALERT_ERROR_RATIO])
    service.model.set_traffic(error_ratio=0.5)
    wait_firing(env, service, [naming.ALERT_ERROR_RATIO])


def queue(env: Env, service: Service) -> None:
    """500 requests queued (max 100): ModelQueueDepthHigh fires."""
    warm_up(env, service)
    assert_quiet(env, service, [naming.ALERT_QUEUE_DEPTH])
    service.model.set_traffic(queue=500)
    wait_firing(env, service, [naming.ALERT_QUEUE_DEPTH])


def gpu_memory(env: Env, service: Service) -> None:
    """97 % of the GPU's memory used (minFree 0.05): GPUMemoryHeadroomLow fires."""
    assert service.gpu is not None
    warm_up(env, service, f'gpu_memory_free_bytes{{pod="{service.pod}"}}')
    assert_quiet(env, service, [naming.ALERT_GPU_MEMORY_HEADROOM])
    service.gpu.fill(0.97)
    wait_firing(env, service, [naming.ALERT_GPU_MEMORY_HEADROOM])


def exporter_down(env: Env, service: Service) -> None:
    """The NVML exporter stops answering: GPUExporterDown fires."""
    assert service.gpu is not None
    warm_up(env, service, f'gpu_exporter_nvml_up{{pod="{service.pod}"}} == 1')
    assert_quiet(env, service, [naming.ALERT_GPU_EXPORTER_DOWN])
    service.gpu.stop()
    wait_firing(env, service, [naming.ALERT_GPU_EXPORTER_DOWN])


def target_down(env: Env, service: Service) -> None:
    """The model server stops answering: ModelTargetDown fires."""
    warm_up(env, service)
    assert_quiet(env, service, [naming.ALERT_TARGET_DOWN])
    service.model.kill()
    wait_firing(env, service, [naming.ALERT_TARGET_DOWN])


def burn(env: Env, service: Service) -> None:
    """Every request fails on the seconds-scaled SLO: ErrorBudgetBurn fires for it."""
    warm_up(env, service)
    assert_quiet(env, service, [naming.ALERT_ERROR_BUDGET_BURN])
    service.model.set_traffic(error_ratio=1.0, rate=1000)
    wait_firing(env, service, [naming.ALERT_ERROR_BUDGET_BURN])


def dashboard_queries(dashboard: dict[str, Any]) -> list[str]:
    """Every PromQL query of a Grafana dashboard, ready to run: panel targets (rows and
    nested panels included) and ``label_values(…)`` variable queries; variables expanded to
    ``.*`` and ``$__rate_interval`` / ``$__interval`` to ``5s``.

    Raises:
        AssertionError: a query still holds ``$`` after expansion (an undefined variable).
    """
    variables = [v["name"] for v in dashboard.get("templating", {}).get("list", [])]
    found: list[str] = []

    def walk(panel: dict[str, Any]) -> None:
        for child in panel.get("panels", []):
            walk(child)
        found.extend(t["expr"] for t in panel.get("targets", []) if t.get("expr"))

    walk(dashboard)
    for var in dashboard.get("templating", {}).get("list", []):
        query = var.get("query")
        text = query.get("query") if isinstance(query, dict) else query
        if var.get("type") == "query" and isinstance(text, str):
            match = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", text.strip(), re.S)
            assert match, f"variable {var['name']}: unsupported query {text!r}"
            found.append(match.group(1))
    expanded = []
    for expr in found:
        for name in ("__rate_interval", "__interval"):
            expr = expr.replace(f"${{{name}}}", "5s").replace(f"${name}", "5s")
        for name in sorted(variables, key=len, reverse=True):
            expr = expr.replace(f"${{{name}}}", ".*").replace(f"${name}", ".*")
        assert "$" not in expr, f"unexpanded variable in {expr}"
        expanded.append(expr)
    return sorted(set(expanded))


def dashboard(env: Env, service: Service) -> None:
    """Every query of the service's dashboard and of the fleet overview (rendered for this
    service alone) returns data. One Xid is injected first: Xid panels only have series
    after one, and it puts a firing alert (GPUXidErrors) on the alert panels."""
    assert service.gpu is not None
    outputs = build_outputs([service.plan])
    boards = {p: json.loads(c) for p, c in outputs.items() if p.startswith("dashboards/")}
    assert naming.dashboard_file(service.name) in boards
    warm_up(env, service, f'gpu_exporter_nvml_up{{pod="{service.pod}"}} == 1')
    service.gpu.emit_xid(79)
    queries = {q: path for path, board in sorted(boards.items()) for q in dashboard_queries(board)}
    wait_for(
        f"every dashboard query of {service.name} to return data",
        lambda: [f"{path}: {q}" for q, path in queries.items() if not env.prometheus.query(q)],
        lambda empty: not empty,
        FIRE_S,
        _stopping(env),
    )


SCENARIOS: dict[str, Callable[[Env, Service], None]] = {
    "healthy": healthy,
    "latency": latency,
    "errors": errors,
    "queue": queue,
    "gpu-memory": gpu_memory,
    "exporter-down": exporter_down,
    "target-down": target_down,
    "burn": burn,
    "dashboard": dashboard,
}
