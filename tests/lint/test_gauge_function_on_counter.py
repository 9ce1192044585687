"""`gauge-function-on-counter`: delta()/deriv()/idelta()/predict_linear() of a counter (pint's
`promql/counter`, offline). promtool shows delta() going negative across a restart."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.helpers_promtool import run_promtool

from .helpers import LintFn, alert, needs_promtool, rule_file

CHECK = "gauge-function-on-counter"

CASES = [
    pytest.param("delta(node_vmstat_oom_kill[30m]) > 0", True, id="corpus: a legacy counter"),
    pytest.param("deriv(node_vmstat_pgmajfault[5m]) > 1000", True, id="corpus: deriv"),
    pytest.param("delta(http_requests_total[10m]) > 100", True, id="a _total counter"),
    pytest.param("idelta(vllm:num_preemptions_total[5m]) > 0", True, id="a vllm counter"),
    pytest.param("predict_linear(tgi_request_failure[1h], 3600) > 100", True, id="tgi counter"),
    pytest.param("delta(node_memory_MemAvailable_bytes[30m]) < 0", False, id="a gauge"),
    pytest.param("increase(node_vmstat_oom_kill[30m]) > 0", False, id="increase"),
    pytest.param("deriv(vllm:num_requests_waiting[5m]) > 1", False, id="a vllm gauge"),
    pytest.param("delta(job:requests:sum[5m]) > 1", False, id="a recorded series"),
]


@pytest.mark.parametrize(("expr", "reported"), CASES)
def test_gauge_function_on_counter(lint: LintFn, expr: str, reported: bool) -> None:
    report = lint(rule_file(alert(expr)))
    hits = [f for f in report.findings if f.check == CHECK]
    assert bool(hits) is reported, [f"{f.check}: {f.message}" for f in report.findings]


def test_promtool_shows_delta_falls_across_a_restart(tmp_path: Path) -> None:
    needs_promtool()
    rules = tmp_path / "empty.rules.yaml"
    rules.write_text("groups: []\n")
    # 2 OOM kills a minute for 20 minutes, then a restart (back to 0), then 1 a minute.
    series = [{"series": "node_vmstat_oom_kill", "values": "0+2x20 0+1x40"}]
    # At 25m the last 10 minutes hold 15 kills and a restart: delta sees a fall.
    tests = [
        {
            "expr": "delta(node_vmstat_oom_kill[10m]) < bool 0",
            "eval_time": "25m",
            "exp_samples": [{"labels": "{}", "value": 1}],
        },
        {
            "expr": "increase(node_vmstat_oom_kill[10m]) > bool 10",
            "eval_time": "25m",
            "exp_samples": [{"labels": "{}", "value": 1}],
        },
    ]
    doc = {
        "rule_files": [rules.name],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": tests}],
    }
    path = tmp_path / "reset.test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    result = run_promtool("test", "rules", path, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
