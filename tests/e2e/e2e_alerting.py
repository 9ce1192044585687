"""Alert delivery scenarios: the real Prometheus sends to the real Alertmanager, which notifies
the webhook recorder (receivers ``e2e-page`` and ``e2e-ticket``, see ``conftest.py``).

Each scenario drives its own service and asserts on what reached the webhook for that service
(notifications are grouped per service, so scenarios never see each other's).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from generator import naming
from generator.builders.runbooks import runbook_file
from generator.builders.slo_rules import events_record
from tests.alertmanager_server import Notification
from tests.e2e.e2e_clock import (
    EVALUATION_INTERVAL_S,
    GROUP_INTERVAL_S,
    GROUP_WAIT_S,
    POLL_S,
    bound,
    react_s,
)
from tests.e2e.e2e_fakes import HEALTHY_LATENCY_S
from tests.e2e.e2e_prometheus import hold, wait_for
from tests.e2e.e2e_scenarios import (
    FAULT_RATE,
    FLOOD_RATE,
    assert_quiet,
    hold_s,
    wait_firing,
    warm_up,
)

if TYPE_CHECKING:
    from tests.e2e.e2e_env import Env, Service

PAGE, TICKET = "e2e-page", "e2e-ticket"
SETTLE_S = GROUP_WAIT_S + 2 * GROUP_INTERVAL_S + EVALUATION_INTERVAL_S + POLL_S
"""Seconds to keep watching after the expected notifications arrived: long enough for a
notification the Alertmanager had already dispatched or held in a group to arrive."""


def notify_s(env: Env, service: Service, alerts: Iterable[str], field: str = "for") -> float:
    """Bound for ``service``'s Prometheus alerts ``alerts`` to reach the webhook once their
    fault is injected (``field`` ``keep_firing_for``: resolved once it is cleared): the alert's
    time on Prometheus, the Alertmanager's group wait and one group interval."""
    rules = env.outputs[naming.rules_file(service.name)]
    return bound(react_s(hold_s(rules, alerts, field)) + GROUP_WAIT_S + GROUP_INTERVAL_S)


INCIDENT_PAGES = {
    (naming.ALERT_LATENCY_P99, ""),
    (naming.ALERT_SLOW_REQUESTS, ""),
    (naming.ALERT_ERROR_RATIO, ""),
    (naming.ALERT_ERROR_BUDGET_BURN, "availability"),
}
"""The (alert name, SLO) groups the incident pages: p99 at 30 s is above the 20 s threshold
and every request is slower than 500 ms; 10 % errors burn the availability budget (the latency
SLO's 30 s threshold still counts a 30 s request as good)."""


def _stopping(env: Env) -> Callable[[], bool]:
    return lambda: env.stopping


def _group(n: Notification) -> tuple[str, str]:
    return n.group_labels["alertname"], n.group_labels.get("slo", "")


def _firing(env: Env, service: Service) -> list[Notification]:
    return [n for n in env.webhook.received(service.name) if n.status == "firing"]


def _slo_events(env: Env, service: Service, slo: str) -> str:
    """The SLO's recorded bad and total events since the start and the evaluations whose bad
    increment exceeds its total one (a scrape counted by one and not the other)."""
    window = "10m"  # longer than the suite: every evaluation so far
    record = events_record(service.plan)
    samples = {}
    for events in (naming.EVENTS_BAD, naming.EVENTS_TOTAL):
        matchers = f'{{service="{service.name}",slo="{slo}",{naming.EVENTS}="{events}"}}'
        found = env.prometheus.query(f"{record}{matchers}[{window}]")
        samples[events] = {t: float(v) for t, v in found[0]["values"]} if found else {}
    bad, total = samples[naming.EVENTS_BAD], samples[naming.EVENTS_TOTAL]
    over = [(t, total[t], bad[t]) for t in sorted(total) if t in bad and bad[t] > total[t]]
    shown = ", ".join(f"@{t:.3f} total {a:.0f} bad {b:.0f}" for t, a, b in over[:5])
    return (
        f"{len(total)} evaluations: total {sum(total.values()):.0f}, bad "
        f"{sum(bad.values()):.0f}; bad > total at {len(over)} ({shown})"
    )


def _pages_missing(env: Env, service: Service, missing: set[tuple[str, str]]) -> str:
    """Where each missing (alert name, SLO) page stopped: its state at Prometheus (inactive,
    pending, firing), at the Alertmanager (absent, active, suppressed and by what), and for an
    SLO its recorded events (:func:`_slo_events`)."""
    lines = []
    for name, slo in sorted(missing):

        def ours(labels: dict[str, str], name: str = name, slo: str = slo) -> bool:
            return labels["alertname"] == name and labels.get("slo", "") == slo

        prom = sorted(
            f"{a['state']}{{long_window={a['labels'].get('long_window', '')}}}"
            for a in env.prometheus.alerts(service.name)
            if ours(a["labels"])
        )
        am = sorted(
            f"{a['status']['state']} (inhibited by {a['status']['inhibitedBy']}, silenced by "
            f"{a['status']['silencedBy']})"
            for a in env.alertmanager.alerts(service=service.name)
            if ours(a["labels"])
        )
        line = f"{name} {slo}: Prometheus {prom or 'inactive'}, Alertmanager {am or 'absent'}"
        if slo:
            line += f"; SLO events: {_slo_events(env, service, slo)}"
        lines.append(line)
    return "\n".join(lines)


def incident(env: Env, service: Service) -> None:
    """The o1-preview incident: p99 at 30 s and 5xx jumping to 10 %. The team's page receiver
    gets one notification group per alert name and SLO, each alert with its runbook and
    dashboard links, and no ticket (the slow-burn warnings are held back by the fast-burn
    page); after recovery every group is notified resolved."""
    pages = [a for a, _ in INCIDENT_PAGES]
    warm_up(env, service)
    assert_quiet(env, service, pages)
    assert not env.webhook.received(service.name), "notified before the incident"
    # A jump, not a ramp: the suite's SLO windows all hold the same minute of history, so a
    # ramp would cross the slow-burn thresholds seconds before the fast-burn ones. At the
    # fault rate the first scrape after the change already burns at 90 × the budget.
    service.model.set_traffic(latency_s=30, error_ratio=0.10, rate=FAULT_RATE)

    def paged() -> set[tuple[str, str]]:
        return {_group(n) for n in _firing(env, service) if n.receiver == PAGE}

    try:
        wait_for(
            f"a page for each of {sorted(INCIDENT_PAGES)} of {service.name}",
            paged,
            lambda groups: groups >= INCIDENT_PAGES,
            notify_s(env, service, pages),
            _stopping(env),
        )
    except AssertionError as timed_out:
        report = _pages_missing(env, service, INCIDENT_PAGES - paged())
        raise AssertionError(f"{timed_out}\n{report}") from None
    hold(
        f"pages only, and only of {sorted(INCIDENT_PAGES)}, for {service.name}",
        lambda: {(n.receiver, _group(n)) for n in _firing(env, service)},
        lambda found: found <= {(PAGE, group) for group in INCIDENT_PAGES},
        SETTLE_S,
        _stopping(env),
    )
    firing = _firing(env, service)
    assert {n.receiver for n in firing} == {PAGE}, [(n.receiver, _group(n)) for n in firing]
    keys: dict[tuple[str, str], set[str]] = {}
    for n in firing:
        keys.setdefault(_group(n), set()).add(str(n.body["groupKey"]))
        assert n.group_labels["service"] == service.name
        assert n.group_labels["namespace"] == service.plan.namespace
        for alert in n.alerts:
            name = alert["labels"]["alertname"]
            assert alert["labels"][naming.TEAM] == "e2e"
            assert alert["annotations"]["runbook_url"] == service.plan.runbook_url(name)
            assert alert["annotations"]["dashboard_url"] == service.plan.dashboard_url()
    assert set(keys) == INCIDENT_PAGES, sorted(keys)
    assert all(len(k) == 1 for k in keys.values()), keys
    # A flood of fast, good requests brings every 5m window under its threshold at once.
    service.model.set_traffic(latency_s=HEALTHY_LATENCY_S, error_ratio=0.0, rate=FLOOD_RATE)
    wait_for(
        f"resolved notifications of every page group of {service.name}",
        lambda: {
            _group(n)
            for n in env.webhook.received(service.name)
            if n.receiver == PAGE and n.status == "resolved"
        },
        lambda groups: groups >= INCIDENT_PAGES,
        notify_s(env, service, pages, "keep_firing_for") + GROUP_INTERVAL_S,
        _stopping(env),
    )


def inhibit(env: Env, service: Service) -> None:
    """Every target of the service goes down while its latency and error alerts are pending:
    they fire (the rate windows still hold the bad samples), yet only ModelTargetDown is
    delivered; the Alertmanager shows the others inhibited by it."""
    symptoms = [naming.ALERT_LATENCY_P99, naming.ALERT_SLOW_REQUESTS, naming.ALERT_ERROR_RATIO]
    warm_up(env, service)
    assert_quiet(env, service, [*symptoms, naming.ALERT_TARGET_DOWN])
    service.model.set_traffic(latency_s=30, error_ratio=0.5, rate=FAULT_RATE)
    wait_for(
        f"{symptoms} pending for {service.name}",
        lambda: env.prometheus.alert_states(service.name),
        lambda states: all(states.get(a) for a in symptoms),
        bound(react_s()),
        _stopping(env),
    )
    service.model.kill()
    wait_firing(env, service, [*symptoms, naming.ALERT_TARGET_DOWN])
    wait_for(
        f"ModelTargetDown paged for {service.name}",
        lambda: {n.group_labels["alertname"] for n in _firing(env, service)},
        lambda names: naming.ALERT_TARGET_DOWN in names,
        notify_s(env, service, [naming.ALERT_TARGET_DOWN]),
        _stopping(env),
    )

    def held_back() -> dict[str, list[str]]:
        return {
            a["labels"]["alertname"]: a["status"]["inhibitedBy"]
            for a in env.alertmanager.alerts(service=service.name)
        }

    wait_for(
        f"{symptoms} inhibited at the Alertmanager for {service.name}",
        held_back,
        lambda held: all(held.get(a) for a in symptoms),
        notify_s(env, service, symptoms),
        _stopping(env),
    )
    hold(
        f"only ModelTargetDown delivered for {service.name}",
        lambda: {n.group_labels["alertname"] for n in _firing(env, service)},
        lambda names: names <= {naming.ALERT_TARGET_DOWN},
        SETTLE_S,
        _stopping(env),
    )
    delivered = [(n.receiver, n.group_labels["alertname"]) for n in _firing(env, service)]
    assert {name for _, name in delivered} == {naming.ALERT_TARGET_DOWN}, delivered
    assert {receiver for receiver, _ in delivered} == {PAGE}, delivered
    assert all(held_back()[a] for a in symptoms), held_back()


_SILENCE_ADD = re.compile(r"^amtool silence add .*?(?<!\\)$", re.M | re.S)
_SILENCE_QUERY = re.compile(r"^(amtool silence query [^#\n]*?)\s*(?:#.*)?$", re.M)


def runbook_silence_command(env: Env, alert: str) -> str:
    """The ``amtool silence add …`` command the runbook of ``alert`` prints (continuation
    lines joined), as a shell command line."""
    page = env.outputs[runbook_file(alert)]
    match = _SILENCE_ADD.search(page)
    assert match, f"no `amtool silence add` command in {runbook_file(alert)}"
    return match.group(0)


def _amtool(env: Env, command: str) -> str:
    """Run a runbook's amtool command line in bash, as an on-call engineer would, with amtool
    pointed at the suite's Alertmanager by its own config file (``alertmanager.url`` in
    ``$HOME/.config/amtool/config.yml``, where amtool 0.35 reads it: ``cli/root.go``)."""
    home = env.workdir / "home"
    config = home / ".config" / "amtool" / "config.yml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"alertmanager.url: {env.alertmanager.url}\n", encoding="utf-8")
    proc = subprocess.run(
        ["bash", "-c", command],
        env={**os.environ, "HOME": str(home), "USER": "e2e-oncall"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, f"{command}\n{proc.stdout}{proc.stderr}"
    return proc.stdout


def silence(env: Env, service: Service) -> None:
    """The silence the runbook prints mutes the alert: with it, a firing ModelQueueDepthHigh
    reaches the Alertmanager but no receiver; expired with the runbook's command, the ticket
    arrives."""
    alert = naming.ALERT_QUEUE_DEPTH
    warm_up(env, service)
    assert_quiet(env, service, [alert])
    command = runbook_silence_command(env, alert)
    for placeholder, value in (
        ("<service>", service.name),
        ("<ticket>", "E2E-1"),
        ("<what you are doing>", "e2e silence test"),
    ):
        assert placeholder in command, (placeholder, command)
        command = command.replace(placeholder, value)
    silence_id = _amtool(env, command).strip()
    assert re.fullmatch(r"[0-9a-f-]{36}", silence_id), silence_id
    query = _SILENCE_QUERY.search(env.outputs[runbook_file(alert)])
    assert query, f"no `amtool silence query` command in {runbook_file(alert)}"
    assert alert in query.group(1), query.group(0)
    assert silence_id in _amtool(env, query.group(1)), query.group(1)
    service.model.set_traffic(queue=500)
    wait_firing(env, service, [alert])
    wait_for(
        f"{alert} of {service.name} silenced at the Alertmanager",
        lambda: [a["status"]["silencedBy"] for a in env.alertmanager.alerts(service=service.name)],
        lambda found: [silence_id] in found,
        notify_s(env, service, [alert]),
        _stopping(env),
    )
    hold(
        f"no notification of the silenced {alert} of {service.name}",
        lambda: [(n.receiver, n.status, _group(n)) for n in env.webhook.received(service.name)],
        lambda found: not found,
        SETTLE_S,
        _stopping(env),
    )
    expire = "amtool silence expire <silence-id>"
    assert expire in env.outputs[runbook_file(alert)]
    _amtool(env, expire.replace("<silence-id>", silence_id))
    wait_for(
        f"the ticket for {alert} of {service.name} once the silence expired",
        lambda: [(n.receiver, _group(n)) for n in _firing(env, service)],
        lambda found: (TICKET, (alert, "")) in found,
        bound(GROUP_WAIT_S + GROUP_INTERVAL_S + EVALUATION_INTERVAL_S + POLL_S),
        _stopping(env),
    )


ALERTING_SCENARIOS: dict[str, Callable[[Env, Service], None]] = {
    "incident": incident,
    "inhibit": inhibit,
    "silence": silence,
}
