"""`threshold-unit`: thresholds whose unit disagrees with a metric obsgen knows.

The kind: percent written for a 0–1 ratio (vLLM's KV-cache usage, 0–1 despite `_perc`; SGLang's
`token_usage` and `cache_hit_rate`; TensorRT-LLM's `kv_cache_utilization`; any `_ratio`),
milliseconds written for a seconds quantile beyond the preset histogram's largest bucket, a
fraction of a byte. promtool shows the KV-cache alert never fires at 97 % and its fix does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.helpers_promtool import run_promtool

from .helpers import LintFn, alert, needs_promtool, record, rule_file

CHECK = "threshold-unit"
ISSUE = "vllm:gpu_cache_usage_perc > 90"

CASES = [
    pytest.param(ISSUE, True, "0.9", id="issue: > 90 on vLLM's 0-1 KV-cache usage"),
    pytest.param("vllm:kv_cache_usage_perc >= 95", True, "0.95", id="the renamed gauge"),
    pytest.param(
        "max by (model_name) (vllm:kv_cache_usage_perc) > 80", True, "0.8", id="max by model"
    ),
    pytest.param(
        "avg_over_time(sglang:token_usage[10m]) > 85", True, "0.85", id="sglang token usage"
    ),
    pytest.param("sglang:cache_hit_rate < 50", True, "always holds", id="sglang hit rate below"),
    pytest.param("trtllm_kv_cache_utilization > 90", True, "0.9", id="trtllm kv cache"),
    pytest.param("ray_vllm:gpu_cache_usage_perc > 90", True, "0.9", id="re-exported by Ray"),
    pytest.param("gpu_utilization_ratio > 95", True, "_ratio", id="a _ratio name"),
    pytest.param("90 < vllm:kv_cache_usage_perc", True, "never holds", id="threshold on the left"),
    pytest.param(
        "100 * vllm:kv_cache_usage_perc > 150", True, "at most 100", id="percent above 100"
    ),
    pytest.param(
        "histogram_quantile(0.99, sum by (le) "
        "(rate(vllm:inter_token_latency_seconds_bucket[5m]))) > 100",
        True,
        "milliseconds: write `0.1`",
        id="ms written for a seconds quantile (vllm ITL, largest bucket 80 s)",
    ),
    pytest.param(
        "histogram_quantile(0.99, sum by (le) "
        "(rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 5000",
        True,
        "write `5`",
        id="vllm TTFT in ms",
    ),
    pytest.param(
        "histogram_quantile(0.9, sum by (le) "
        "(rate(nv_inference_first_response_histogram_ms_bucket[5m]))) > 10000",
        True,
        "at most 5000",
        id="triton ms histogram above its largest bucket",
    ),
    pytest.param(
        "histogram_quantile(0.99, sum by (le) (rate(tgi_request_duration_bucket[5m]))) > 500",
        True,
        "write `0.5`",
        id="tgi duration in ms (largest bucket about 146 s)",
    ),
    pytest.param("clamp_max(sglang:token_usage, 1) > 90", True, "0.9", id="through clamp_max"),
    pytest.param(
        "container_memory_working_set_bytes > 0.9", True, "fraction of a byte", id="bytes"
    ),
    pytest.param(
        'node_filesystem_avail_bytes{mountpoint="/"} < 0.1',
        True,
        "fraction of a byte",
        id="bytes below a ratio",
    ),
    # right
    pytest.param("vllm:kv_cache_usage_perc > 0.9", False, "", id="a ratio threshold"),
    pytest.param("vllm:kv_cache_usage_perc * 100 > 90", False, "", id="scaled to percent first"),
    pytest.param("0.9 < sglang:token_usage", False, "", id="left ratio threshold"),
    pytest.param(
        "histogram_quantile(0.99, sum by (le) "
        "(rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 5",
        False,
        "",
        id="seconds",
    ),
    pytest.param(
        "histogram_quantile(0.99, sum by (le) "
        "(rate(vllm:time_to_first_token_seconds_bucket[5m]))) * 1000 > 500",
        False,
        "",
        id="scaled to ms first",
    ),
    pytest.param(
        "node_filesystem_avail_bytes / node_filesystem_size_bytes < 0.1", False, "", id="ratio"
    ),
    pytest.param("vllm:num_requests_waiting > 90", False, "", id="a count may be 90"),
    pytest.param(
        "rate(vllm:e2e_request_latency_seconds_sum[5m]) "
        "/ rate(vllm:e2e_request_latency_seconds_count[5m]) > 10",
        False,
        "",
        id="a mean latency in seconds",
    ),
]


@pytest.mark.parametrize(("expr", "reported", "words"), CASES)
def test_threshold_unit(lint: LintFn, expr: str, reported: bool, words: str) -> None:
    report = lint(rule_file(alert(expr)))
    hits = [f for f in report.findings if f.check == CHECK]
    assert bool(hits) is reported, [f"{f.check}: {f.message}" for f in report.findings]
    assert all(words in f.message for f in hits), [f.message for f in hits]
    if not reported:
        assert report.findings == (), [f"{f.check}: {f.message}" for f in report.findings]


def test_units_are_followed_through_recording_rules(lint: LintFn) -> None:
    report = lint(
        rule_file(
            record("model:kv_cache_usage:max", "max by (model_name) (vllm:kv_cache_usage_perc)"),
            alert("model:kv_cache_usage:max > 90", name="Bad"),
            alert("model:kv_cache_usage:max > 0.9", name="Good"),
        )
    )
    assert [f.rule for f in report.findings if f.check == CHECK] == ["Bad"]


def test_the_fix_is_the_ratio(lint: LintFn) -> None:
    report = lint(rule_file(alert(ISSUE)))
    hit = next(f for f in report.findings if f.check == CHECK)
    assert hit.fix is not None and hit.fix.expr == "vllm:gpu_cache_usage_perc > 0.9"


def test_promtool_shows_the_percent_threshold_never_fires_and_the_fix_does(
    tmp_path: Path,
) -> None:
    needs_promtool()
    rules = tmp_path / "kv.rules.yaml"
    both = [
        alert(expr, name=name, annotations={"summary": "s"})
        for name, expr in (("Bad", ISSUE), ("Fixed", "vllm:gpu_cache_usage_perc > 0.9"))
    ]
    rules.write_text(yaml.safe_dump(rule_file(*both), sort_keys=False))
    fires = {
        "exp_labels": {"pod": "a", "severity": "warning"},
        "exp_annotations": {"summary": "s"},
    }
    test = {
        "rule_files": [rules.name],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                # 97 % of the KV cache in use for an hour: the server is about to preempt.
                "input_series": [
                    {"series": 'vllm:gpu_cache_usage_perc{pod="a"}', "values": "0.97x60"}
                ],
                "alert_rule_test": [
                    {"eval_time": "30m", "alertname": "Bad", "exp_alerts": []},
                    {"eval_time": "30m", "alertname": "Fixed", "exp_alerts": [fires]},
                ],
            }
        ],
    }
    path = tmp_path / "kv.test.yaml"
    path.write_text(yaml.safe_dump(test, sort_keys=False))
    result = run_promtool("test", "rules", path, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    # Not vacuous: expecting the percent alert to fire too fails.
    test["tests"][0]["alert_rule_test"][0]["exp_alerts"] = [fires]
    path.write_text(yaml.safe_dump(test, sort_keys=False))
    assert run_promtool("test", "rules", path, cwd=tmp_path).returncode != 0
