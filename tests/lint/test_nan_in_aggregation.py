"""`nan-in-aggregation`: an aggregation over a division whose divisor can be 0 (pint's
`promql/nan`). promtool shows the average is NaN while one pod is idle, and the fix is not."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.helpers_promtool import run_promtool

from .helpers import LintFn, alert, needs_promtool, record, rule_file

CHECK = "nan-in-aggregation"
MEAN = "rate(x_seconds_sum[5m]) / rate(x_seconds_count[5m])"

CASES = [
    pytest.param(f"avg({MEAN}) > 1", True, id="average of per-pod means"),
    pytest.param(
        "sum by (model_name) (rate(vllm:e2e_request_latency_seconds_sum[5m]) "
        "/ rate(vllm:e2e_request_latency_seconds_count[5m])) > 1",
        True,
        id="vllm mean summed by model",
    ),
    pytest.param("stddev(rate(a_total[5m]) % rate(b_total[5m])) > 1", True, id="modulo"),
    pytest.param(
        "sum(rate(errors_total[5m]) / (rate(requests_total[5m]) >= 0)) > 1",
        True,
        id="a filter that keeps 0",
    ),
    pytest.param("avg(x / clamp_min(y, 0)) > 1", True, id="clamped to 0 is still 0"),
    pytest.param(
        "avg(rate(x_seconds_sum[5m]) / (rate(x_seconds_count[5m]) > 0)) > 1", False, id="filtered"
    ),
    pytest.param("avg(x / clamp_min(y, 1e-9)) > 1", False, id="clamped away from 0"),
    pytest.param(f"sum(({MEAN}) > 0) > 1", False, id="the result filtered: NaN drops out"),
    pytest.param(f"sum(({MEAN}) != 0) > 1", True, id="NaN != 0 holds: NaN stays"),
    pytest.param("avg(x / (y != 0)) > 1", False, id="not equal 0"),
    pytest.param("sum(x / 60) > 1", False, id="a constant"),
    pytest.param(
        "sum(rate(x_seconds_sum[5m])) / sum(rate(x_seconds_count[5m])) > 1",
        False,
        id="aggregate first, then divide",
    ),
    pytest.param(f"max({MEAN}) > 1", False, id="max skips NaN"),
    pytest.param(
        "sum(sum by (pod) (rate(a_total[5m])) / clamp_min(sum by (pod) (rate(b_total[5m])), 1))"
        " > 1",
        False,
        id="nested aggregations, safe divisor",
    ),
]


@pytest.mark.parametrize(("expr", "reported"), CASES)
def test_nan_in_aggregation(lint: LintFn, expr: str, reported: bool) -> None:
    report = lint(rule_file(alert(expr)))
    hits = [f for f in report.findings if f.check == CHECK]
    assert bool(hits) is reported, [f"{f.check}: {f.message}" for f in report.findings]


def test_a_recorded_division_is_followed(lint: LintFn) -> None:
    report = lint(
        rule_file(
            record("pod:x_seconds:mean5m", MEAN),
            record(
                "pod:x_seconds:safe_mean5m",
                f"{MEAN.split(' / ')[0]} / clamp_min(rate(x_seconds_count[5m]), 1e-9)",
            ),
            alert("avg(pod:x_seconds:mean5m) > 1", name="Bad"),
            alert("avg(pod:x_seconds:safe_mean5m) > 1", name="Good"),
        )
    )
    assert [f.rule for f in report.findings if f.check == CHECK] == ["Bad"]


def test_a_division_is_followed_through_chains_of_records_and_cycles_end(lint: LintFn) -> None:
    """A division three records down is found; records reading each other in a cycle with no
    division are safe (and end); a deep lattice of records, each level written twice and
    reading both of the level below (2**24 paths from the top), is judged by its one divisor
    at the bottom, in a moment: a path-by-path search would never end."""
    depth = 24
    lattice = [record("level:0", MEAN)]
    for level in range(1, depth + 1):
        reads = f"level:{level - 1} + on () level:{level - 1}"
        lattice += [record(f"level:{level}", reads), record(f"level:{level}", f"2 * ({reads})")]
    report = lint(
        rule_file(
            record("chain:a", MEAN),
            record("chain:b", "chain:a * 2"),
            record("chain:c", "chain:b + on () chain:b"),
            record("loop:a", "loop:b * 2"),
            record("loop:b", "loop:a + on () clamp_min(rate(y_total[5m]), 1)"),
            *lattice,
            alert("avg(chain:c) > 1", name="Chain"),
            alert("avg(loop:a) > 1", name="Loop"),
            alert(f"avg(level:{depth}) > 1", name="Lattice"),
        )
    )
    assert sorted(f.rule for f in report.findings if f.check == CHECK) == ["Chain", "Lattice"]


def test_promtool_shows_one_idle_pod_makes_the_average_nan(tmp_path: Path, lint: LintFn) -> None:
    needs_promtool()
    bad = f"avg({MEAN})"
    report = lint(rule_file(record("x_seconds:mean:avg", bad)))
    hit = next(f for f in report.findings if f.check == CHECK)
    assert hit.fix is not None and hit.fix.expr is not None
    rules = tmp_path / "empty.rules.yaml"
    rules.write_text("groups: []\n")
    series = [
        # pod a: 60 requests a minute of 0.5 s each; pod b: idle.
        {"series": 'x_seconds_sum{pod="a"}', "values": "0+30x60"},
        {"series": 'x_seconds_count{pod="a"}', "values": "0+60x60"},
        {"series": 'x_seconds_sum{pod="b"}', "values": "0+0x60"},
        {"series": 'x_seconds_count{pod="b"}', "values": "0+0x60"},
    ]
    tests = [
        # one sample, which is not equal to itself: NaN (promtool never matches NaN samples)
        {
            "expr": f"count({bad})",
            "eval_time": "30m",
            "exp_samples": [{"labels": "{}", "value": 1}],
        },
        {
            "expr": f"absent({bad} == {bad})",
            "eval_time": "30m",
            "exp_samples": [{"labels": "{}", "value": 1}],
        },
        {"expr": hit.fix.expr, "eval_time": "30m", "exp_samples": [{"labels": "{}", "value": 0.5}]},
    ]
    doc = {
        "rule_files": [rules.name],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": tests}],
    }
    path = tmp_path / "nan.test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    result = run_promtool("test", "rules", path, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
