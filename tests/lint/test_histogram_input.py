"""`histogram-input`: histogram functions over series that hold no histogram to read.

The kind: ``histogram_quantile`` over a bare histogram name without rate(), over a ``_count``
or ``_sum``, over a counter or a gauge; the native-only functions (``histogram_count`` …) over
classic series. A native histogram under rate() and a recorded series of buckets are right.
promtool shows what each form returns on classic and on native data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers_promtool import run_promtool

from .helpers import LintFn, alert, needs_promtool, record, rule_file

CHECK = "histogram-input"

CASES = [
    # the example, and what a new user writes next
    pytest.param(
        "histogram_quantile(0.99, http_request_duration_seconds) > 1",
        True,
        "without rate()",
        id="issue: bare histogram name, no _bucket, no rate",
    ),
    pytest.param(
        "histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds[5m]))) > 1",
        False,
        "",
        id="a generic name under rate may be a native histogram",
    ),
    pytest.param(
        "histogram_quantile(0.99, my_latency_seconds) > 1",
        True,
        "without rate()",
        id="bare unknown name read raw",
    ),
    pytest.param(
        "histogram_quantile(0.99, sum by (le) (my_latency_seconds)) > 1",
        True,
        "without rate()",
        id="bare unknown name summed raw",
    ),
    pytest.param(
        "histogram_quantile(0.99, sum by (le) (rate(vllm:e2e_request_latency_seconds[5m]))) > 30",
        True,
        "classic histogram",
        id="vllm classic histogram by its bare name under rate",
    ),
    pytest.param(
        "histogram_quantile(0.95, sum by (le) (rate(vllm:request_prompt_tokens[5m]))) > 1000",
        True,
        "`vllm:` namespace",
        id="a vllm histogram no preset lists, by its bare name",
    ),
    pytest.param(
        "histogram_quantile(0.9, rate(tgi_request_duration[5m])) > 5",
        True,
        "classic histogram",
        id="tgi bare name",
    ),
    pytest.param(
        "histogram_quantile(0.9, rate(nv_inference_first_response_histogram_ms[5m])) > 500",
        True,
        "classic histogram",
        id="triton bare name",
    ),
    pytest.param(
        "histogram_quantile(0.99, sum by (le) (rate(x_seconds_count[5m]))) > 1",
        True,
        "`_count` series",
        id="a _count counter",
    ),
    pytest.param(
        "histogram_quantile(0.5, rate(sglang:time_to_first_token_seconds_sum[5m])) > 1",
        True,
        "_sum counter",
        id="an sglang _sum",
    ),
    pytest.param(
        "histogram_quantile(0.9, sum by (le) (rate(vllm:generation_tokens_total[5m]))) > 1",
        True,
        "`_total` series",
        id="a token counter",
    ),
    pytest.param(
        "histogram_quantile(0.9, max by (le) (vllm:kv_cache_usage_perc)) > 0.9",
        True,
        "gauge (KV-cache usage)",
        id="a gauge a preset knows",
    ),
    pytest.param(
        "histogram_quantile(0.9, sum by (le) (rate(tgi_request_success[5m]))) > 1",
        True,
        "a counter",
        id="a counter without _total that a preset knows",
    ),
    pytest.param(
        "histogram_count(rate(x_seconds_bucket[5m])) > 1",
        True,
        "native histograms only",
        id="histogram_count over classic buckets",
    ),
    pytest.param(
        "histogram_sum(rate(x_seconds_sum[5m])) > 1",
        True,
        "already holds it",
        id="histogram_sum over a classic _sum",
    ),
    pytest.param(
        "histogram_avg(rate(vllm:time_to_first_token_seconds_bucket[5m])) > 1",
        True,
        "native histograms only",
        id="histogram_avg over vllm buckets",
    ),
    pytest.param(
        "histogram_fraction(0, 0.5, sum by (le) (rate(x_seconds_bucket[5m]))) < 0.9",
        True,
        "3.4",
        id="histogram_fraction over classic buckets for Prometheus 2",
    ),
    # right
    pytest.param(
        "histogram_quantile(0.99, sum by (le) (rate(x_seconds_bucket[5m]))) > 1",
        False,
        "",
        id="classic buckets",
    ),
    pytest.param(
        "histogram_quantile(0.99, sum(rate(my_latency_seconds[5m]))) > 1",
        False,
        "",
        id="a native histogram under rate",
    ),
    pytest.param(
        "histogram_count(rate(my_latency_seconds[5m])) > 1",
        False,
        "",
        id="histogram_count of a native histogram",
    ),
    pytest.param(
        "histogram_quantile(0.99, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket[5m])))"
        " > 30",
        False,
        "",
        id="vllm buckets",
    ),
    pytest.param(
        "histogram_quantile(0.99, job:x_seconds_bucket:rate5m) > 1",
        False,
        "",
        id="a recorded series of buckets",
    ),
]


@pytest.mark.parametrize(("expr", "reported", "words"), CASES)
def test_histogram_input(lint: LintFn, expr: str, reported: bool, words: str) -> None:
    report = lint(rule_file(alert(expr)))
    hits = [f for f in report.findings if f.check == CHECK]
    assert bool(hits) is reported, [f"{f.check}: {f.message}" for f in report.findings]
    assert all(words in f.message for f in hits), [f.message for f in hits]
    # A rate() a histogram function reads is a native histogram's: never a gauge finding.
    assert "rate-on-gauge" not in {f.check for f in report.findings}


def test_histogram_fraction_over_buckets_is_fine_on_prometheus_3(lint: LintFn) -> None:
    from generator.lint import LintConfig

    expr = "histogram_fraction(0, 0.5, sum by (le) (rate(x_seconds_bucket[5m]))) < 0.9"
    report = lint(rule_file(alert(expr)), config=LintConfig(versions=("3",)))
    assert [f for f in report.findings if f.check == CHECK] == []


def test_recorded_inputs_are_read_through_their_recording_rules(lint: LintFn) -> None:
    report = lint(
        rule_file(
            record("job:x_seconds:rate5m", "sum by (job) (rate(x_seconds_count[5m]))"),
            record(
                "job_le:x_seconds_bucket:rate5m", "sum by (job, le) (rate(x_seconds_bucket[5m]))"
            ),
            alert("histogram_quantile(0.9, job:x_seconds:rate5m) > 1", name="Bad"),
            alert("histogram_quantile(0.9, job_le:x_seconds_bucket:rate5m) > 1", name="Good"),
        )
    )
    hits = {f.rule: f.message for f in report.findings if f.check == CHECK}
    assert list(hits) == ["Bad"]
    assert "its recording rule reads `x_seconds_count`" in hits["Bad"]


def test_the_fix_reads_the_buckets(lint: LintFn) -> None:
    expr = "histogram_quantile(0.99, vllm:e2e_request_latency_seconds) > 30"
    report = lint(rule_file(alert(expr)))
    hit = next(f for f in report.findings if f.check == CHECK)
    assert hit.fix is not None
    assert hit.fix.expr == (
        "histogram_quantile(0.99, rate(vllm:e2e_request_latency_seconds_bucket[5m])) > 30"
    )


def _evaluate(tmp: Path, exprs: dict[str, str], series: list[dict[str, Any]]) -> str:
    """promtool's complaint when an expression's value at 30m is not the expected one
    (``""``: no result), else ``""``."""
    rules = tmp / "empty.rules.yaml"
    rules.write_text("groups: []\n")
    tests = [
        {
            "expr": expr,
            "eval_time": "30m",
            "exp_samples": [] if value == "" else [{"labels": "{}", "value": float(value)}],
        }
        for expr, value in exprs.items()
    ]
    doc = {
        "rule_files": [rules.name],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": tests}],
    }
    path = tmp / "proof.test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    result = run_promtool("test", "rules", path, cwd=tmp)
    return "" if result.returncode == 0 else result.stdout + result.stderr


# A classic histogram: 60 requests a minute, every one between 0.5 s and 1 s.
CLASSIC = [
    {"series": 'x_seconds_bucket{le="0.5"}', "values": "0+0x60"},
    {"series": 'x_seconds_bucket{le="1"}', "values": "0+60x60"},
    {"series": 'x_seconds_bucket{le="+Inf"}', "values": "0+60x60"},
    {"series": "x_seconds_count", "values": "0+60x60"},
    {"series": "x_seconds_sum", "values": "0+45x60"},
]


def test_promtool_shows_classic_inputs_that_are_not_buckets_return_nothing(
    tmp_path: Path,
) -> None:
    needs_promtool()
    exprs = {
        "histogram_quantile(0.5, sum by (le) (rate(x_seconds_bucket[5m])))": "0.75",
        "histogram_quantile(0.5, sum(rate(x_seconds_count[5m])))": "",
        "histogram_quantile(0.5, rate(x_seconds[5m]))": "",
        "histogram_count(rate(x_seconds_bucket[5m]))": "",
        "rate(x_seconds_count[5m])": "1",
    }
    assert _evaluate(tmp_path, exprs, CLASSIC) == ""
    assert _evaluate(tmp_path, {"histogram_quantile(0.5, rate(x_seconds[5m]))": "0.75"}, CLASSIC)


# A native histogram (schema 0: bucket 0 is (0.5, 1], bucket 1 is (1, 2]): one observation in
# (1, 2] a minute for the first 20 minutes, then one in (0.5, 1] a minute.
NATIVE = [
    {
        "series": "y_seconds",
        "values": "{{schema:0 count:0 sum:0}}+{{schema:0 count:1 sum:1.5 buckets:[0 1]}}x20 "
        "{{schema:0 count:21 sum:30.75 buckets:[1 20]}}+"
        "{{schema:0 count:1 sum:0.75 buckets:[1]}}x39",
    }
]


def test_promtool_shows_a_native_histogram_is_read_under_rate_and_raw_reads_the_uptime(
    tmp_path: Path, lint: LintFn
) -> None:
    needs_promtool()
    recent = "histogram_quantile(0.5, sum(rate(y_seconds[5m])))"
    uptime = "histogram_quantile(0.5, sum(y_seconds))"
    # At 30m the last 5 minutes hold only (0.5, 1] observations; the uptime holds 20 of (1, 2]
    # and 10 of (0.5, 1]: the raw read answers with the old slowness.
    assert (
        _evaluate(tmp_path, {f"{recent} <= bool 1": "1", f"{uptime} > bool 1": "1"}, NATIVE) == ""
    )
    assert _evaluate(tmp_path, {f"{uptime} > bool 1": "0"}, NATIVE) != ""
    report = lint(rule_file(alert(f"{recent} > 1"), alert(f"{uptime} > 1", name="Raw")))
    assert [f.rule for f in report.findings if f.check == CHECK] == ["Raw"]
