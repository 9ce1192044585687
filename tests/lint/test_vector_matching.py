"""`vector-matching`: both sides keep different labels or values (never matches), or the same
series (each pairs with itself: ``/`` is always 1).

Each mistake is checked with obsgen and proved with the real promtool: on data with 1 % errors
the "always 1" ratio evaluates to 1 and its fix to 0.01; on data where every request is slower
than 0.5 s the apdex-style ratio of two `le` buckets returns nothing, its fix returns 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.lint import LintConfig, lint_paths
from tests.helpers_promtool import run_promtool

from .helpers import LintFn, alert, needs_promtool, record, rule_file

ISSUE = 'rate(x_total{status=~"5.."}[5m]) / rate(x_total[5m]) > 0.05'

# (expression, reported, words the message must hold)
CASES = [
    pytest.param(ISSUE, True, "always 1", id="issue: subset over whole, one-to-one on status"),
    pytest.param(
        'sum by (job, code) (rate(http_requests_total{code=~"5.."}[5m])) '
        "/ sum by (job, code) (rate(http_requests_total[5m])) > 0.01",
        True,
        "always 1",
        id="both sides grouped by the filtered label",
    ),
    pytest.param(
        'sum(rate(http_requests_total{code="500"}[5m])) by (code) '
        "/ sum(rate(http_requests_total[5m])) by (code) > 0.01",
        True,
        "always 1",
        id="by written after the aggregation",
    ),
    pytest.param(
        'rate(node_cpu_seconds_total{mode="idle"}[5m]) / rate(node_cpu_seconds_total[5m]) < 0.1',
        True,
        "always 1",
        id="cpu idle fraction matched on mode",
    ),
    pytest.param(
        'increase(grpc_server_handled_total{grpc_code!="OK"}[1h]) '
        "/ increase(grpc_server_handled_total[1h]) > 0.5",
        True,
        "always 1",
        id="negative matcher, increase",
    ),
    pytest.param(
        'rate(vllm:request_success_total{finished_reason="abort"}[5m]) '
        "/ rate(vllm:request_success_total[5m]) > 0.1",
        True,
        "always 1",
        id="vllm finished_reason",
    ),
    pytest.param(
        'sum(rate(x_total{code=~"5.."}[5m])) by (code, job) '
        "/ sum(rate(x_total[5m])) by (job, code) > 0.1",
        True,
        "always 1",
        id="the same grouping written in another order",
    ),
    pytest.param(
        'rate(x_total{code=~"5.."}[5m]) / on (code, job) rate(x_total[5m]) > 0.1',
        True,
        "always 1",
        id="on () naming the filtered label",
    ),
    pytest.param(
        'rate(x_total{status=~"5.."}[5m]) > rate(x_total[5m])',
        True,
        "always empty",
        id="comparison of a series with itself",
    ),
    pytest.param(
        'rate(x_bucket{le="0.5"}[5m]) / rate(x_bucket[5m]) < 0.9',
        True,
        "ignoring (le)",
        id="a bucket over every bucket: always 1 per le",
    ),
    pytest.param(
        'rate(x_total{status="500"}[5m]) / rate(x_total{status="200"}[5m]) > 0.01',
        True,
        'only "500"',
        id="never: different values of the matched label",
    ),
    pytest.param(
        'sum by (le) (rate(x_bucket{le="0.5"}[5m])) '
        '/ sum by (le) (rate(x_bucket{le="+Inf"}[5m])) < 0.9',
        True,
        'only "+Inf"',
        id="never: apdex of two le buckets matched on le",
    ),
    pytest.param(
        'rate(x_bucket{le="0.5"}[5m]) / rate(x_count[5m]) < 0.9',
        True,
        "never do",
        id="never: a bucket over its _count, which has no le",
    ),
    pytest.param(
        'rate(x_total{code=~"500|503"}[5m]) / rate(x_total{code=~"200|204"}[5m]) > 0.01',
        True,
        'only "200" or "204"',
        id="never: regex alternatives that never meet",
    ),
    pytest.param(
        "sum by (cluster) (increase(requests_total[1h])) - sum by (cluster) "
        '(increase(requests_total{code=~"5.."}[1h]) or vector(0)) < 100',
        True,
        "narrower `or` branch",
        id="never when nothing failed: an or vector(0) fallback without cluster",
    ),
    pytest.param(
        '(sum by (pod) (rate(x_bucket{le="1"}[5m])) or vector(0)) '
        "/ sum by (pod) (rate(x_count[5m])) < 0.9",
        True,
        "narrower `or` branch",
        id="never when no request was fast: the fallback on the left",
    ),
    pytest.param(
        "sum by (cluster) (increase(requests_total[1h])) - sum by (cluster) "
        '(increase(requests_total{code=~"5.."}[1h]) or 0 * increase(requests_total[1h])) < 100',
        False,
        "",
        id="fixed: a zero for every cluster",
    ),
    pytest.param(
        'sum(increase(requests_total[1h])) - sum(increase(requests_total{code=~"5.."}[1h]) '
        "or vector(0)) < 100",
        False,
        "",
        id="no grouping: the fallback has the labels of the other side",
    ),
    pytest.param(
        'sum by (job) (rate(x_total{status=~"5.."}[5m])) / sum by (job) (rate(x_total[5m])) > 0.05',
        False,
        "",
        id="fixed: status aggregated away on both sides",
    ),
    pytest.param(
        'sum without (status) (rate(x_total{status=~"5.."}[5m])) '
        "/ sum without (status) (rate(x_total[5m])) > 0.05",
        False,
        "",
        id="fixed: sum without (status)",
    ),
    pytest.param(
        'rate(x_total{status=~"5.."}[5m]) / ignoring (status) group_left '
        "sum without (status) (rate(x_total[5m])) > 0.05",
        False,
        "",
        id="fixed: ignoring (status) group_left the total",
    ),
    pytest.param(
        'sum by (le) (rate(x_bucket{le="0.5"}[5m])) '
        '/ ignoring (le) sum by (le) (rate(x_bucket{le="+Inf"}[5m])) < 0.9',
        False,
        "",
        id="fixed: apdex with ignoring (le)",
    ),
    pytest.param(
        'rate(x_bucket{le="0.5"}[5m]) / ignoring (le) rate(x_count[5m]) < 0.9',
        False,
        "",
        id="fixed: a bucket over _count ignoring le",
    ),
    pytest.param(
        'rate(x_total{code=~"500|503"}[5m]) / rate(x_total{code=~"503|504"}[5m]) > 0.01',
        True,
        "always 1",
        id="values that meet on 503 only: 503 over itself",
    ),
    pytest.param(
        "rate(x_total[5m]) / rate(x_total[5m] offset 1d) > 2",
        False,
        "",
        id="the same series a day earlier",
    ),
    pytest.param(
        'rate(errors_total{job="a"}[5m]) / rate(requests_total{job="a"}[5m]) > 0.05',
        False,
        "",
        id="two different counters",
    ),
]


@pytest.mark.parametrize(("expr", "reported", "words"), CASES)
def test_vector_matching(lint: LintFn, expr: str, reported: bool, words: str) -> None:
    report = lint(rule_file(alert(expr)))
    hits = [f for f in report.findings if f.check == "vector-matching"]
    assert bool(hits) is reported, [f"{f.check}: {f.message}" for f in report.findings]
    assert all(words in f.message for f in hits), [f.message for f in hits]


def test_the_issue_fix_aggregates_status_away(lint: LintFn) -> None:
    report = lint(rule_file(alert(ISSUE)))
    hit = next(f for f in report.findings if f.check == "vector-matching")
    assert hit.fix is not None
    assert hit.fix.expr == (
        'sum without (status) (rate(x_total{status=~"5.."}[5m])) '
        "/ sum without (status) (rate(x_total[5m])) > 0.05"
    )


def test_values_fixed_in_recording_rules_are_followed(lint: LintFn) -> None:
    errors = 'sum by (job, status) (rate(x_total{status="500"}[5m]))'
    ok = 'sum by (job, status) (rate(x_total{status="200"}[5m]))'
    bad = lint(
        rule_file(
            record("job_status:x_errors:rate5m", errors),
            record("job_status:x_ok:rate5m", ok),
            alert("job_status:x_errors:rate5m / job_status:x_ok:rate5m > 0.1"),
        )
    )
    hits = [f.message for f in bad.findings if f.check == "vector-matching"]
    assert len(hits) == 1 and 'only "500"' in hits[0] and 'only "200"' in hits[0]
    fixed = lint(
        rule_file(
            record("job_status:x_errors:rate5m", errors),
            record("job_status:x_ok:rate5m", ok),
            alert("job_status:x_errors:rate5m / ignoring (status) job_status:x_ok:rate5m > 0.1"),
        )
    )
    assert [f.check for f in fixed.findings if f.check == "vector-matching"] == []


def _evaluate(tmp: Path, exprs: dict[str, str], series: list[dict[str, Any]]) -> str:
    """``promtool test rules`` evaluating each expression at 30m against its expected samples
    (``exprs``: expression -> expected value, ``""`` for no result); promtool's complaint, or
    ``""`` when every value was as expected."""
    rules = tmp / "empty.rules.yaml"
    rules.write_text("groups: []\n")
    tests = []
    for expr, value in exprs.items():
        samples = [] if value == "" else [{"labels": "{}", "value": float(value)}]
        tests.append({"expr": f"sum({expr})", "eval_time": "30m", "exp_samples": samples})
    doc = {
        "rule_files": [rules.name],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": tests}],
    }
    path = tmp / "proof.test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    result = run_promtool("test", "rules", path, cwd=tmp)
    return "" if result.returncode == 0 else result.stdout + result.stderr


# 1 % of requests fail: 6 errors and 594 successes a minute.
ONE_PERCENT = [
    {"series": 'x_total{status="500"}', "values": "0+6x60"},
    {"series": 'x_total{status="200"}', "values": "0+594x60"},
]
# Every request takes more than 0.5 s: 60 a minute, all in the 1 s bucket.
ALL_SLOW = [
    {"series": 'x_bucket{le="0.5"}', "values": "0+0x60"},
    {"series": 'x_bucket{le="1"}', "values": "0+60x60"},
    {"series": 'x_bucket{le="+Inf"}', "values": "0+60x60"},
    {"series": "x_count", "values": "0+60x60"},
]


def _fixed(tmp: Path, expr: str) -> str:
    path = tmp / "fix.yaml"
    path.write_text(yaml.safe_dump(rule_file(record("job:x:ratio", expr)), sort_keys=False))
    report = lint_paths([str(path)], LintConfig(), promtool=False)
    hit = next(f for f in report.findings if f.check == "vector-matching")
    assert hit.fix is not None and hit.fix.expr is not None
    return hit.fix.expr


def test_promtool_shows_the_ratio_is_always_1_and_the_fix_is_the_error_ratio(
    tmp_path: Path,
) -> None:
    needs_promtool()
    bad = 'rate(x_total{status=~"5.."}[5m]) / rate(x_total[5m])'
    fixed = _fixed(tmp_path, bad)
    assert _evaluate(tmp_path, {bad: "1", fixed: "0.01"}, ONE_PERCENT) == ""
    # The expectation is not vacuous: claiming the fix is 1 too fails.
    assert "got: {} 1E-02" in _evaluate(tmp_path, {fixed: "1"}, ONE_PERCENT)


# Requests in one cluster for an hour, none of them failed.
NO_ERRORS = [
    {"series": 'requests_total{cluster="a",code="200"}', "values": "0+60x60"},
]


def test_promtool_shows_an_or_vector_fallback_without_the_label_empties_the_result(
    tmp_path: Path,
) -> None:
    needs_promtool()
    bad = (
        "sum by (cluster) (increase(requests_total[10m])) - sum by (cluster) "
        '(increase(requests_total{code=~"5.."}[10m]) or vector(0))'
    )
    right = (
        "sum by (cluster) (increase(requests_total[10m])) - sum by (cluster) "
        '(increase(requests_total{code=~"5.."}[10m]) or 0 * increase(requests_total[10m]))'
    )
    evaluated = _evaluate(tmp_path, {bad: "", right: "600"}, NO_ERRORS)
    assert evaluated == "", evaluated
    assert _evaluate(tmp_path, {bad: "600"}, NO_ERRORS) != ""


def test_promtool_shows_two_le_buckets_matched_on_le_return_nothing(tmp_path: Path) -> None:
    needs_promtool()
    bad = 'sum by (le) (rate(x_bucket{le="0.5"}[5m])) / sum by (le) (rate(x_bucket{le="+Inf"}[5m]))'
    right = (
        'sum by (le) (rate(x_bucket{le="0.5"}[5m])) '
        '/ ignoring (le) sum by (le) (rate(x_bucket{le="+Inf"}[5m]))'
    )
    by_count = 'rate(x_bucket{le="0.5"}[5m]) / ignoring (le) rate(x_count[5m])'
    assert _evaluate(tmp_path, {bad: "", right: "0", by_count: "0"}, ALL_SLOW) == ""
    assert _evaluate(tmp_path, {bad: "0"}, ALL_SLOW) != ""
