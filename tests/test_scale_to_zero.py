"""Scale to zero: ``spec.deployment.replicas`` may be 0 or a range, and the alerts on targets,
replicas, crash loops, input guards and cold starts read the desired replica count live from
kube-state-metrics — zero desired is silent, desired but none up pages after the startup grace.

Every outcome runs in the real promtool of both lines (Prometheus 3.16 and 2.53): the
families' generated cases over several specs, the shared clause applied to another alert's
recorded series, and broken rules the generated cases must catch.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from generator import naming
from generator.builders.guard_rules import signal_inputs, unguarded_reads
from generator.builders.rulefile import rule_file
from generator.cases.guard_cases import guard_groups
from generator.cli import main
from generator.families import cold_start, crash_loop, replicas_unavailable, target_down
from generator.parts import replicas
from generator.plan import ServicePlan
from tests.factories import good_spec, set_path, write_spec
from tests.helpers_promtool import promtool_rules
from tests.test_guards import (
    test_every_series_an_alert_reads_is_guarded_or_known_unguarded as every_series_guarded,
)
from tests.test_server_reality import plan_of, spec_data

LINES = ("prometheus3", "prometheus2")
KEDA = {"source": "keda-http", "selector": {"route_namespace": "ns", "route_name": "svc"}}
KNATIVE = {
    "source": "knative",
    "selector": {"k8s_namespace_name": "ns", "kn_revision_name": "svc-1"},
}


def _spec(replicas_: Any = None, activator: Any = None, **body: Any) -> dict[str, Any]:
    data = spec_data("vllm", **body)
    if replicas_ is not None:
        data["spec"]["deployment"]["replicas"] = replicas_
    if activator is not None:
        data["spec"].setdefault("scaleToZero", {})["activator"] = activator
    return data


PLANS = {
    "range from 0, KEDA": _spec({"min": 0, "max": 4}, KEDA),
    "plain 2, Knative, cluster label, 15s scrape": _spec(
        2, KNATIVE, prometheus={"clusterLabel": "cluster", "scrapeInterval": "15s"}
    ),
    "plain 0, StatefulSet, 90s grace, 1m scrape": _spec(
        0,
        {"source": "custom", "metric": "gateway_held_requests", "selector": {"backend": "svc"}},
        deployment={"name": "svc", "container": "server", "kind": "StatefulSet"},
        prometheus={"scrapeInterval": "1m"},
        scaleToZero={"startupGrace": "90s"},
        alerts={"coldStart": {"for": "3m"}, "targetDown": {"for": "4m"}},
    ),
    "default spec (one replica), no namespace in the selector": _spec(selector={"job": "svc"}),
}


def _failed_groups(output: str) -> set[str]:
    return set(re.findall(r"name: (.*),\n", output))


def _cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Every generated case of the families this feature touches, and the guards'."""
    return [
        *target_down.cases(plan),
        *replicas_unavailable.cases(plan),
        *crash_loop.cases(plan),
        *cold_start.cases(plan),
        *guard_groups(plan),
    ]


def _outcome(group: dict[str, Any]) -> str:
    """``fires`` when some check of the group expects an alert, else ``quiet``."""
    expected = [a for t in group["alert_rule_test"] for a in t["exp_alerts"]]
    return "fires" if expected else "quiet"


# --- check: counts, ranges and their errors --------------------------------------------------


@pytest.mark.parametrize(
    "value", [0, 3, {"min": 0, "max": 4}, {"min": 2, "max": 2}, {"min": 0, "max": 0}]
)
def test_check_accepts_zero_and_ranges(
    value: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_spec(tmp_path / "specs", set_path(good_spec(), "spec.deployment.replicas", value))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "specs/x.yaml"]) == 0


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        pytest.param(
            "spec.deployment.replicas",
            {"min": 4, "max": 2},
            "spec.deployment.replicas.max: 2 is below min (4); expected max ≥ min",
            id="min above max",
        ),
        pytest.param(
            "spec.deployment.replicas",
            {"min": -1, "max": 2},
            "spec.deployment.replicas.min: Input should be greater than or equal to 0 (got -1)",
            id="negative min",
        ),
        pytest.param(
            "spec.deployment.replicas",
            -1,
            "spec.deployment.replicas: Input should be greater than or equal to 0 (got -1)",
            id="negative count",
        ),
        pytest.param(
            "spec.deployment.replicas",
            "two",
            "spec.deployment.replicas: expected a replica count (0 or more) or a range",
            id="text",
        ),
        pytest.param(
            "spec.deployment.replicas",
            {"min": 0},
            "spec.deployment.replicas.max: required field is missing",
            id="range without max",
        ),
        pytest.param(
            "spec.scaleToZero.activator",
            {"source": "custom", "selector": {"backend": "chat"}},
            "spec.scaleToZero.activator.metric: source custom needs metric",
            id="custom activator without metric",
        ),
        pytest.param(
            "spec.scaleToZero.activator",
            {"source": "keda-http", "selector": {}},
            "spec.scaleToZero.activator.selector: expected at least one label matcher",
            id="activator without selector",
        ),
    ],
)
def test_check_refuses_bad_replicas_and_activators_naming_the_field(
    path: str,
    value: object,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_spec(tmp_path / "specs", set_path(good_spec(), path, value))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "specs/x.yaml"]) == 2
    err = capsys.readouterr().err
    assert f"specs/x.yaml: {message}" in err, err
    assert "Traceback" not in err


def test_a_range_resolves_to_its_bounds_and_a_count_to_one_value() -> None:
    assert (
        plan_of(_spec({"min": 0, "max": 4})).replicas,
        plan_of(_spec({"min": 0, "max": 4})).replicas_max,
    ) == (0, 4)
    plain = plan_of(_spec(3))
    assert (plain.replicas, plain.replicas_max, plain.startup_grace_ms) == (3, 3, 600_000)


def test_cold_start_needs_an_activator_and_says_so() -> None:
    plan = plan_of(_spec(alerts={"coldStart": {"for": "5m"}}))
    assert "cold_start" not in plan.alerts and cold_start.rules(plan) == []
    assert any(
        w.path == "spec.alerts.coldStart" and "spec.scaleToZero.activator" in w.message
        for w in plan.warnings
    )
    keda = plan_of(_spec(activator=KEDA))
    assert keda.activator is not None
    assert keda.activator.names == (
        naming.KEDA_INTERCEPTOR_CONCURRENCY,
        naming.KEDA_INTERCEPTOR_PENDING,
    )


# --- the rules ------------------------------------------------------------------------------


def test_the_shared_clause_reads_the_live_desired_count_per_namespace_and_cluster() -> None:
    plan = plan_of(_spec(prometheus={"clusterLabel": "cluster"}))
    clause = replicas.unless_scaled_to_zero(plan, "x")
    assert clause == (
        "(x)\nunless on (cluster, namespace) (max by (cluster, namespace) "
        '(kube_deployment_spec_replicas{deployment="svc",namespace="ns"}) == 0)'
    )
    grace = replicas.unless_scaled_to_zero(plan, "x", plan.startup_grace_ms)
    assert (
        'min_over_time(kube_deployment_spec_replicas{deployment="svc",namespace="ns"}[9m45s])'
        in grace
    )
    sts = plan_of(_spec(deployment={"name": "svc", "container": "server", "kind": "StatefulSet"}))
    assert 'kube_statefulset_replicas{namespace="ns",statefulset="svc"}' in replicas.scaled_to_zero(
        sts
    )


def test_every_alert_on_targets_replicas_and_guards_applies_the_clause() -> None:
    plan = plan_of(_spec({"min": 0, "max": 4}, KEDA))
    rules = [r for g in rule_file(plan)["groups"] for r in g["rules"] if "alert" in r]
    clause = replicas.scaled_to_zero(plan)
    grace = replicas.starting_from_zero(plan)
    by_name: dict[str, list[str]] = {}
    for r in rules:
        by_name.setdefault(r["alert"], []).append(r["expr"])
    assert all(grace in e for e in by_name[naming.ALERT_TARGET_DOWN])
    assert all(grace in e for e in by_name[naming.ALERT_REPLICAS_UNAVAILABLE])
    assert all(clause in e for e in by_name[naming.ALERT_CRASH_LOOP])
    assert all(clause in e for e in by_name[naming.ALERT_SIGNAL_MISSING])
    assert all(clause in e for e in by_name[naming.ALERT_COLD_START])
    # A min of 0: no count to hold the targets against without kube-state-metrics.
    assert not any("absent(up" in e for e in by_name[naming.ALERT_TARGET_DOWN])
    assert all("(0 - count" not in e for e in by_name[naming.ALERT_REPLICAS_UNAVAILABLE])
    assert "absent(up" in "".join(target_down.rules(plan_of(_spec(1)))[1]["expr"])


def test_the_desired_count_is_guarded_only_where_zero_is_allowed() -> None:
    zero = {i.signal: i for i in signal_inputs(plan_of(_spec({"min": 0, "max": 4}, KEDA)))}
    guard = zero["desiredReplicas"]
    assert guard.metric == "kube_deployment_spec_replicas"
    assert set(guard.readers) == {
        naming.ALERT_TARGET_DOWN,
        naming.ALERT_REPLICAS_UNAVAILABLE,
        naming.ALERT_COLD_START,
    }
    assert "Deployment/svc" in guard.remedy and "scaled to zero" in guard.remedy
    assert "desiredReplicas" not in {i.signal for i in signal_inputs(plan_of(_spec(2)))}
    unguarded = {u.source.metric for u in unguarded_reads(plan_of(_spec(activator=KNATIVE)))}
    assert set(naming.ACTIVATOR_METRICS["knative"]) <= unguarded


@pytest.mark.parametrize("spec", list(PLANS), ids=list(PLANS))
def test_every_series_read_is_guarded_or_known_unguarded(spec: str) -> None:
    """The desired count, the activator's gauges and the grace's range read included."""
    every_series_guarded(plan_of(PLANS[spec]))


def test_the_cold_start_panel_reads_the_activator_desired_and_up() -> None:
    assert cold_start.panels(plan_of(_spec())) == []
    (panel,) = cold_start.panels(plan_of(_spec(activator=KEDA)))
    exprs = " ".join(q.expr for q in panel.queries)
    for series in (
        naming.KEDA_INTERCEPTOR_CONCURRENCY,
        naming.KEDA_INTERCEPTOR_PENDING,
        "kube_deployment_spec_replicas",
        "up{",
    ):
        assert series in exprs, series
    assert panel.runbook[0] == naming.ALERT_COLD_START


# --- the generated cases, in both promtool lines ---------------------------------------------

EXPECTED = {
    "ModelTargetDown: scaled to zero (desired 0), no target and no up series at all, stays quiet": "quiet",
    "ModelTargetDown: a start from zero with no target past the startup grace": "fires",
    "ModelTargetDown: a start from zero whose target stays down past the startup grace": "fires",
    "ModelTargetDown: a scale-down to zero (desired 0), its last target down": "quiet",
    "ModelTargetDown: targets up stay quiet": "quiet",
    "ModelReplicasUnavailable: scaled to zero (desired 0), no series of the model at all, stays quiet": "quiet",
    "ModelReplicasUnavailable: a start from zero with no replica available past the startup grace": "fires",
    "ModelReplicasUnavailable: a scale-down to zero": "quiet",
    "ModelContainerCrashLooping: 3 restart(s) of a pod then scaled to zero (desired 0) stays quiet": "quiet",
    "ModelSignalMissing: scaled to zero (desired 0), no series of the model at all, stays quiet": "quiet",
    "ModelSignalMissing: a scale-down to zero (desired 0), its pod still up while its inputs are gone, stays quiet": "quiet",
    "ModelColdStartSlow: requests held by the activator while scaled to zero (desired 0) page": "fires",
    "ModelColdStartSlow: requests held while a start from zero": "fires",
    "ModelColdStartSlow: requests held while the workload is desired at 0 replicas, its last pod still up": "fires",
    "ModelColdStartSlow: requests in flight through the activator while a pod serves stay quiet": "quiet",
    "ModelColdStartSlow: scaled to zero without requests stays quiet": "quiet",
}


def _named(groups: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    return [g for g in groups if g["name"].startswith(prefix)]


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("spec", list(PLANS), ids=list(PLANS))
def test_generated_cases_fire_and_stay_quiet_as_designed(
    tmp_path: Path, line: str, spec: str
) -> None:
    plan = plan_of(PLANS[spec])
    groups = _cases(plan)
    for prefix, outcome in EXPECTED.items():
        if prefix.startswith(naming.ALERT_COLD_START) and plan.activator is None:
            continue
        found = _named(groups, prefix)
        assert found, prefix
        assert {_outcome(g) for g in found} == {outcome}, prefix
    result = promtool_rules(line, tmp_path, rule_file(plan), groups)
    assert result.startswith("PASS"), result


def test_a_start_within_the_grace_is_generated_where_the_grace_outlasts_for() -> None:
    names = [g["name"] for g in target_down.cases(plan_of(PLANS["range from 0, KEDA"]))]
    assert any("whose pod is up within the startup grace" in n for n in names), names
    names = [g["name"] for g in cold_start.cases(plan_of(PLANS["range from 0, KEDA"]))]
    assert any("a cold start whose pod is up within 10m stays quiet" in n for n in names)
    assert any("older release's name (interceptor_pending_request_count)" in n for n in names)


# --- broken rules the cases catch -------------------------------------------------------------


def _no_clause(plan: ServicePlan, expr: str, within_ms: int = 0) -> str:
    return expr


def _no_grace(plan: ServicePlan, expr: str, within_ms: int = 0) -> str:
    return f"({expr})\nunless on ({', '.join(replicas.keys(plan))}) {replicas.scaled_to_zero(plan)}"


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize(
    ("broken", "caught"),
    [
        pytest.param(
            _no_clause,
            {
                "ModelTargetDown: a scale-down to zero",
                "ModelSignalMissing: a scale-down to zero",
                "ModelContainerCrashLooping: 3 restart(s) of a pod then scaled to zero",
            },
            id="zero desired not read",
        ),
        pytest.param(
            _no_grace,
            {
                "ModelTargetDown: a start from zero whose pod is up within the startup grace",
                "ModelTargetDown: a start from zero whose target stays down past the startup grace",
                "ModelReplicasUnavailable: a start from zero with no replica available past",
            },
            id="no startup grace",
        ),
    ],
)
def test_the_cases_catch_rules_that_ignore_the_desired_count(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    line: str,
    broken: Any,
    caught: set[str],
) -> None:
    plan = plan_of(PLANS["range from 0, KEDA"])
    groups = _cases(plan)  # expectations from the correct rules
    monkeypatch.setattr(replicas, "unless_scaled_to_zero", broken)
    result = promtool_rules(line, tmp_path, rule_file(plan), groups)
    assert result.startswith("FAIL"), result
    failed = _failed_groups(result)
    for prefix in caught:
        assert any(name.startswith(prefix) for name in failed), (prefix, failed)


@pytest.mark.parametrize("line", LINES)
def test_the_cases_catch_a_cold_start_rule_blind_to_zero_desired(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str
) -> None:
    plan = plan_of(PLANS["range from 0, KEDA"])
    groups = cold_start.cases(plan)
    # "Serving" as any target up, whatever the desired count.
    monkeypatch.setattr(replicas, "serving", lambda p: 'group (up{job="svc",namespace="ns"} == 1)')
    result = promtool_rules(line, tmp_path, rule_file(plan), groups)
    assert result.startswith("FAIL"), result
    assert any("desired at 0 replicas, its last pod still up" in n for n in _failed_groups(result))


# --- the clause on another alert's series ------------------------------------------------------


@pytest.mark.parametrize("line", LINES)
def test_the_clause_silences_another_alerts_recorded_series_only_at_zero(
    tmp_path: Path, line: str
) -> None:
    """How the lead applies it to latency or SLO burn: a recorded series of the service
    (namespace, cluster, service, slo) is kept while desired ≥ 1, dropped while 0, per
    cluster."""
    plan = plan_of(_spec(prometheus={"clusterLabel": "cluster"}))
    burn = 'slo:burn:ratio{namespace="ns",service="svc"} > 1'
    expr = replicas.unless_scaled_to_zero(plan, burn)
    series = [
        {
            "series": f'slo:burn:ratio{{cluster="{c}",namespace="ns",service="svc",slo="a"}}',
            "values": "5+0x20",
        }
        for c in ("a", "b")
    ] + [
        {
            "series": 'kube_deployment_spec_replicas{cluster="a",deployment="svc",namespace="ns"}',
            "values": "1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
        },
        {
            "series": 'kube_deployment_spec_replicas{cluster="b",deployment="svc",namespace="ns"}',
            "values": "1+0x20",
        },
    ]

    def kept(*clusters: str) -> list[dict[str, Any]]:
        return [
            {
                "labels": f'slo:burn:ratio{{cluster="{c}",namespace="ns",service="svc",slo="a"}}',
                "value": 5,
            }
            for c in clusters
        ]

    group = {
        "name": "the clause",
        "interval": "1m",
        "input_series": series,
        "promql_expr_test": [
            {"expr": expr, "eval_time": "3m", "exp_samples": kept("a", "b")},
            {"expr": expr, "eval_time": "10m", "exp_samples": kept("b")},
        ],
    }
    result = promtool_rules(line, tmp_path, {"groups": []}, [group])
    assert result.startswith("PASS"), result
