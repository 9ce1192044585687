"""The installed-bundle checks of ``obsgen verify`` on answers shaped as Prometheus's (the real
servers are in tests/e2e/test_verify.py): what counts as the same rule —
:func:`generator.verify_bundle.normalised_expr` equates the spellings Prometheus prints back
(its parser's String(), seen on 2.42) and nothing else, :func:`rule_digest` changes with any
rule part — rule health, duplicate and stale groups, retention, the cluster label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import naming
from generator.builders.rulefile import rule_groups
from generator.cli import main
from generator.commands.check import retention_warnings
from generator.errors import Diagnostic, ObsgenError
from generator.plan import ServicePlan, resolve
from generator.spec import parse_spec
from generator.units import parse_duration_ms
from generator.verify import Status
from generator.verify_bundle import (
    _difference,
    _rendered_rule,
    _served_rule,
    check_external_labels,
    check_retention,
    check_rules,
    normalised_expr,
    rule_digest,
)
from tests.factories import good_spec


@pytest.mark.parametrize(
    ("written", "printed"),
    [
        ("sum(rate(x[30d]))", "sum(rate(x[4w2d]))"),  # model.Duration.String()
        ("a + 68719476736", "a + 6.8719476736e+10"),  # Go's %v of a float
        ('x{b="1", a="2"}', 'x{a="2",b="1"}'),  # selectors print matchers sorted
        ("sum by (le)\n  (rate(x[5m]))", "sum by (le) (rate(x[5m]))"),
        ("x[300s] offset 1h", "x[5m] offset 60m"),
        ("x{a=~'5..'}", 'x{a=~"5.."}'),
        ('x{a=~"\\\\d"}', "x{a=~`\\d`}"),
    ],
)
def test_spellings_prometheus_treats_alike_normalise_alike(written: str, printed: str) -> None:
    assert normalised_expr(written) == normalised_expr(printed)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("x > 0.05", "x > 0.5"),
        ("rate(x[5m])", "rate(x[10m])"),
        ('x{a="1"}', 'x{a="2"}'),
        ('x{a="1"}', 'x{a!="1"}'),
        ("sum by (a) (x)", "sum by (b) (x)"),
        ("a_1", "a_2"),
        ('x{a="b c"}', 'x{a="bc"}'),
    ],
)
def test_different_expressions_stay_different(one: str, other: str) -> None:
    assert normalised_expr(one) != normalised_expr(other)


RENDERED = {
    "alert": "A",
    "expr": "x > 1",
    "for": "5m",
    "labels": {"severity": "critical"},
    "annotations": {"summary": "s"},
}
SERVED = {
    "type": "alerting",
    "name": "A",
    "query": "x > 1",
    "duration": 300,
    "labels": {"severity": "critical"},
    "annotations": {"summary": "s"},
}


def test_a_rule_as_rendered_and_as_served_has_one_digest() -> None:
    assert rule_digest([_rendered_rule(RENDERED)]) == rule_digest([_served_rule(SERVED)])


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"duration": 600}, "for 10m loaded, 5m rendered"),
        ({"labels": {"severity": "warning"}}, "labels severity differ"),
        ({"annotations": {}}, "annotations summary differ"),
        ({"query": "x > 2"}, "expression differs"),
        ({"name": "B"}, "name differs"),
    ],
)
def test_any_changed_part_changes_the_digest_and_is_named(
    change: dict[str, object], named: str
) -> None:
    mine, theirs = [_rendered_rule(RENDERED)], [_served_rule({**SERVED, **change})]
    assert rule_digest(mine) != rule_digest(theirs)
    assert named in _difference(mine, theirs)


class _Stub:
    """Answers ``get`` from a mapping of API paths, as :class:`PrometheusAPI` would."""

    def __init__(self, answers: dict[str, Any], up: list[Any] | None = None) -> None:
        self.answers = answers
        self.up = up or []

    def get(self, path: str, **_: str) -> Any:
        if path not in self.answers:
            raise ObsgenError([Diagnostic("stub", "", f"{path} answered HTTP 404")])
        return self.answers[path]

    def query(self, _: str) -> list[Any]:
        return self.up


def _plan(**spec: Any) -> ServicePlan:
    data = good_spec()
    data["spec"].update(spec)
    return resolve(parse_spec(data, "specs/x.yaml"), "specs/x.yaml")


def _served_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """The plan's groups as /api/v1/rules lists them (every rule evaluated, healthy)."""
    groups = []
    for group in rule_groups(plan):
        rules = []
        for rule in group["rules"]:
            kind = "alert" if "alert" in rule else "record"
            served = {
                "type": "alerting" if kind == "alert" else "recording",
                "name": rule[kind],
                "query": rule["expr"],
                "labels": rule.get("labels", {}),
                "health": "ok",
            }
            if kind == "alert":
                served["duration"] = parse_duration_ms(rule.get("for", "0s"), zero=True) / 1000
                served["annotations"] = rule.get("annotations", {})
            rules.append(served)
        interval = parse_duration_ms(group["interval"]) / 1000 if "interval" in group else 60
        groups.append(
            {"name": group["name"], "file": "a.yaml", "interval": interval, "rules": rules}
        )
    return groups


def _statuses(rows: list[Any]) -> dict[str, str]:
    return {row.subject: f"{row.status.value}: {row.detail}" for row in rows}


def test_rule_errors_duplicates_and_stale_groups_fail() -> None:
    plan = _plan()
    groups = _served_groups(plan)
    groups[0]["rules"][0].update(health="err", lastError="many-to-many matching not allowed")
    groups.append({**groups[1], "file": "b.yaml"})
    stale = naming.group_name(plan.name, "slo.gone")
    groups.append({"name": stale, "file": "a.yaml", "interval": 60, "rules": []})
    found = _statuses(check_rules(plan, _Stub({"rules": {"groups": groups}})))  # type: ignore[arg-type]
    assert found[groups[0]["name"]].startswith("wrong: 1 rules fail to evaluate")
    assert "many-to-many" in found[groups[0]["name"]]
    assert found[groups[1]["name"]].startswith("wrong: loaded 2 times (a.yaml, b.yaml)")
    assert found[stale].startswith("wrong: loaded but no longer rendered")
    assert all(
        v.startswith("ok: ")
        for k, v in found.items()
        if k not in (groups[0]["name"], groups[1]["name"], stale)
    )


def test_a_server_without_a_rules_api_is_a_warning() -> None:
    (row,) = check_rules(_plan(), _Stub({}))  # type: ignore[arg-type]
    assert row.status is Status.WARNING and "cannot list the loaded rules" in row.detail


@pytest.mark.parametrize(
    ("answers", "status", "detail"),
    [
        ({"status/runtimeinfo": {"storageRetention": "31d"}}, Status.OK, "server keeps 31d"),
        ({"status/runtimeinfo": {"storageRetention": "10d or 50GiB"}}, Status.WRONG, "keeps 10d"),
        ({"status/runtimeinfo": {"storageRetention": "50GiB"}}, Status.WARNING, "by size only"),
        ({"status/flags": {"storage.tsdb.retention.time": "10d"}}, Status.WRONG, "keeps 10d"),
        ({}, Status.WARNING, "does not say its retention"),
    ],
)
def test_retention_against_the_longest_slo_window(
    answers: dict[str, Any], status: Status, detail: str
) -> None:
    (row,) = check_retention(_plan(), _Stub(answers))  # type: ignore[arg-type]
    assert row.status is status and detail in row.detail, row
    assert "window 30d" in row.subject


def test_the_cluster_label_must_come_from_the_server_or_the_targets() -> None:
    plan = _plan(prometheus={"clusterLabel": "cluster"})
    (row,) = check_external_labels(plan, {}, _Stub({}))  # type: ignore[arg-type]
    assert row.status is Status.WRONG and "global.external_labels.cluster" in row.detail
    (row,) = check_external_labels(plan, {"cluster": "eu1"}, _Stub({}))  # type: ignore[arg-type]
    assert row.status is Status.OK
    (row,) = check_external_labels(_plan(), {"cluster": "eu1"}, _Stub({}))  # type: ignore[arg-type]
    assert row.status is Status.WARNING and "clusterLabel: cluster" in row.detail
    assert check_external_labels(_plan(), {"replica": "a"}, _Stub({})) == []  # type: ignore[arg-type]


# --- `obsgen check`: retention it cannot see --------------------------------------------------


def test_check_warns_when_an_slo_window_may_exceed_an_undeclared_retention(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    data = good_spec()
    data["spec"]["slos"] = [{"name": "availability", "objective": 99.9, "window": "30d"}]
    (tmp_path / "svc.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["check", "svc.yaml"]) == 0
    err = capsys.readouterr().err
    assert "svc.yaml: spec.slos[0].window: warning: SLO 'availability' covers up to 30d" in err
    assert "spec.prometheus.retention is not declared" in err and "obsgen verify" in err

    data["spec"]["prometheus"] = {"retention": "30d"}  # declared and long enough: silent
    (tmp_path / "svc.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["check", "svc.yaml"]) == 0
    assert "retention" not in capsys.readouterr().err

    data["spec"]["prometheus"] = {"retention": "10d"}  # declared and too short: refused
    (tmp_path / "svc.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["check", "svc.yaml"]) == 2
    assert "longer than spec.prometheus.retention 10d" in capsys.readouterr().err


def test_check_is_silent_for_windows_the_default_retention_keeps() -> None:
    data = good_spec()
    data["spec"]["slos"] = [{"name": "availability", "objective": 99.9, "window": "7d"}]
    plan = resolve(parse_spec(data, "svc.yaml"), "svc.yaml")
    assert retention_warnings(plan) == []
