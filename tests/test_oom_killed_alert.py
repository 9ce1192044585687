"""``ModelContainerOOMKilled``: the reason ``OOMKilled`` pages only beside a SIGKILL (exit 137)
that cAdvisor's OOM counter does not contradict (``killed="container"``); a process OOM-killed
in a running container is seen (``killed="process"``); a drain never pages as an OOM kill.

Every outcome runs in the real promtool of both lines (Prometheus 3.16 and 2.53): the
family's generated cases, its input guard's case, hand-written counter scenarios (resets,
late-born series, two scrape jobs, other label sets), and broken rules the cases must catch.
"""

from __future__ import annotations

import copy
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from generator import naming
from generator.builders.guard_rules import signal_inputs
from generator.builders.rulefile import rule_file
from generator.cases.guard_cases import guard_groups
from generator.families import oom_killed
from tests.e2e.e2e_victoriametrics import VictoriaMetricsStack, find_victoriametrics
from tests.helpers_promtool import promtool_rules
from tests.test_server_reality import POD, plan_of, spec_data

ALERT = naming.ALERT_OOM_KILLED
LINES = ("prometheus3", "prometheus2")
PLAN = plan_of(spec_data("vllm"))
CONTAINER = {"namespace": "ns", "pod": POD, "container": "server"}


def _outcomes(groups: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Group name (without the alert's prefix) → the ``killed`` label of each expected alert."""
    return {
        g["name"].removeprefix(f"{ALERT}: "): [
            a["exp_labels"][naming.KILLED] for t in g["alert_rule_test"] for a in t["exp_alerts"]
        ]
        for g in groups
    }


# --- the rules and their inputs ------------------------------------------------------------


def test_two_rules_tell_a_killed_container_from_a_killed_process() -> None:
    rules = [r for g in rule_file(PLAN)["groups"] for r in g["rules"] if r.get("alert") == ALERT]
    assert [r["labels"][naming.KILLED] for r in rules] == ["container", "process"]
    container, process = (r["expr"] for r in rules)
    assert "kube_pod_container_status_last_terminated_exitcode" in container
    assert "== 137" in container and "container_oom_events_total" in container
    assert "container_oom_events_total" in process
    assert "sum" not in container + process, "duplicates across scrape jobs must not add up"
    assert "increase(" not in container + process, (
        "a late-born series would count on VictoriaMetrics"
    )
    assert "{{ $value | humanize }} process(es)" in rules[1]["annotations"]["description"]


def test_the_counter_is_guarded_and_the_exit_code_read_beside_the_restarts() -> None:
    inputs = {i.signal: i for i in signal_inputs(PLAN)}
    events = inputs["oomEvents"]
    assert events.metric == "container_oom_events_total" and ALERT in events.readers
    assert [s.owned for s in events.sources] == [True]
    assert "Kubernetes 1.24" in events.remedy and 'killed="process"' in events.remedy
    covers = {s.metric for s in inputs["containerRestarts"].covers}
    assert {naming.KSM_LAST_TERMINATED, naming.KSM_LAST_EXIT_CODE} <= covers


def test_the_window_grows_with_for_so_the_condition_can_hold_that_long() -> None:
    held = plan_of(spec_data("vllm", alerts={"oomKilled": {"for": "5m"}}))
    rules = oom_killed.rules(held)
    assert all("[15m]" in r["expr"] and "[10m]" not in r["expr"] for r in rules)
    assert all(r["for"] == "5m" for r in rules)


# --- the generated cases, in both promtool lines ---------------------------------------------

EXPECTED = {
    "a container OOM-killed and restarted, its kill counted, fires": ["container"],
    "a container OOM-killed and restarted, its count lost with its cgroup, fires": ["container"],
    "a process OOM-killed in a running container, scraped by two jobs, counted once, fires": [
        "process"
    ],
    "a drain (exit 143) after a process was OOM-killed long ago stays quiet": [],
    "a SIGKILL (exit 137) after a process was OOM-killed long ago stays quiet": [],
    "a SIGKILL (exit 137) without the OOMKilled reason stays quiet": [],
    "a healthy container stays quiet": [],
    "without the OOM counter, an OOMKilled SIGKILL (exit 137) fires": ["container"],
    "without the OOM counter, an OOMKilled drain (exit 143) stays quiet": [],
}


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("for_", [None, "4m"], ids=["at once", "for 4m"])
def test_generated_cases_fire_and_stay_quiet_as_designed(
    tmp_path: Path, line: str, for_: str | None
) -> None:
    alerts = {"oomKilled": {"for": for_}} if for_ else {}
    plan = plan_of(spec_data("vllm", alerts=alerts))
    groups = oom_killed.cases(plan)
    assert _outcomes(groups) == EXPECTED
    result = promtool_rules(line, tmp_path, rule_file(plan), groups)
    assert result.startswith("PASS"), result


@pytest.mark.parametrize("line", LINES)
def test_the_missing_counter_fires_its_guard_naming_the_series(tmp_path: Path, line: str) -> None:
    groups = [
        g for g in guard_groups(PLAN) if "oomEvents (container_oom_events_total)" in g["name"]
    ]
    assert len(groups) == 1
    expected = [a for t in groups[0]["alert_rule_test"] for a in t["exp_alerts"]]
    signals = {a["exp_labels"][naming.SIGNAL]: a for a in expected}
    guard = signals["oomEvents"]
    assert guard["exp_labels"][naming.METRIC] == "container_oom_events_total"
    assert "no container_oom_events_total series" in guard["exp_annotations"]["summary"]
    result = promtool_rules(line, tmp_path, rule_file(PLAN), groups)
    assert result.startswith("PASS"), result


# --- broken rules the generated cases catch ------------------------------------------------


def _broken(edit: Any) -> dict[str, Any]:
    """The plan's rule file with ``edit(expr, killed) -> expr`` applied to the OOM rules."""
    rules = copy.deepcopy(rule_file(PLAN))
    for group in rules["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == ALERT:
                rule["expr"] = edit(rule["expr"], rule["labels"][naming.KILLED])
    return rules


def _reason_alone(expr: str, killed: str) -> str:
    """Today's rule before the counter: the reason and a restart, nothing else."""
    if killed == "process":
        return "vector(0) > 1"
    return "\n".join(expr.splitlines()[:2])


def _no_older_kill_check(expr: str, killed: str) -> str:
    return expr.rsplit("\nunless", 1)[0] if killed == "container" else expr


def _summed(expr: str, killed: str) -> str:
    return re.sub(
        r"max by \(container, namespace, pod\) \(\(\(\(max_over_time\(container_oom",
        "sum by (container, namespace, pod) ((((max_over_time(container_oom",
        expr,
    )


@pytest.mark.parametrize(
    ("edit", "caught"),
    [
        pytest.param(
            _reason_alone,
            {
                "a drain (exit 143) after a process was OOM-killed long ago stays quiet",
                "a SIGKILL (exit 137) after a process was OOM-killed long ago stays quiet",
                "a process OOM-killed in a running container, scraped by two jobs, counted once, fires",
                "without the OOM counter, an OOMKilled drain (exit 143) stays quiet",
            },
            id="the reason alone pages a drain",
        ),
        pytest.param(
            _no_older_kill_check,
            {"a SIGKILL (exit 137) after a process was OOM-killed long ago stays quiet"},
            id="without the older-kill check a stale reason's SIGKILL pages",
        ),
        pytest.param(
            _summed,
            {
                "a process OOM-killed in a running container, scraped by two jobs, counted once, fires"
            },
            id="summed over scrape jobs a kill counts twice",
        ),
    ],
)
def test_the_generated_cases_catch_a_broken_rule(
    tmp_path: Path, edit: Any, caught: set[str]
) -> None:
    broken = _broken(edit)
    assert broken != rule_file(PLAN)
    result = promtool_rules("prometheus3", tmp_path, broken, oom_killed.cases(PLAN))
    assert result.startswith("FAIL"), result
    failed = {name for name in EXPECTED if f"{ALERT}: {name}" in result}
    assert failed == caught, result


# --- hand-written scenarios: the counter as cAdvisor and the kubelet really report it ---------


def _series(name: str, values: str, **labels: str) -> dict[str, str]:
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return {"series": f"{name}{{{inner}}}", "values": values}


def _oom(values: str, cid: str = "/kubepods/pod-uid/a1", **target: str) -> dict[str, str]:
    """cAdvisor's OOM counter of one container instance (``id``), as the kubelet serves it."""
    job = {"job": "kubelet", "metrics_path": "/metrics/cadvisor", "instance": "10.0.0.9:10250"}
    return _series(naming.CADVISOR_OOM_EVENTS, values, **{**CONTAINER, **job, "id": cid, **target})


def _terminated(reason: str | None, code: int | None) -> list[dict[str, str]]:
    """A restart at minute 12, with the last termination ``reason`` and exit ``code`` since."""
    out = [_series(naming.KSM_RESTARTS, "0x11 1x28", **CONTAINER)]
    if reason is not None:
        out.append(_series(naming.KSM_LAST_TERMINATED, "_x11 1x28", **CONTAINER, reason=reason))
    if code is not None:
        out.append(_series(naming.KSM_LAST_EXIT_CODE, f"_x11 {code}x28", **CONTAINER))
    return out


def _running() -> list[dict[str, str]]:
    return [_series(naming.KSM_RESTARTS, "0x40", **CONTAINER)]


def _count(killed: str, at: str, n: int) -> dict[str, Any]:
    alerts = f'ALERTS{{alertname="{ALERT}",alertstate="firing",{naming.KILLED}="{killed}"}}'
    return {
        "expr": f"count({alerts}) or vector(0)",
        "eval_time": at,
        "exp_samples": [{"labels": "{}", "value": n}],
    }


NEW_CID = "/kubepods/pod-uid/b2"
SCENARIOS = [
    pytest.param(
        [*_running(), _oom("2x11 0x28")],
        0,
        0,
        id="the kubelet restarts: the count drops 2 to 0, silent",
    ),
    pytest.param(
        [*_running(), _oom("2x11 0x2 1x25")],
        0,
        1,
        id="a reset, then a kill (2, 0, 1): a process kill",
    ),
    pytest.param(
        [*_running(), _oom("_x11 3x28")],
        0,
        0,
        id="a series first scraped at 3 (a new scrape job): old kills, silent",
    ),
    pytest.param(
        [*_running(), _oom("_x11 0x2 1x25")],
        0,
        1,
        id="a series born at 0 that rises: a process kill",
    ),
    pytest.param(
        [
            *_running(),
            _oom("0x12 2x27"),
            _oom("0x12 2x27", job="cadvisor", metrics_path="/metrics", endpoint="cadvisor"),
        ],
        0,
        1,
        id="two kills counted by two scrape jobs: one alert (its value is checked by the cases)",
    ),
    pytest.param(
        [
            *_terminated("OOMKilled", 137),
            _oom("0x10 1 stale"),
            _oom("0x10 1 stale", job="cadvisor", metrics_path="/metrics"),
            _oom("_x11 0x28", cid=NEW_CID),
        ],
        1,
        0,
        id="a container kill counted by two jobs before its cgroup went: a container kill",
    ),
    pytest.param(
        [*_terminated("OOMKilled", 143), _oom("0x9 1x2 stale"), _oom("_x11 0x28", cid=NEW_CID)],
        0,
        1,
        id="a process kill, then a SIGTERM restart (exit 143): a process kill, never the container",
    ),
    pytest.param(
        [*_terminated("OOMKilled", None), _oom("0x11 stale"), _oom("_x11 0x28", cid=NEW_CID)],
        1,
        0,
        id="kube-state-metrics before v2.7.0 (no exit code), kill lost with its cgroup: fires",
    ),
    pytest.param(
        [*_terminated("OOMKilled", None), _oom("1x11 stale"), _oom("_x11 0x28", cid=NEW_CID)],
        0,
        0,
        id="no exit code, the reason left over from an older process kill: silent",
    ),
    pytest.param(
        [*_terminated("Completed", 0), _oom("0x11 stale"), _oom("_x11 0x28", cid=NEW_CID)],
        0,
        0,
        id="a clean exit (a rollout's drain): silent",
    ),
    pytest.param(
        [*_terminated("Error", 143), _oom("0x11 stale"), _oom("_x11 0x28", cid=NEW_CID)],
        0,
        0,
        id="a SIGTERM with the reason Error: silent",
    ),
    pytest.param(
        [*_terminated("OOMKilled", 137)],
        1,
        0,
        id="no counter at all (cAdvisor not scraped): an OOMKilled SIGKILL still fires",
    ),
    pytest.param(
        [*_terminated("OOMKilled", 143)],
        0,
        0,
        id="no counter at all: an OOMKilled drain stays silent",
    ),
]


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize(("inputs", "containers", "processes"), SCENARIOS)
def test_counter_scenarios(
    tmp_path: Path, line: str, inputs: list[dict[str, str]], containers: int, processes: int
) -> None:
    """Each scenario: the service's target up (its pod label attributes the pod), the inputs;
    checked at 16m, the restart and every rise 4 minutes or more inside the 10m window."""
    up = _series("up", "1x40", namespace="ns", job="svc", pod=POD, instance="10.0.0.1:8000")
    tests = [_count("container", "16m", containers), _count("process", "16m", processes)]
    group = {"interval": "1m", "input_series": [up, *inputs], "promql_expr_test": tests}
    result = promtool_rules(line, tmp_path, rule_file(PLAN), [group])
    assert result.startswith("PASS"), result


@pytest.mark.parametrize("line", LINES)
def test_a_standalone_cadvisors_labels_fire_the_guard_and_the_fallback_still_pages(
    tmp_path: Path, line: str
) -> None:
    """A standalone cAdvisor names the container ``container_label_io_kubernetes_container_name``,
    not ``container``: no series of the service's container, so the ``oomEvents`` guard fires
    after its 15m, naming the series; a SIGKILL with the OOMKilled reason still pages."""
    up = _series("up", "1x40", namespace="ns", job="svc", pod=POD, instance="10.0.0.1:8000")
    other = _series(
        naming.CADVISOR_OOM_EVENTS,
        "0x40",
        namespace="ns",
        pod=POD,
        container_label_io_kubernetes_container_name="server",
        id="/docker/abc",
    )
    working_set = _series(naming.CADVISOR_WORKING_SET, "1e9x40", **CONTAINER)
    guard = (
        f'ALERTS{{alertname="{naming.ALERT_SIGNAL_MISSING}",alertstate="firing",'
        f'signal="oomEvents",metric="container_oom_events_total"}}'
    )
    tests = [
        {
            "expr": f"count({guard}) or vector(0)",
            "eval_time": "17m",
            "exp_samples": [{"labels": "{}", "value": 1}],
        },
        _count("container", "16m", 1),
    ]
    inputs = [up, other, working_set, *_terminated("OOMKilled", 137)]
    group = {"interval": "1m", "input_series": inputs, "promql_expr_test": tests}
    result = promtool_rules(line, tmp_path, rule_file(PLAN), [group])
    assert result.startswith("PASS"), result


# --- the same counting on VictoriaMetrics ----------------------------------------------------


def test_a_series_born_late_counts_no_kill_on_victoriametrics_either(tmp_path: Path) -> None:
    """The rule's per-series count on a real VictoriaMetrics: a series first scraped at 3
    (a new scrape job) counts 0 there too, where its ``increase()`` counts 3 (why the rule does
    not use it); a series born at 0 that rises counts 1; a reset to 0 counts 0."""
    found = find_victoriametrics()
    assert found is not None, "victoria-metrics not on PATH: run `make tools`"
    stack = VictoriaMetricsStack(found, tmp_path)
    stack.start([], [])
    try:
        start_ms = (int(time.time()) // 60 - 30) * 60_000
        shapes: dict[str, list[float | None]] = {
            "late": [None] * 12 + [3.0] * 16,
            "born0": [None] * 12 + [0.0] * 3 + [1.0] * 13,
            "reset": [2.0] * 12 + [0.0] * 16,
            "steady": [1.0] * 28,
        }
        rows = []
        for shape, values in shapes.items():
            kept = [(i, v) for i, v in enumerate(values) if v is not None]
            rows.append(
                {
                    "metric": {"__name__": naming.CADVISOR_OOM_EVENTS, "shape": shape},
                    "values": [v for _, v in kept],
                    "timestamps": [start_ms + i * 60_000 for i, _ in kept],
                }
            )
        body = "\n".join(json.dumps(r) for r in rows)
        stack.session.post(f"{stack.url}/api/v1/import", data=body, timeout=10).raise_for_status()
        stack.session.get(f"{stack.url}/internal/force_flush", timeout=10).raise_for_status()
        at = str((start_ms + 16 * 60_000) / 1000)

        def per_shape(expr: str) -> dict[str, float]:
            data = stack.api("query", query=expr, time=at)
            return {r["metric"]["shape"]: float(r["value"][1]) for r in data["result"]}

        deadline = time.monotonic() + 30
        while len(per_shape(f"last_over_time({naming.CADVISOR_OOM_EVENTS}[1h])")) < len(shapes):
            assert time.monotonic() < deadline, stack.log()
            time.sleep(0.1)
        counted = per_shape(oom_killed.rise(naming.CADVISOR_OOM_EVENTS, "10m"))
        assert counted == {"late": 0, "born0": 1, "reset": 0, "steady": 0}
        assert per_shape(f"increase({naming.CADVISOR_OOM_EVENTS}[10m])")["late"] == 3
    finally:
        stack.stop()
