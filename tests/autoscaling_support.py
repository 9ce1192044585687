"""What the KEDA and HPA autoscaling tests share: ``check`` on a spec, the refusal table's test,
and the promtool cases of the page at maxReplicas (quiet while the autoscaler still holds each
replica, firing past the page's threshold, the autoscaler's query reading the total)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator import autoscaling, naming
from generator.builders.rulefile import alert_rules
from generator.cli import main
from generator.parts.pods import example_pods
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    after_for,
    agg_of,
    expected_alert,
    family_case,
    labels_of,
)
from generator.plan import ServicePlan
from generator.promql import go_float
from generator.signals.healthy import healthy
from generator.units import format_duration_ms
from tests.factories import good_spec, set_path, write_spec

LINES = ("prometheus3", "prometheus2")
ADDRESS = "http://prometheus-operated.monitoring.svc:9090"


def check(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    data: dict[str, Any],
) -> tuple[int, str]:
    """``obsgen check specs/x.yaml`` on ``data``: (exit code, stderr)."""
    write_spec(tmp_path / "specs", data)
    monkeypatch.chdir(tmp_path)
    code = main(["check", "specs/x.yaml"])
    return code, capsys.readouterr().err


def good(**auto: Any) -> dict[str, Any]:
    """The committed o1-preview spec (queue alert max 100 for 5m), autoscaled 1–4."""
    data = set_path(good_spec(), "spec.deployment.replicas", {"min": 1, "max": 4})
    return set_path(data, "spec.autoscaling", {"serverAddress": ADDRESS, **auto})


def refusal_test(refusals: list[Any]) -> Callable[..., None]:
    """The test of a refusal table (``pytest.param(spec data, message, id=…)``): ``check``
    exits 2 naming ``specs/x.yaml`` and the message, with no traceback."""

    @pytest.mark.parametrize(("data", "message"), refusals)
    def test_check_refuses_naming_file_and_field(
        data: dict[str, Any],
        message: str,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        code, err = check(tmp_path, monkeypatch, capsys, data)
        assert code == 2, err
        assert f"specs/x.yaml: {message}" in err, err
        assert "Traceback" not in err

    return test_check_refuses_naming_file_and_field


def pods(plan: ServicePlan) -> list[str]:
    """The example pods of ``plan`` at maxReplicas."""
    return [pod for pod, _ in example_pods(plan, plan.replicas_max)]


def per_replica_series(plan: ServicePlan, key: str, per_replica: float) -> Any:
    """A healthy service at maxReplicas, each replica's gauge of ``key`` at ``per_replica``
    (the alert's unit; Triton's used / total KV blocks written over 1000 total blocks)."""
    series = healthy(plan, [Klass(BASE_PER_MIN)])
    gauge = plan.queue_depth if key == "queue_depth" else plan.kv_cache_usage
    assert gauge is not None
    raw = per_replica / gauge.scale
    for pod in pods(plan):
        if gauge.denominator is not None:
            raw_used = raw * 1000
            series.gauge(gauge.name, labels_of(plan, gauge.denominator, pod=pod), "1000+0x60")
            series.gauge(
                gauge.name, labels_of(plan, gauge.matchers, pod=pod), f"{go_float(raw_used)}+0x60"
            )
        else:
            series.gauge(
                gauge.name, labels_of(plan, gauge.matchers, pod=pod), f"{go_float(raw)}+0x60"
            )
    return series


def max_replica_cases(
    plan: ServicePlan, query_of: Callable[[str], str], where: str = ""
) -> list[dict[str, Any]]:
    """For each autoscaled signal with an alert (``queue_depth``, ``kv_cache``): quiet at
    maxReplicas with each replica at the most the autoscaler holds without scaling (target ×
    1.1), where ``query_of(key)`` (the autoscaler's query) reads the total it divides by the
    target; firing at maxReplicas past the page's threshold. ``where`` marks the case names
    (`` (HPA)``)."""
    auto = plan.autoscaling
    assert auto is not None
    rules = {r["alert"]: r for r in alert_rules(plan)}
    groups = []
    for key, target, alert_name in (
        ("queue_depth", auto.queue_per_replica, naming.ALERT_QUEUE_DEPTH),
        ("kv_cache", auto.kv_cache_per_replica, naming.ALERT_KV_CACHE),
    ):
        if target is None or key not in plan.alerts:
            continue
        query = query_of(key)
        at = after_for(plan, key)
        rule = rules[alert_name]
        gauge = plan.queue_depth if key == "queue_depth" else plan.kv_cache_usage
        assert gauge is not None
        held = target * (1 + autoscaling.HPA_TOLERANCE)
        group = family_case(
            plan,
            f"{alert_name} stays quiet at maxReplicas{where}, each replica at {go_float(held)}",
            per_replica_series(plan, key, held),
            alert_name,
            [],
            at,
        )
        # What the autoscaler reads: the total over maxReplicas replicas.
        group["promql_expr_test"] = [
            {
                "expr": query,
                "eval_time": format_duration_ms(at),
                "exp_samples": [{"labels": "{}", "value": held * plan.replicas_max}],
            }
        ]
        groups.append(group)
        limit = float(plan.alerts[key].params["max"])
        if key == "queue_depth":
            past = limit / plan.replicas_max * 1.25  # the queue's total at 1.25 × max
            labels = {**agg_of(plan, gauge.matchers), naming.SERVICE: plan.name}
            expected = [expected_alert(rule, labels, past * plan.replicas_max)]
        else:
            past = (limit + 1) / 2  # every replica's cache past max
            expected = [
                expected_alert(
                    rule,
                    {**agg_of(plan, gauge.matchers), naming.SERVICE: plan.name, "pod": pod},
                    past,
                )
                for pod in pods(plan)
            ]
        groups.append(
            family_case(
                plan,
                f"{alert_name} still fires at maxReplicas{where}, each replica at {go_float(past)}",
                per_replica_series(plan, key, past),
                alert_name,
                expected,
                at,
            )
        )
    return groups
