"""The scenarios: each drives one service's fakes and waits on Prometheus's HTTP API.

A scenario raises ``AssertionError`` (with the last state seen) when an expected state is not
reached within its bound. Every scenario first waits for warm-up (its recorded request rate
exists) and checks that the alerts it is about to cause are not active yet, so an alert
that fires for another reason cannot pass the test.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import promql_parser as P
import yaml

from generator import naming
from generator.builders.common import recorded
from generator.lint import promql
from generator.promql import Matcher
from generator.render import build_outputs
from tests.e2e.e2e_env import ENGINES
from tests.e2e.e2e_prometheus import POLL_S, SCRAPE_INTERVAL_S
from tests.e2e.e2e_victoriametrics import EVALUATION_INTERVAL_S, LATENCY_OFFSET_S

if TYPE_CHECKING:
    from tests.e2e.e2e_env import Engine, Env, Service

T = TypeVar("T")

WARM_UP_S = 40
"""Bound in seconds for a service's first recorded rate (Prometheus start + 2 scrapes + eval)."""
FIRE_S = 40
"""Bound in seconds for an alert to fire or resolve on Prometheus after the fake changes (for:
2s); other engines get their allowed lateness on top (:func:`lateness`)."""
QUIET_S = 6
"""Seconds a healthy service is watched for active alerts (3 × the 2s ``for``)."""
EARLY_S = 2.0
"""How much earlier than Prometheus another engine may reach an alert state, in seconds (two
evaluation intervals: the engines evaluate on their own 1 s ticks, and the suite polls every
0.5 s)."""
LATE_S = LATENCY_OFFSET_S + EVALUATION_INTERVAL_S + SCRAPE_INTERVAL_S + POLL_S
"""How much later than Prometheus another engine may reach an alert state when the alert reads
scraped series directly, in seconds (8.5 s): vmalert's queries read VictoriaMetrics' data of
``-search.latencyOffset`` (6 s) ago, which also hides the up to 3 s until an ingested row is
searchable; vmalert evaluates on its own 1 s tick and VictoriaMetrics scrapes the fakes at its
own moments (1 s each); the suite polls both engines every 0.5 s."""
LATE_PER_LEVEL_S = LATENCY_OFFSET_S + 2 * EVALUATION_INTERVAL_S
"""Further seconds allowed per level of recording rules between the scraped series and the
alert (:func:`recording_depth`), 8 s. Prometheus appends a recorded sample to its own TSDB at
once, so a rule later in the group reads it in the same evaluation. vmalert remote-writes it
with its evaluation's timestamp, and the next level reads it at the first evaluation at least
``-search.latencyOffset`` (6 s) later — flush and ingestion take less, that is what the offset
is chosen for (``e2e_victoriametrics``) — plus up to one evaluation (1 s) because the reading
group ticks at its own moment within the second, and one more (1 s) for an evaluation that
runs late on a loaded machine. Measured over 13 runs at load averages 2–14: 12 s median and
15.7 s at most for one level (16.5 s allowed), 18 s and 19.2 s for two (24.5 s allowed).
docs/scale-out.md gives the lags and what the production defaults (30 s offset, 5 s flush)
make of them."""


def lateness(levels: int) -> float:
    """Seconds another engine may reach an alert state later than Prometheus when the alert
    reads ``levels`` levels of recording rules: :data:`LATE_S` + :data:`LATE_PER_LEVEL_S` per
    level."""
    return LATE_S + LATE_PER_LEVEL_S * levels


DASHBOARD_RECORD_LEVELS = 4
"""Recording levels under the deepest record a dashboard reads: increments, window ratio,
SLI over the SLO window, error budget remaining."""


def recording_depth(rule_file: str, alerts: Iterable[str]) -> int:
    """Levels of recording rules under the deepest rule of ``alerts`` in ``rule_file`` (the
    rendered YAML): 0 when an alert reads scraped series only, 1 when it reads a record of
    scraped series, and so on."""
    rules = [r for g in yaml.safe_load(rule_file)["groups"] for r in g["rules"]]
    records: dict[str, list[str]] = {}
    for rule in rules:
        if "record" in rule:
            records.setdefault(rule["record"], []).append(rule["expr"])

    @functools.cache
    def depth(expr: str) -> int:
        read = {
            node.name
            for node, _ in promql.walk(promql.parse(expr))
            if isinstance(node, P.VectorSelector) and node.name in records
        }
        return max((1 + max(depth(e) for e in records[name]) for name in read), default=0)

    names = set(alerts)
    return max(depth(r["expr"]) for r in rules if r.get("alert") in names)


class EngineFailed(Exception):
    """Every engine of a scenario failed; the scenario stops (each failure is recorded)."""


def _fail(env: Env, service: Service, engine: Engine, message: str) -> None:
    """Record that ``engine`` failed ``service``'s scenario (the first failure is kept)."""
    env.failures.setdefault(service.name, {}).setdefault(engine.name, message)


def live_engines(env: Env, service: Service) -> list[Engine]:
    """The engines that have not failed ``service``'s scenario yet.

    Raises:
        EngineFailed: none is left.
    """
    failed = env.failures.get(service.name, {})
    live = [e for e in env.engines_of(service.name) if e.name not in failed]
    if not live:
        raise EngineFailed(f"{service.name}: every engine failed: {failed}")
    return live


def wait_engines(
    env: Env,
    service: Service,
    what: str,
    probe: Callable[[Engine], T],
    done: Callable[[T], bool],
    timeout_s: float,
    late_s: float = 0.0,
) -> dict[str, float]:
    """Poll ``probe`` on every live engine every :data:`POLL_S` s until ``done`` holds for
    each; return the seconds each engine took. An engine still not done after ``timeout_s``
    seconds (engines other than Prometheus: ``timeout_s`` + ``late_s``), or when the suite
    stops, is recorded as failed with the last result seen.

    Raises:
        EngineFailed: every engine has failed.
    """
    started = time.monotonic()
    pending = {e.name: e for e in live_engines(env, service)}
    took: dict[str, float] = {}
    last: dict[str, Any] = {}
    while pending:
        for name, engine in list(pending.items()):
            last[name] = probe(engine)
            if done(last[name]):
                took[name] = time.monotonic() - started
                del pending[name]
        if not pending:
            break
        waited = time.monotonic() - started
        for name in list(pending):
            allowed = timeout_s + (late_s if name != ENGINES[0] else 0.0)
            if waited > allowed or env.stopping:
                _fail(
                    env,
                    service,
                    pending.pop(name),
                    f"timed out after {allowed:.0f}s waiting for {what}; last: {last[name]}",
                )
        if pending:
            time.sleep(POLL_S)
    live_engines(env, service)
    return took


def _levels(env: Env, service: Service, alerts: Iterable[str]) -> int:
    """Recording levels under the deepest of ``alerts`` in ``service``'s rendered rules."""
    return recording_depth(env.outputs[naming.rules_file(service.name)], alerts)


def _compare(
    env: Env, service: Service, alerts: set[str], event: str, took: dict[str, float]
) -> None:
    """Keep the engines' times for ``event`` and fail an engine that reached it more than
    :data:`EARLY_S` earlier or more than :func:`lateness` later than the reference engine."""
    env.timings[(service.name, event)] = took
    reference = took.get(ENGINES[0])
    if reference is None:
        return
    levels = _levels(env, service, alerts)
    late = lateness(levels)
    for engine in live_engines(env, service):
        seconds = took.get(engine.name)
        if seconds is not None and not -EARLY_S <= seconds - reference <= late:
            _fail(
                env,
                service,
                engine,
                f"{event}: {seconds:.1f}s after the fault, {ENGINES[0]} {reference:.1f}s; "
                f"allowed {EARLY_S:.0f}s earlier to {late:.1f}s later ({levels} recording "
                "levels)",
            )


def warm_up(env: Env, service: Service, *extra: str) -> None:
    """Wait until the service's request rate (and each ``extra`` query) has a result; then
    set ``env.warmed`` for it if Prometheus (the reference engine) got there."""
    queries = [
        f'{naming.record(service.plan.group_by, naming.REQUESTS, "rate5m")}{{service="{service.name}"}}',
        *extra,
    ]
    for expr in queries:
        wait_engines(
            env,
            service,
            f"{expr} to have data",
            lambda engine, e=expr: engine.query(e),  # type: ignore[misc]
            bool,
            WARM_UP_S,
        )
    if ENGINES[0] not in env.failures.get(service.name, {}):
        env.warmed[service.name].set()


def assert_quiet(env: Env, service: Service, alerts: Iterable[str]) -> None:
    """The named alerts of ``service`` are neither pending nor firing now (an engine where
    one is active fails)."""
    names = set(alerts)
    for engine in live_engines(env, service):
        active = engine.alert_states(service.name)
        early = {name: active[name] for name in sorted(names & active.keys())}
        if early:
            _fail(env, service, engine, f"{early} active before the fault was injected")
    live_engines(env, service)


def wait_firing(env: Env, service: Service, alerts: Iterable[str]) -> None:
    """Wait until every named alert of ``service`` is firing on every engine; compare the
    engines' times."""
    names = set(alerts)
    took = wait_engines(
        env,
        service,
        f"{sorted(names)} firing for {service.name}",
        lambda engine: engine.alert_states(service.name),
        lambda states: all("firing" in states.get(n, ()) for n in names),
        FIRE_S,
        lateness(_levels(env, service, names)),
    )
    _compare(env, service, names, f"{'+'.join(sorted(names))} firing", took)


def wait_resolved(env: Env, service: Service, alerts: Iterable[str]) -> None:
    """Wait until none of the named alerts of ``service`` is active any more on every engine;
    compare the engines' times."""
    names = set(alerts)
    took = wait_engines(
        env,
        service,
        f"{sorted(names)} resolved for {service.name}",
        lambda engine: engine.alert_states(service.name),
        lambda states: not names & states.keys(),
        FIRE_S,
        lateness(_levels(env, service, names)),
    )
    _compare(env, service, names, f"{'+'.join(sorted(names))} resolved", took)


def healthy(env: Env, service: Service) -> None:
    """Healthy traffic, GPU and memory: after warm-up (and the first seconds' pending alerts
    cleared) no alert of the service is active —
    input guards (every series an alert reads exists, pods attributed through the owner
    series), capacity and lost-GPU alerts included —, no burn-rate alert was active at any
    evaluation since the start (:func:`burn_history`), and no notification of it reached a
    receiver."""
    assert service.gpu is not None
    warm_up(
        env,
        service,
        f'gpu_memory_free_bytes{{pod="{service.pod}"}}',
        f'service_pod_container:model_memory_working_set_bytes:ratio_limit{{service="{service.name}"}}',
        f'service:slo_sli_error:ratio_rate5m{{service="{service.name}"}}',
    )
    # Targets are first scraped one after another, so an input guard or an absent() clause
    # may be pending for the first seconds; on vmalert it clears one evaluation after the
    # warm-up's data is visible. Each engine must settle (within the warm-up bound) before
    # the watch; a burn-rate alert raised in those seconds still fails (burn_history).
    wait_engines(
        env,
        service,
        "every alert raised while the targets were first scraped to clear",
        lambda engine: engine.alerts(service.name),
        lambda active: not active,
        WARM_UP_S,
        lateness(0),
    )
    deadline = time.monotonic() + QUIET_S
    while time.monotonic() < deadline:
        for engine in live_engines(env, service):
            active = engine.alert_states(service.name)
            if active:
                _fail(env, service, engine, f"alerts active on a healthy service: {active}")
        time.sleep(0.5)
    for engine in live_engines(env, service):
        burned = engine.query(burn_history(service))
        if burned:
            _fail(env, service, engine, f"a healthy service burned its error budget: {burned}")
    # Alert names first: CI shows only the start of a long message.
    notified = [
        (n.body["receiver"], a["status"], a["labels"]["alertname"], a["startsAt"])
        for n in env.webhook.received(service.name)
        for a in n.body["alerts"]
    ]
    assert not notified, (
        f"a healthy service was notified (receiver, status, alert, since): {notified}"
    )


def burn_history(service: Service) -> str:
    """Query of every ``ErrorBudgetBurn`` alert of ``service`` that was pending or firing at
    any evaluation of the last 10 minutes (the whole suite, warm-up included), from the
    engine's own ``ALERTS`` series. The burn alerts have no ``for``: one evaluation that reads
    one ``events`` series without its twin (VictoriaMetrics making them searchable apart) while
    the windows hold few samples could fire them for a second, between two polls of the suite;
    the history keeps it."""
    alerts = recorded(
        service.plan, "ALERTS", Matcher("alertname", "=", naming.ALERT_ERROR_BUDGET_BURN)
    )
    return f"count_over_time({alerts}[10m])"


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
    took = wait_engines(
        env,
        service,
        f"every dashboard query of {service.name} to return data",
        lambda engine: [f"{path}: {q}" for q, path in queries.items() if not engine.query(q)],
        lambda empty: not empty,
        FIRE_S,
        # The SLO panels read records up to DASHBOARD_RECORD_LEVELS levels above the scraped
        # series; vmalert reads each level back only after its remote write (LATE_PER_LEVEL_S).
        lateness(DASHBOARD_RECORD_LEVELS),
    )
    env.timings[(service.name, "every dashboard query has data")] = took


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
