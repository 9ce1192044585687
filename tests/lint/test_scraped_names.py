"""Scraped or recorded: one classifier (generator/lint/names.py ``SeriesNames``) decides it by
the ``level:metric:operations`` shape and by what the server presets know, never by a colon.

vLLM (``vllm:…``), SGLang (``sglang:…``) and TensorRT-LLM (``trtllm:…``) write a colon into
scraped names; every check that treats recorded series apart (histogram, counter and gauge
checks, quantile maths, windows) must read them as scraped.
"""

from __future__ import annotations

import pytest

from generator.lint.names import SeriesNames

from .helpers import LintFn, alert, record, rule_file

ISSUE = "histogram_quantile(0.99, sum(rate(vllm:e2e_request_latency_seconds_bucket[5m])) by (job))"


@pytest.mark.parametrize(
    ("name", "recorded"),
    [
        pytest.param("job:http_requests:rate5m", True, id="level:metric:operations"),
        pytest.param(":node_memory_MemAvailable_bytes:sum", True, id="empty level"),
        pytest.param("slo:sli_error:ratio_rate5m", True, id="slo ratio"),
        pytest.param(
            "cluster:namespace:pod_cpu:active:kube_pod_container_resource_requests",
            True,
            id="more than three parts (kubernetes-mixin)",
        ),
        pytest.param("apiserver_request:burnrate1h", True, id="metric:operations short form"),
        pytest.param("code:availability30d", True, id="short form with a window"),
        pytest.param("vllm:e2e_request_latency_seconds_bucket", False, id="vllm bucket"),
        pytest.param("vllm:num_requests_running", False, id="vllm gauge"),
        pytest.param("vllm:kv_cache_usage_perc", False, id="vllm kv cache"),
        pytest.param("vllm:request_prompt_tokens_bucket", False, id="vllm name no preset lists"),
        pytest.param("vllm:spec_decode_num_draft_tokens_total", False, id="vllm namespace"),
        pytest.param("sglang:token_usage", False, id="sglang gauge"),
        pytest.param("sglang:func_latency_seconds_bucket", False, id="sglang namespace"),
        pytest.param("trtllm:time_to_first_token_seconds_bucket", False, id="trtllm prefix"),
        pytest.param("ray_vllm:num_requests_waiting", False, id="re-exported by Ray Serve"),
        pytest.param("myexporter:queue_depth", False, id="one colon, last part no operation"),
        pytest.param("http_requests_total", False, id="no colon"),
        pytest.param("vllm:e2e:p99", True, id="three parts in a server namespace"),
    ],
)
def test_the_classifier(name: str, recorded: bool) -> None:
    assert SeriesNames().is_recorded(name) is recorded


def test_a_name_a_rule_of_the_run_records_is_recorded_whatever_its_shape() -> None:
    names = SeriesNames(written=["accelerator_gpu_utilization", "team:queue"])
    assert names.is_recorded("accelerator_gpu_utilization")
    assert names.is_recorded("team:queue")
    assert not SeriesNames().is_recorded("team:queue")


def test_the_short_form_reads_its_window_and_rate() -> None:
    names = SeriesNames()
    assert names.window("apiserver_request:burnrate1h") == 3600
    assert names.says_rate("apiserver_request:burnrate1h")
    assert names.window("vllm:something_5m") is None  # scraped: no window in its name


def test_the_issue_example_is_an_error_not_an_info(lint: LintFn) -> None:
    report = lint(rule_file(record("job:vllm_e2e_seconds:p99", ISSUE)))
    found = {(f.check, f.severity.value) for f in report.findings}
    assert ("histogram-quantile-without-le", "error") in found
    fixed = next(f for f in report.findings if f.check == "histogram-quantile-without-le").fix
    assert fixed is not None and "by (job, le)" in str(fixed.expr)


# (check, expression, whether the check reports it): every check that treats recorded series
# apart, on scraped names of each server whose names hold a colon.
CASES = [
    ("histogram-quantile-without-le", ISSUE, True),
    (
        "histogram-quantile-without-le",
        "histogram_quantile(0.9, sum by (model_name) "
        "(rate(sglang:time_to_first_token_seconds_bucket[5m])))",
        True,
    ),
    (
        "histogram-quantile-without-le",
        "histogram_quantile(0.9, sum by (instance) "
        "(rate(trtllm:e2e_request_latency_seconds_bucket[5m])))",
        True,
    ),
    (
        "histogram-quantile-without-le",
        "histogram_quantile(0.99, sum by (le, job) "
        "(rate(vllm:e2e_request_latency_seconds_bucket[5m])))",
        False,
    ),
    (
        "bucket-without-rate",
        "histogram_quantile(0.9, sum by (le) (vllm:time_to_first_token_seconds_bucket))",
        True,
    ),
    (
        "bucket-without-rate",
        "histogram_quantile(0.9, sum by (le) (sglang:inter_token_latency_seconds_bucket))",
        True,
    ),
    (
        "bucket-without-rate",
        "histogram_quantile(0.9, sum by (le) "
        "(rate(sglang:inter_token_latency_seconds_bucket[5m])))",
        False,
    ),
    ("rate-on-gauge", "rate(vllm:num_requests_waiting[5m]) > 1", True),
    ("rate-on-gauge", "increase(sglang:num_running_reqs[10m]) > 1", True),
    ("rate-on-gauge", "rate(ray_vllm:gpu_cache_usage_perc[5m]) > 0.1", True),
    ("rate-on-gauge", "rate(vllm:prompt_tokens_total[5m]) > 1000", False),
    ("rate-on-gauge", "rate(sglang:num_requests_total[5m]) > 1", False),
    ("counter-compared-raw", "vllm:num_preemptions_total > 10", True),
    ("counter-compared-raw", "sglang:num_aborted_requests_total > 5", True),
    ("counter-compared-raw", "trtllm:request_success_total < 100", True),
    ("counter-compared-raw", "increase(vllm:num_preemptions_total[10m]) > 10", False),
    ("counter-compared-raw", "vllm:num_requests_waiting > 10", False),
    (
        "quantile-aggregated",
        "avg(histogram_quantile(0.99, sum by (le, pod) "
        "(rate(vllm:e2e_request_latency_seconds_bucket[5m])))) > 2",
        True,
    ),
    ("rate-over-aggregated", "rate(vllm:request_success_total[5m]) > 1", False),
    ("rate-over-aggregated", "rate(job:vllm_requests:sum[5m]) > 1", True),
    ("bucket-without-rate", "histogram_quantile(0.9, job:x_bucket:rate5m) > 1", False),
]


@pytest.mark.parametrize(
    ("check", "expr", "reported"),
    [pytest.param(*case, id=f"{case[0]}: {case[1]}") for case in CASES],
)
def test_scraped_server_names_reach_every_check(
    lint: LintFn, check: str, expr: str, reported: bool
) -> None:
    report = lint(rule_file(alert(expr)))
    hits = [f for f in report.findings if f.check == check]
    assert bool(hits) is reported, [f"{f.check}: {f.message}" for f in report.findings]


def test_the_bucket_based_form_is_printed_for_a_vllm_histogram(lint: LintFn) -> None:
    expr = (
        "avg(histogram_quantile(0.99, sum by (le, pod) "
        "(rate(vllm:e2e_request_latency_seconds_bucket[5m])))) > 2"
    )
    report = lint(rule_file(alert(expr)))
    hit = next(f for f in report.findings if f.check == "quantile-aggregated")
    assert hit.fix is not None
    assert hit.fix.expr == (
        "histogram_quantile(0.99, sum by (le) "
        "(rate(vllm:e2e_request_latency_seconds_bucket[5m]))) > 2"
    )
