"""SLO increments across holes in the samples (docs/spec.md, "Gaps in the samples"): events
served while no sample was taken (failed scrapes, a Prometheus restart, a remote-write backlog
replayed late) are booked when samples resume, however long the hole up to
``spec.prometheus.maxGap``; a healthy service with holes stays silent. Proved on promtool 3 and
2.53 with production-shaped series (stale markers on failed scrapes, ``up`` 0 or absent)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import toolchain
from tests.factories import write_spec
from tests.helpers_promtool import render_to

SPEC: dict[str, Any] = {
    "apiVersion": "obsgen/v1alpha1",
    "kind": "ModelService",
    "metadata": {"name": "gappy", "team": "ml-platform"},
    "spec": {
        "server": "openai-http",
        "selector": {"namespace": "llm", "job": "gappy"},
        "prometheus": {"version": "compat", "scrapeInterval": "15s"},
        "metrics": {
            "requests": {"name": "http_requests_total", "errorMatchers": {"status": "5.."}}
        },
        "slos": [{"name": "availability", "objective": 99, "window": "30d"}],
        "gpu": {"exporter": "none"},
        "deployment": {"name": "gappy", "container": "gappy", "replicas": 1, "memoryLimit": "8Gi"},
    },
}
TARGET = 'job="gappy",namespace="llm",instance="10.0.0.1:8000"'
HEALTHY_MIN = 60  # minutes of healthy traffic before the hole
OK_PER_MIN, BAD_IN_HOLE_PER_MIN = 600, 2000


def _rules(tmp: Path, max_gap: str | None) -> Path:
    data = yaml.safe_load(yaml.safe_dump(SPEC))
    if max_gap is not None:
        data["spec"]["prometheus"]["maxGap"] = max_gap
    files = render_to(write_spec(tmp, data, "gappy.yaml"), tmp / "out")
    return files["rules/gappy.rules.yaml"]


def _series(hole: int, failing: bool, prometheus_down: bool) -> list[dict[str, str]]:
    """One target, 1m samples: healthy for HEALTHY_MIN minutes, then ``hole`` minutes without
    samples (failed scrapes: up 0 and the counters' stale markers; a Prometheus that was down:
    nothing at all) during which requests go on (``failing``: a burst of failures), then 20
    healthy minutes. Counters keep counting through the hole, as the server does."""
    after = 20
    gap = ["_"] * hole if prometheus_down else ["stale"] + ["_"] * (hole - 1)
    up_gap = ["_"] * hole if prometheus_down else ["0"] * hole
    ok = [str(OK_PER_MIN * t) for t in range(HEALTHY_MIN)]
    bad = ["0"] * HEALTHY_MIN
    held_ok = OK_PER_MIN * HEALTHY_MIN + (0 if failing else OK_PER_MIN * hole)
    held_bad = BAD_IN_HOLE_PER_MIN * hole if failing else 0
    ok += gap + [str(held_ok + OK_PER_MIN * t) for t in range(after)]
    bad += gap + [str(held_bad)] * after
    up = ["1"] * HEALTHY_MIN + up_gap + ["1"] * after
    return [
        {"series": f"up{{{TARGET}}}", "values": " ".join(up)},
        {"series": f'http_requests_total{{{TARGET},status="200"}}', "values": " ".join(ok)},
        {"series": f'http_requests_total{{{TARGET},status="500"}}', "values": " ".join(bad)},
    ]


def _run(tool: str, rules: Path, series: list[dict[str, str]], tests: list[dict[str, Any]]) -> str:
    doc = {
        "rule_files": [rules.name],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": tests}],
    }
    path = rules.parent / "gap.test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    out = subprocess.run(
        [tool, "test", "rules", path.name],
        cwd=rules.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    return "" if out.returncode == 0 else out.stdout + out.stderr


def _bad_in_window(at: str, value: float) -> dict[str, Any]:
    return {
        "expr": 'sum(sum_over_time(service:slo_outcomes:increase1m{events="bad",service="gappy"}[59m30s]))',
        "eval_time": at,
        "exp_samples": [{"labels": "{}", "value": value}],
    }


def _paging(at: str, firing: bool) -> dict[str, Any]:
    expr = 'count(ALERTS{alertname="ErrorBudgetBurn",alertstate="firing",long_window="1h"})'
    return {
        "expr": expr,
        "eval_time": at,
        "exp_samples": [{"labels": "{}", "value": 1}] if firing else [],
    }


MAJORS = ["prometheus3", "prometheus2"]
HOLES = [
    pytest.param(3, False, id="3m hole, failed scrapes (within the lookback)"),
    pytest.param(6, False, id="6m hole, failed scrapes (past the lookback)"),
    pytest.param(7, True, id="7m hole, Prometheus down"),
    pytest.param(30, False, id="30m hole, failed scrapes (longer than the short window)"),
    pytest.param(55, True, id="55m hole, a remote-write backlog"),
]


@pytest.mark.parametrize("major", MAJORS)
@pytest.mark.parametrize(("hole", "down"), HOLES)
def test_failures_inside_a_hole_are_booked_when_samples_resume_and_page(
    major: str, hole: int, down: bool, tmp_path: Path
) -> None:
    rules = _rules(tmp_path, None)
    resumed = HEALTHY_MIN + hole
    booked = f"{resumed + 2}m"
    failures = _run(
        toolchain.binary(major, "promtool"),
        rules,
        _series(hole, failing=True, prometheus_down=down),
        # Nothing booked during the hole; every failure of it at the first evaluation after.
        [
            _bad_in_window(f"{resumed - 1}m", 0) if hole > 1 else _paging("1m", False),
            _bad_in_window(booked, BAD_IN_HOLE_PER_MIN * hole),
            _paging(booked, True),
        ],
    )
    assert not failures, failures


@pytest.mark.parametrize("major", MAJORS)
@pytest.mark.parametrize(("hole", "down"), HOLES)
def test_a_healthy_service_with_a_hole_stays_silent(
    major: str, hole: int, down: bool, tmp_path: Path
) -> None:
    rules = _rules(tmp_path, None)
    end = f"{HEALTHY_MIN + hole + 19}m"
    total = f'sum(sum_over_time(service:slo_outcomes:increase1m{{events="total",service="gappy"}}[{HEALTHY_MIN + hole + 19}m]))'
    failures = _run(
        toolchain.binary(major, "promtool"),
        rules,
        _series(hole, failing=False, prometheus_down=down),
        [
            _paging(f"{HEALTHY_MIN + hole + 2}m", False),
            _paging(end, False),
            _bad_in_window(end, 0),
            # Every request served, the hole's included, counted once (the first minute's
            # 600 were there before the first evaluation could count them).
            {
                "expr": total,
                "eval_time": end,
                "exp_samples": [{"labels": "{}", "value": OK_PER_MIN * (HEALTHY_MIN + hole + 19)}],
            },
        ],
    )
    assert not failures, failures


def test_without_the_bridge_a_hole_past_the_lookback_loses_its_failures(tmp_path: Path) -> None:
    """The reported fault, kept as a regression of the model: ``maxGap: 0s`` (the previous
    increments, ``x offset 1m``) books nothing of a 7m hole's failures, and nothing pages."""
    rules = _rules(tmp_path, "0s")
    outcomes = [
        r["expr"]
        for g in yaml.safe_load(rules.read_text())["groups"]
        for r in g["rules"]
        if r.get("record", "").startswith("service:slo_outcomes:")
    ]
    assert outcomes and not any("last_over_time" in e for e in outcomes)
    failures = _run(
        toolchain.binary("prometheus3", "promtool"),
        rules,
        _series(7, failing=True, prometheus_down=False),
        [_bad_in_window(f"{HEALTHY_MIN + 9}m", 0), _paging(f"{HEALTHY_MIN + 9}m", False)],
    )
    assert not failures, failures


@pytest.mark.parametrize("bad", ["5m", "3m", "2d", "-1h"])
def test_a_max_gap_outside_its_range_is_refused_with_its_field(
    bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator.cli import main

    data = yaml.safe_load(yaml.safe_dump(SPEC))
    data["spec"]["prometheus"]["maxGap"] = bad
    code = main(["check", str(write_spec(tmp_path, data, "gappy.yaml"))])
    err = capsys.readouterr().err
    assert code == 2 and "spec.prometheus.maxGap" in err and "Traceback" not in err, err
