"""The scenarios: each drives one service's fakes and waits on its engines' HTTP APIs.

A scenario records an engine as failed (with the last state seen) when an expected state is not
reached within its bound, derived from the suite's clock (``e2e_clock``) and the alert's own
``for``. Every scenario first waits for warm-up (its recorded request rate exists) and checks
that the alerts it is about to cause are not active yet, so an alert that fires for another
reason cannot pass the test; every fault makes its alert's condition true at the first scrape
after it, whatever the windows held before. More: docs/scale-out.md, "The end-to-end suite".
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

from generator import core, naming
from generator.builders import goodput_rules, slo_rules
from generator.lint import promql
from generator.parts.common import recorded
from generator.promql import Matcher
from generator.promql import names_in as promql_names
from generator.units import parse_duration_ms
from tests.e2e.e2e_clock import (
    EVALUATION_INTERVAL_S,
    FLUSH_INTERVAL_S,
    INGESTION_LAG_S,
    LATENCY_OFFSET_S,
    POLL_S,
    RULE_QUERY_OFFSET_S,
    SCRAPE_INTERVAL_S,
    bound,
    react_s,
)
from tests.e2e.e2e_env import ENGINES
from tests.e2e.e2e_fakes import HEALTHY_LATENCY_S, HEALTHY_RATE
from tests.e2e.e2e_prometheus import hold

if TYPE_CHECKING:
    from generator.plan import ServicePlan
    from tests.e2e.e2e_env import Engine, Env, Service

T = TypeVar("T")

WARM_UP_S = bound(react_s() + SCRAPE_INTERVAL_S)
"""Bound for a service's first recorded rate on Prometheus once its rules are loaded (a rate
needs two scrapes); other engines get their lateness for one recording level on top."""
EARLY_S = 2 * EVALUATION_INTERVAL_S
"""How much earlier than Prometheus another engine may reach an alert state: the engines
evaluate on their own ticks, and the suite polls each in turn."""
LATE_S = (
    LATENCY_OFFSET_S - RULE_QUERY_OFFSET_S + 2 * EVALUATION_INTERVAL_S + SCRAPE_INTERVAL_S + POLL_S
)
"""How much later than Prometheus another engine may reach an alert state when the alert reads
scraped series directly: vmalert queries the instant ``-rule.evalDelay`` (the latency offset)
before each evaluation, Prometheus the rule query offset before; vmalert evaluates on its own
tick, at an instant truncated to its interval (one evaluation each); VictoriaMetrics scrapes
the fakes at its own moments; the suite polls."""
LATE_PER_LEVEL_S = (
    EVALUATION_INTERVAL_S + FLUSH_INTERVAL_S + INGESTION_LAG_S + 2 * EVALUATION_INTERVAL_S
)
"""Further seconds allowed per level of recording rules between the scraped series and the
alert (:func:`recording_depth`). Prometheus appends a recorded sample to its own TSDB at once,
so a rule later in the group reads it in the same evaluation. vmalert stamps a record with its
query instant and remote-writes it after its rule has run (up to one evaluation), within a
flush interval; VictoriaMetrics makes it searchable within ``INGESTION_LAG_S``; the next level
reads it at its group's next tick, one more evaluation when that runs late."""
FAULT_RATE = 100 * HEALTHY_RATE
"""Requests per second of a fault: one scrape of it outweighs five minutes of healthy traffic
a hundred to three, so a ratio over a 5m window crosses its threshold at once."""
FLOOD_RATE = 10_000 * FAULT_RATE
"""Requests per second of healthy traffic that resolves a fault: one second of it outweighs
minutes of the fault a hundred to one, so every 5m window falls under its threshold at once."""


def lateness(levels: int) -> float:
    """Seconds another engine may reach an alert state later than Prometheus when the alert
    reads ``levels`` levels of recording rules: :data:`LATE_S` + :data:`LATE_PER_LEVEL_S` per
    level."""
    return LATE_S + LATE_PER_LEVEL_S * levels


DASHBOARD_RECORD_LEVELS = 4
"""Recording levels under the deepest record a dashboard reads: increments, window ratio,
SLI over the SLO window, error budget remaining."""


def _rules(rule_file: str) -> list[dict[str, Any]]:
    return [r for g in yaml.safe_load(rule_file)["groups"] for r in g["rules"]]


def _depth(rule_file: str) -> Callable[[str], int]:
    """Levels of recording rules of ``rule_file`` under an expression."""
    records: dict[str, list[str]] = {}
    for rule in _rules(rule_file):
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

    return depth


def recording_depth(rule_file: str, alerts: Iterable[str]) -> int:
    """Levels of recording rules under the deepest rule of ``alerts`` in ``rule_file`` (the
    rendered YAML): 0 when an alert reads scraped series only, 1 when it reads a record of
    scraped series, and so on."""
    depth = _depth(rule_file)
    names = set(alerts)
    return max(depth(r["expr"]) for r in _rules(rule_file) if r.get("alert") in names)


def query_depth(rule_file: str, expr: str) -> int:
    """Levels of recording rules of ``rule_file`` under the query ``expr``."""
    return _depth(rule_file)(expr)


_HELD = re.compile(r"count_over_time\(.*\) \* [0-9.]+ >= ([0-9.]+)", re.S)
"""The threshold of a windowed alert (``generator.parts.common.held_for``), seconds."""


def hold_s(rule_file: str, alerts: Iterable[str], field: str = "for") -> float:
    """Seconds the condition of the slowest of ``alerts`` in ``rule_file`` must hold before it
    fires (``field`` ``for``: its ``for``, or the time a windowed alert must have held within
    its window) or stays firing once it no longer holds (``keep_firing_for``)."""
    names = set(alerts)
    held = 0.0
    for rule in _rules(rule_file):
        if rule.get("alert") not in names:
            continue
        held = max(held, parse_duration_ms(str(rule.get(field, "0s")), zero=True) / 1000)
        windowed = _HELD.search(rule["expr"]) if field == "for" else None
        if windowed:
            held = max(held, float(windowed.group(1)))
    return held


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


def _rule_file(env: Env, service: Service) -> str:
    return env.outputs[naming.rules_file(service.name)]


def _levels(env: Env, service: Service, alerts: Iterable[str]) -> int:
    """Recording levels under the deepest of ``alerts`` in ``service``'s rendered rules."""
    return recording_depth(_rule_file(env, service), alerts)


def _alerts(env: Env, service: Service) -> set[str]:
    """Every alert name of ``service``'s rendered rules."""
    return {r["alert"] for r in _rules(_rule_file(env, service)) if "alert" in r}


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
            lateness(query_depth(_rule_file(env, service), expr)),
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
        bound(react_s(hold_s(_rule_file(env, service), names))),
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
        bound(react_s(hold_s(_rule_file(env, service), names, "keep_firing_for"))),
        lateness(_levels(env, service, names)),
    )
    _compare(env, service, names, f"{'+'.join(sorted(names))} resolved", took)


QUIET_S = react_s(4 * SCRAPE_INTERVAL_S)
"""Seconds a healthy service is watched after warm-up: long enough for a condition that holds
when the watch starts to carry an alert of ``for`` four scrapes (the shortest input-guard
``for`` obsgen accepts) to firing."""


def healthy(env: Env, service: Service) -> None:
    """Healthy traffic, GPU and memory: after warm-up (and any input guard that read a record
    before its first evaluation cleared) no alert of the service is active during
    :data:`QUIET_S` — input guards (every series an alert reads exists, pods attributed
    through the owner series), capacity and lost-GPU alerts included —, no alert fired and no
    burn-rate alert was pending at any evaluation since the rules were loaded
    (:func:`history`), and no notification of it reached a receiver."""
    assert service.gpu is not None
    warm_up(
        env,
        service,
        f'gpu_memory_free_bytes{{pod="{service.pod}"}}',
        f'service_pod_container:model_memory_working_set_bytes:ratio_limit{{service="{service.name}"}}',
        f'service:slo_sli_error:ratio_rate5m{{service="{service.name}"}}',
    )
    # The rules start once every target has answered, but a rule reading a record another
    # group writes sees no record before that group's first evaluation (on vmalert: before
    # the record is searchable), so an input guard may be pending then; never firing.
    wait_engines(
        env,
        service,
        "every alert pending before the first records were written to clear",
        lambda engine: engine.alerts(service.name),
        lambda active: not active,
        WARM_UP_S,
        lateness(_levels(env, service, _alerts(env, service))),
    )
    for engine in live_engines(env, service):
        try:
            hold(
                f"no alert active on healthy {service.name}",
                lambda engine=engine: engine.alert_states(service.name),  # type: ignore[misc]
                lambda active: not active,
                QUIET_S,
                lambda: env.stopping,
            )
        except AssertionError as active:
            _fail(env, service, engine, str(active))
    for engine in live_engines(env, service):
        for what, query in history(service).items():
            found = engine.query(query)
            if found:
                _fail(env, service, engine, f"a healthy service {what}: {found}")
    # Alert names first: CI shows only the start of a long message.
    notified = [
        (n.body["receiver"], a["status"], a["labels"]["alertname"], a["startsAt"])
        for n in env.webhook.received(service.name)
        for a in n.body["alerts"]
    ]
    assert not notified, (
        f"a healthy service was notified (receiver, status, alert, since): {notified}"
    )


def history(service: Service) -> dict[str, str]:
    """Queries of the alerts of ``service`` that fired, and of the ``ErrorBudgetBurn`` alerts
    that were pending or firing, at any evaluation of the last 10 minutes (the whole suite),
    from the engine's own ``ALERTS`` series; keyed by what a result means."""
    firing = recorded(service.plan, "ALERTS", Matcher("alertstate", "=", "firing"))
    return {
        "fired an alert": f"count_over_time({firing}[10m])",
        "burned its error budget": burn_history(service),
    }


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
    """A burst of requests taking 25s: slow-request ratio and p99 alerts fire; a flood of fast
    requests (so the slow ones are < 1 % of the 5m window) resolves both."""
    alerts = (naming.ALERT_SLOW_REQUESTS, naming.ALERT_LATENCY_P99)
    warm_up(env, service)
    assert_quiet(env, service, alerts)
    service.model.set_traffic(latency_s=25, rate=FAULT_RATE)
    wait_firing(env, service, alerts)
    service.model.set_traffic(latency_s=HEALTHY_LATENCY_S, rate=FLOOD_RATE)
    wait_resolved(env, service, alerts)


def errors(env: Env, service: Service) -> None:
    """A burst of requests, half failing with 500: ModelErrorRatioHigh fires."""
    warm_up(env, service)
    assert_quiet(env, service, [naming.ALERT_ERROR_RATIO])
    service.model.set_traffic(error_ratio=0.5, rate=FAULT_RATE)
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
    service.model.set_traffic(error_ratio=1.0, rate=FAULT_RATE)
    wait_firing(env, service, [naming.ALERT_ERROR_BUDGET_BURN])


RATE_INTERVAL = f"{4 * SCRAPE_INTERVAL_S:g}s"
"""What Grafana makes of ``$__rate_interval`` for a data source scraped at the suite's clock
(four scrape intervals)."""


_NO_LONG_OFFSET = re.compile(r"\s+offset\s+\d+[dw]\b")


def dashboard_queries(dashboard: dict[str, Any]) -> list[str]:
    """Every PromQL query of a Grafana dashboard, ready to run: panel targets (rows and
    nested panels included) and ``label_values(…)`` variable queries; variables expanded to
    ``.*`` and ``$__rate_interval`` / ``$__interval`` to :data:`RATE_INTERVAL`.

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
            expr = expr.replace(f"${{{name}}}", RATE_INTERVAL).replace(f"${name}", RATE_INTERVAL)
        for name in sorted(variables, key=len, reverse=True):
            expr = expr.replace(f"${{{name}}}", ".*").replace(f"${name}", ".*")
        assert "$" not in expr, f"unexpanded variable in {expr}"
        expanded.append(expr)
    return sorted(set(expanded))


def _tiled_records(plan: ServicePlan, rules_text: str) -> set[str]:
    """The records of ``plan``'s rule file that read an hourly tile (the SLOs' and the goodput
    SLOs' tiles records, named where they are built), directly or through another."""
    rules = [r for g in yaml.safe_load(rules_text)["groups"] for r in g["rules"] if "record" in r]
    tiles = {slo_rules.tiles_record(plan), goodput_rules.tiles_record(plan)}
    tiled = {r["record"] for r in rules if r["record"] in tiles}
    grew = True
    while grew:
        more = {r["record"] for r in rules if promql_names(r["expr"]) & tiled} - tiled
        tiled |= more
        grew = bool(more)
    return tiled


def dashboard(env: Env, service: Service) -> None:
    """Every query of the service's dashboard and of the fleet overview (rendered for this
    service alone) returns data. One Xid is injected first: Xid panels only have series
    after one, and it puts a firing alert (GPUXidErrors) on the alert panels."""
    assert service.gpu is not None
    outputs = core.build([service.plan])
    boards = {p: json.loads(c) for p, c in outputs.items() if p.startswith("dashboards/")}
    assert naming.dashboard_file(service.name) in boards
    warm_up(env, service, f'gpu_exporter_nvml_up{{pod="{service.pod}"}} == 1')
    service.gpu.emit_xid(79)
    # A baseline a day or a week back (``offset 1w``) is the same query on history this suite
    # cannot hold: it is run without its offset, which proves the query, not the history.
    queries = {
        _NO_LONG_OFFSET.sub("", q): path
        for path, board in sorted(boards.items())
        for q in dashboard_queries(board)
    }
    # Windows of a day or more read hourly tiles, the first written at the first evaluation of
    # the next hour: such a query must evaluate (no error) but may hold no data yet.
    tiled = _tiled_records(service.plan, outputs[naming.rules_file(service.plan.stem)])
    late = {q for q in queries if promql_names(q) & tiled}
    assert len(late) < len(queries), "every dashboard query reads a tiled window"
    took = wait_engines(
        env,
        service,
        f"every dashboard query of {service.name} to return data",
        lambda engine: [
            f"{path}: {q}" for q, path in queries.items() if not engine.query(q) and q not in late
        ],
        lambda empty: not empty,
        bound(react_s()),
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
