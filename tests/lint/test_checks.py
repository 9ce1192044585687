"""Every check: a case that must report it and a case that must not (our own rules)."""

from __future__ import annotations

from typing import Any

import pytest

from generator.lint import LintConfig
from generator.lint.checks import all_checks

from .helpers import LintFn, alert, helm_values, prometheus_rule, record, rule_file
from .label_cases import DISABLE_CASES, LABEL_CASES, MORE_CASES

R5M, R30M, R1H = (
    "slo:sli_error:ratio_rate5m",
    "slo:sli_error:ratio_rate30m",
    "slo:sli_error:ratio_rate1h",
)
R6H, R3D = "slo:sli_error:ratio_rate6h", "slo:sli_error:ratio_rate3d"
NO_FOR: dict[str, Any] = {"for": None}

F = True  # the check must report
P = False  # the check must stay quiet

CASES = [
    # --- histograms
    pytest.param(
        "histogram-quantile-without-le",
        [
            rule_file(
                record(
                    "service:latency:p99",
                    "histogram_quantile(0.99, sum by (service) (rate(x_bucket[5m])))",
                )
            )
        ],
        F,
        {},
        id="histogram_quantile over sum by (service) drops le",
    ),
    pytest.param(
        "histogram-quantile-without-le",
        [
            rule_file(
                record(
                    "service:latency:p99",
                    "histogram_quantile(0.99, sum without (le) (rate(x_bucket[5m])))",
                )
            )
        ],
        F,
        {},
        id="sum without (le) drops le too",
    ),
    pytest.param(
        "histogram-quantile-without-le",
        [
            rule_file(
                record(
                    "service:latency:p99",
                    "histogram_quantile(0.99, sum by (le, service) (rate(x_bucket[5m])))",
                )
            )
        ],
        P,
        {},
        id="sum by (le, service) keeps le",
    ),
    pytest.param(
        "histogram-quantile-without-le",
        [
            rule_file(
                record(
                    "service:latency:p99",
                    "histogram_quantile(0.99, sum by (service) (rate(x_seconds[5m])))",
                )
            )
        ],
        P,
        {},
        id="native histograms have no le to keep",
    ),
    pytest.param(
        "bucket-without-rate",
        [
            rule_file(
                record("service:latency:p90", "histogram_quantile(0.9, sum by (le) (x_bucket))")
            )
        ],
        F,
        {},
        id="quantile over raw cumulative buckets",
    ),
    pytest.param(
        "bucket-without-rate",
        [rule_file(record("service:slow:ratio", 'sum(x_bucket{le="0.5"}) / sum(x_count)'))],
        F,
        {},
        id="bucket arithmetic without rate",
    ),
    pytest.param(
        "bucket-without-rate",
        [
            rule_file(
                record(
                    "service:fast:increase1m",
                    'sum((x_bucket{le="0.5"} - x_bucket{le="0.5"} offset 1m) >= 0 '
                    'or (x_bucket{le="0.5"} and x_bucket{le="0.5"} offset 1m))',
                )
            )
        ],
        P,
        {},
        id="exact reset-aware increase of a bucket (offset difference, new value on reset)",
    ),
    pytest.param(
        "bucket-without-rate",
        [
            rule_file(
                record(
                    "service:fast:increase1m",
                    'sum((x_bucket{le="0.5"} - x_bucket{le="0.5"} offset 1m) >= 0 '
                    'or (x_bucket{le="1"} and x_bucket{le="0.5"} offset 1m))',
                )
            )
        ],
        F,
        {},
        id="an or-branch of another bucket is still raw",
    ),
    pytest.param(
        "bucket-without-rate",
        [
            rule_file(
                record(
                    "service:latency:p90",
                    "histogram_quantile(0.9, sum by (le) (rate(x_bucket[5m])))",
                )
            )
        ],
        P,
        {},
        id="quantile over rated buckets",
    ),
    pytest.param(
        "bucket-without-rate",
        [
            rule_file(
                alert(
                    "BucketMissing",
                    'group by (namespace) (up == 1) unless on (namespace) group by (namespace) (x_bucket{le="0.5"})',
                )
            )
        ],
        P,
        {},
        id="group() of buckets is a presence test, not their values",
    ),
    pytest.param(
        "le-not-a-number",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="0.5s"}[5m]))'))],
        F,
        {},
        id="le with a unit suffix is not a number",
    ),
    pytest.param(
        "le-not-a-number",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le=~"500ms|0.5"}[5m]))'))],
        F,
        {},
        id="le regex alternative with a unit",
    ),
    pytest.param(
        "le-not-a-number",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="0.5"}[5m]))'))],
        P,
        {},
        id="le in seconds is a number",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1"}[5m]))'))],
        F,
        {},
        id="le 1 is stored as 1.0 by Prometheus 3",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1800000"}[5m]))'))],
        F,
        {},
        id="le 1800000 is stored as 1.8e+06",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="0.00005"}[5m]))'))],
        F,
        {},
        id="le 0.00005 is stored as 5e-05",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1.0"}[5m]))'))],
        P,
        {"versions": ("3",)},
        id="le 1.0 is the Prometheus 3 spelling",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1.0"}[5m]))'))],
        F,
        {},
        id="le 1.0 misses Go clients' 1 on Prometheus 2 (default target: both)",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1.8e+06"}[5m]))'))],
        P,
        {"versions": ("3",)},
        id="le 1.8e+06 is the Prometheus 3 spelling",
    ),
    pytest.param(
        "le-spelling",
        [
            rule_file(
                record("service:slow:rate5m", 'sum(rate(x_bucket{le=~"^(?:1|1\\\\.0)$"}[5m]))')
            )
        ],
        P,
        {},
        id="anchored compat regex matches both spellings",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le=~"1(\\\\.0)?"}[5m]))'))],
        P,
        {},
        id="optional .0 regex matches both spellings",
    ),
    pytest.param(
        "rate-filter-before-quantile",
        [
            rule_file(
                record(
                    "service:latency:p90",
                    "histogram_quantile(0.9, sum by (le) (rate(x_bucket[5m]) > 0))",
                )
            )
        ],
        F,
        {},
        id="rate > 0 inside histogram_quantile",
    ),
    pytest.param(
        "rate-filter-before-quantile",
        [rule_file(alert("histogram_quantile(0.9, sum by (le) (rate(x_bucket[5m]))) > 2"))],
        P,
        {},
        id="comparing the quantile itself",
    ),
    pytest.param(
        "bucket-sum-across-le",
        [rule_file(record("job:x:rate5m", "sum by (job) (rate(x_bucket[5m]))"))],
        F,
        {},
        id="sum by job adds every bucket",
    ),
    pytest.param(
        "bucket-sum-across-le",
        [rule_file(record("job:x_slow:rate5m", 'sum by (job) (rate(x_bucket{le="0.5"}[5m]))'))],
        P,
        {},
        id="sum of one pinned bucket",
    ),
    pytest.param(
        "bucket-sum-across-le",
        [
            rule_file(
                record(
                    "job:x_slow:rate5m", 'sum by (job) (rate(x_bucket{le=~"^(?:1|1\\\\.0)$"}[5m]))'
                )
            )
        ],
        P,
        {},
        id="sum of one bucket in compat spelling",
    ),
    pytest.param(
        "histogram-input",
        [rule_file(alert("histogram_quantile(0.99, http_request_duration_seconds) > 1"))],
        F,
        {},
        id="histogram_quantile over a bare histogram name, no rate",
    ),
    pytest.param(
        "histogram-input",
        [rule_file(alert("histogram_quantile(0.9, sum by (le) (rate(x_seconds_count[5m]))) > 1"))],
        F,
        {},
        id="histogram_quantile over a _count",
    ),
    pytest.param(
        "histogram-input",
        [rule_file(alert("histogram_sum(rate(x_seconds_sum[5m])) > 1"))],
        F,
        {},
        id="histogram_sum over a classic _sum",
    ),
    pytest.param(
        "histogram-input",
        [rule_file(alert("histogram_quantile(0.9, sum(rate(x_seconds[5m]))) > 1"))],
        P,
        {},
        id="a native histogram under rate",
    ),
    # --- counters and gauges
    pytest.param(
        "rate-on-gauge",
        [
            rule_file(
                record("job:queue_depth:rate5m", "sum by (job) (rate(inference_queue_depth[5m]))")
            )
        ],
        F,
        {},
        id="rate of a gauge",
    ),
    pytest.param(
        "rate-on-gauge",
        [
            rule_file(
                record(
                    "job:x:rate5m",
                    "sum by (job) (rate(http_requests_total[5m])) + sum by (job) "
                    "(rate(x_count[5m])) + sum by (job) (rate(x_sum[5m]))",
                )
            )
        ],
        P,
        {},
        id="rate of _total _count _sum counters",
    ),
    pytest.param(
        "rate-on-gauge",
        [rule_file(record("instance:faults:rate5m", "rate(node_vmstat_pgmajfault[5m])"))],
        P,
        {},
        id="rate of a legacy node_vmstat counter",
    ),
    pytest.param(
        "rate-on-gauge",
        [rule_file(record("job:legacy:rate5m", "rate(my_legacy_requests[5m])"))],
        P,
        {"counters": ("my_legacy_.*",)},
        id="rate of a counter listed in the config",
    ),
    pytest.param(
        "counter-compared-raw",
        [rule_file(alert("http_errors_total > 5"))],
        F,
        {},
        id="raw counter above a threshold",
    ),
    pytest.param(
        "counter-compared-raw",
        [rule_file(alert("sum(http_errors_total) > 5"))],
        F,
        {},
        id="sum of raw counters above a threshold",
    ),
    pytest.param(
        "counter-compared-raw",
        [rule_file(alert("increase(http_errors_total[10m]) > 5"))],
        P,
        {},
        id="increase of a counter above a threshold",
    ),
    pytest.param(
        "counter-compared-raw",
        [rule_file(alert("(http_errors_total - http_errors_total offset 1m) >= 0"))],
        P,
        {},
        id="a counter minus itself one offset ago is an increase",
    ),
    pytest.param(
        "counter-compared-raw",
        [rule_file(alert('(http_errors_total - http_errors_total{code="500"} offset 1m) > 5'))],
        F,
        {},
        id="a counter minus another selection is still raw",
    ),
    pytest.param(
        "counter-compared-raw",
        [
            rule_file(
                alert(
                    "x_count > 0 and on (job) histogram_quantile(0.01, sum by (job, le) "
                    "(rate(x_bucket[5m]))) < 3600"
                )
            )
        ],
        P,
        {},
        id="raw count as an existence guard of and",
    ),
    pytest.param(
        "counter-compared-raw",
        [rule_file(alert("devices_total == 0"))],
        P,
        {},
        id="counter equal to zero is a state test",
    ),
    pytest.param(
        "rate-over-aggregated",
        [
            rule_file(
                record("job:requests_total:sum", "sum by (job) (requests_total)"),
                record("job:requests:rate5m", "rate(job:requests_total:sum[5m])"),
            )
        ],
        F,
        {},
        id="sum then rate of a recorded sum",
    ),
    pytest.param(
        "rate-over-aggregated",
        [rule_file(record("job:requests:rate1h", "rate(service:http_requests:rate5m[1h])"))],
        F,
        {},
        id="rate of a recorded rate",
    ),
    pytest.param(
        "rate-over-aggregated",
        [rule_file(record("job:requests:rate5m", "sum by (job) (rate(requests_total[5m]))"))],
        P,
        {},
        id="rate first then sum",
    ),
    pytest.param(
        "gauge-function-on-counter",
        [rule_file(alert("delta(node_vmstat_oom_kill[30m]) > 0"))],
        F,
        {},
        id="delta of a counter",
    ),
    pytest.param(
        "gauge-function-on-counter",
        [rule_file(alert("delta(node_memory_MemAvailable_bytes[30m]) < 0"))],
        P,
        {},
        id="delta of a gauge",
    ),
    # --- units
    pytest.param(
        "threshold-unit",
        [rule_file(alert("vllm:gpu_cache_usage_perc > 90"))],
        F,
        {},
        id="percent threshold on vLLM's 0-1 KV-cache usage",
    ),
    pytest.param(
        "threshold-unit",
        [rule_file(alert("vllm:gpu_cache_usage_perc > 0.9"))],
        P,
        {},
        id="ratio threshold on vLLM's KV-cache usage",
    ),
    # --- SLO maths
    pytest.param(
        "nan-in-aggregation",
        [rule_file(alert("avg(rate(x_seconds_sum[5m]) / rate(x_seconds_count[5m])) > 1"))],
        F,
        {},
        id="average of per-series means: NaN while one series is idle",
    ),
    pytest.param(
        "nan-in-aggregation",
        [rule_file(alert("sum(rate(x_seconds_sum[5m])) / sum(rate(x_seconds_count[5m])) > 1"))],
        P,
        {},
        id="aggregate first, then divide",
    ),
    pytest.param(
        "averaged-ratio",
        [
            rule_file(
                record(
                    "slo:sli_error:ratio_rate30d", "avg_over_time(slo:sli_error:ratio_rate5m[30d])"
                )
            )
        ],
        F,
        {},
        id="avg_over_time of a recorded ratio",
    ),
    pytest.param(
        "averaged-ratio",
        [
            rule_file(
                record(
                    "slo:sli_error:ratio_rate30d",
                    "sum_over_time(slo:sli_error:ratio_rate5m[30d]) / "
                    "count_over_time(slo:sli_error:ratio_rate5m[30d])",
                )
            )
        ],
        F,
        {},
        id="sum_over_time over count_over_time of a ratio",
    ),
    pytest.param(
        "averaged-ratio",
        [
            rule_file(
                record(
                    "slo:sli_error:ratio_rate30d",
                    "sum_over_time(service:http_errors:rate5m[30d]) / "
                    "sum_over_time(service:http_requests:rate5m[30d])",
                )
            )
        ],
        P,
        {},
        id="sum of bad rates over sum of total rates",
    ),
    pytest.param(
        "burn-rate-below-budget",
        [rule_file(alert("slo:sli_error:ratio_rate1h > (0.5 * (1 - 0.999))"))],
        F,
        {},
        id="burn factor one half",
    ),
    pytest.param(
        "burn-rate-below-budget",
        [rule_file(alert("slo:sli_error:ratio_rate1h > (14.4 * 0.001)"))],
        P,
        {},
        id="burn factor 14.4",
    ),
    pytest.param(
        "burn-rate-window-mismatch",
        [
            rule_file(
                alert(
                    "slo:sli_error:ratio_rate1h > (14.4 * 0.001) and "
                    "slo:sli_error:ratio_rate5m > (6 * 0.001)"
                )
            )
        ],
        F,
        {},
        id="pair with different thresholds",
    ),
    pytest.param(
        "burn-rate-window-mismatch",
        [
            rule_file(
                alert(
                    "slo:sli_error:ratio_rate1h > (14.4 * 0.001) and "
                    "slo:sli_error:ratio_rate1h > (14.4 * 0.001)"
                )
            )
        ],
        F,
        {},
        id="pair with the same window twice",
    ),
    pytest.param(
        "burn-rate-window-mismatch",
        [
            rule_file(
                alert(
                    "slo:sli_error:ratio_rate1h > (14.4 * 0.001) and "
                    "slo:sli_error:ratio_rate5m > (14.4 * 0.001)"
                )
            )
        ],
        P,
        {},
        id="1h and 5m pair at 14.4",
    ),
    # --- alerts
    pytest.param(
        "alert-without-comparison",
        [rule_file(alert("rate(http_errors_total[5m])"))],
        F,
        {},
        id="alert on a bare rate",
    ),
    pytest.param(
        "alert-without-comparison",
        [rule_file(alert("rate(http_errors_total[5m]) > 0.1"))],
        P,
        {},
        id="alert with a threshold",
    ),
    pytest.param(
        "alert-without-comparison",
        [rule_file(alert("vector(1)", name="Watchdog"))],
        P,
        {},
        id="always-firing watchdog",
    ),
    pytest.param(
        "alert-value-in-labels",
        [rule_file(alert("up == 0", labels={"severity": "warning", "value": "{{ $value }}"}))],
        F,
        {},
        id="value in a label",
    ),
    pytest.param(
        "alert-value-in-labels",
        [rule_file(alert("up == 0", annotations={"summary": "{{ $value }}", "runbook_url": "r"}))],
        P,
        {},
        id="value in an annotation",
    ),
    pytest.param(
        "alert-missing-label",
        [rule_file(alert("up == 0", labels={"team": "x"}))],
        F,
        {},
        id="alert without severity",
    ),
    pytest.param(
        "alert-missing-label", [rule_file(alert("up == 0"))], P, {}, id="alert with severity"
    ),
    pytest.param(
        "alert-missing-annotation",
        [rule_file(alert("up == 0", annotations={"summary": "s"}))],
        F,
        {},
        id="alert without runbook_url",
    ),
    pytest.param(
        "alert-missing-annotation",
        [rule_file(alert("up == 0", annotations={"summary": "s"}))],
        P,
        {"required_annotations": ("summary",)},
        id="runbook not required by config",
    ),
    pytest.param(
        "alert-severity-value",
        [rule_file(alert("up == 0", labels={"severity": "page"}))],
        F,
        {},
        id="severity page",
    ),
    pytest.param(
        "alert-severity-value",
        [rule_file(alert("up == 0", labels={"severity": "critical"}))],
        P,
        {},
        id="severity critical",
    ),
    pytest.param(
        "alert-missing-for",
        [rule_file(alert("rate(http_errors_total[5m]) > 10", **{"for": None}))],
        F,
        {},
        id="short-window threshold without for",
    ),
    pytest.param(
        "alert-missing-for",
        [rule_file(alert("queue_depth > 100", **{"for": "0m"}))],
        F,
        {},
        id="gauge threshold with for 0m",
    ),
    pytest.param(
        "alert-missing-for",
        [rule_file(alert("rate(http_errors_total[5m]) > 10"))],
        P,
        {},
        id="short-window threshold with for",
    ),
    pytest.param(
        "alert-missing-for",
        [rule_file(alert("increase(oom_events_total[5m]) > 0", **{"for": None}))],
        P,
        {},
        id="event alert needs no for",
    ),
    pytest.param(
        "alert-missing-for",
        [
            rule_file(
                alert(
                    "slo:sli_error:ratio_rate1h > (14.4 * 0.001) and "
                    "slo:sli_error:ratio_rate5m > (14.4 * 0.001)",
                    **{"for": None},
                )
            )
        ],
        P,
        {},
        id="multiwindow burn alert needs no for",
    ),
    pytest.param(
        "absent-without-for",
        [rule_file(alert('absent(up{job="x"})', **{"for": None}))],
        F,
        {},
        id="absent without for",
    ),
    pytest.param(
        "absent-without-for", [rule_file(alert('absent(up{job="x"})'))], P, {}, id="absent with for"
    ),
    # --- hygiene
    pytest.param(
        "record-name-format",
        [rule_file(record("http_errors_rate", "sum(rate(http_errors_total[5m]))"))],
        F,
        {},
        id="record without colons",
    ),
    pytest.param(
        "record-name-format",
        [
            rule_file(
                record(
                    "service:http_requests:rate5m",
                    "sum by (service) (rate(http_requests_total[5m]))",
                )
            )
        ],
        P,
        {},
        id="level metric operations",
    ),
    pytest.param(
        "regex-plain-string",
        [rule_file(alert('rate(x_total{method=~"GET"}[5m]) > 1'))],
        F,
        {},
        id="regex on a plain string",
    ),
    pytest.param(
        "regex-plain-string",
        [rule_file(alert('rate(x_total{method=~"GET|POST"}[5m]) > 1'))],
        P,
        {},
        id="regex alternation",
    ),
    pytest.param(
        "regex-redundant-anchor",
        [rule_file(alert('rate(x_total{job=~"^api$"}[5m]) > 1'))],
        F,
        {},
        id="anchored job regex",
    ),
    pytest.param(
        "regex-redundant-anchor",
        [
            rule_file(
                record(
                    "job:x_slow:rate5m", 'sum by (job) (rate(x_bucket{le=~"^(?:1|1\\\\.0)$"}[5m]))'
                )
            )
        ],
        P,
        {},
        id="anchored le compat regex is deliberate",
    ),
    pytest.param(
        "range-too-short",
        [rule_file(alert("rate(x_total[1m]) > 1"))],
        F,
        {},
        id="1m window at a 30s scrape",
    ),
    pytest.param(
        "range-too-short",
        [rule_file(alert("rate(x_total[2m]) > 1"))],
        P,
        {},
        id="2m window at a 30s scrape",
    ),
    pytest.param(
        "range-too-short",
        [rule_file(alert("rate(x_total[1m]) > 1"))],
        P,
        {"scrape_interval": 15.0},
        id="1m window at a 15s scrape",
    ),
    pytest.param(
        "group-interval-too-long",
        [rule_file(record("job:x:rate5m", "sum(rate(x_total[5m]))"), interval="10m")],
        F,
        {},
        id="group evaluated every 10m",
    ),
    pytest.param(
        "group-interval-too-long",
        [rule_file(record("job:x:rate5m", "sum(rate(x_total[5m]))"), interval="1m")],
        P,
        {},
        id="group evaluated every 1m",
    ),
    pytest.param(
        "group-interval-too-long",
        [rule_file(record("job:x:rate5m", "sum(rate(x_total[5m]))"), interval="5m")],
        F,
        {},
        id="group evaluated every 5m: left-open lookback on Prometheus 3",
    ),
    pytest.param(
        "group-interval-too-long",
        [rule_file(record("job:x:rate5m", "sum(rate(x_total[5m]))"), interval="5m")],
        P,
        {"versions": ("2",)},
        id="group evaluated every 5m on Prometheus 2",
    ),
    # --- burn-rate alerts as a whole (SRE Workbook ch. 5)
    pytest.param(
        "burn-rate-never-fires",
        [rule_file(alert(f"{R1H} > (14.4 * (1 - 0.9)) and {R5M} > (14.4 * (1 - 0.9))", **NO_FOR))],
        F,
        {},
        id="14.4x a 10% budget is a 144% error ratio",
    ),
    pytest.param(
        "burn-rate-never-fires",
        [rule_file(alert(f"{R1H} > (6 * (1 - 0.9)) and {R5M} > (6 * (1 - 0.9))", **NO_FOR))],
        P,
        {},
        id="6x a 10% budget is 60%",
    ),
    pytest.param(
        "burn-rate-slow-reset",
        [rule_file(alert(f"{R1H} > (14.4 * (1 - 0.999))", **NO_FOR))],
        F,
        {},
        id="a 1h window alone keeps firing ~59m after recovery",
    ),
    pytest.param(
        "burn-rate-slow-reset",
        [
            rule_file(
                alert(f"{R1H} > (14.4 * (1 - 0.999)) and {R30M} > (14.4 * (1 - 0.999))", **NO_FOR)
            )
        ],
        F,
        {},
        id="a 30m short window for a 1h long one",
    ),
    pytest.param(
        "burn-rate-slow-reset",
        [
            rule_file(
                alert(f"{R1H} > (14.4 * (1 - 0.999)) and {R5M} > (14.4 * (1 - 0.999))", **NO_FOR)
            )
        ],
        P,
        {},
        id="the Workbook pair 1h/5m",
    ),
    pytest.param(
        "burn-rate-slow-reset",
        [rule_file(alert("slo:sli_error:ratio_rate10m > 0.05"))],
        P,
        {},
        id="a 10m window alone resets within 10m",
    ),
    pytest.param(
        "burn-rate-budget-spend",
        [
            rule_file(
                alert(f"{R3D} > (14.4 * (1 - 0.999)) and {R6H} > (14.4 * (1 - 0.999))", **NO_FOR)
            )
        ],
        F,
        {},
        id="14.4x over 3d spends 144% of the budget before firing",
    ),
    pytest.param(
        "burn-rate-budget-spend",
        [rule_file(alert(f"{R1H} > (1 * (1 - 0.999)) and {R5M} > (1 * (1 - 0.999))", **NO_FOR))],
        F,
        {},
        id="1x over 1h pages on 0.14% of the budget",
    ),
    pytest.param(
        "burn-rate-budget-spend",
        [rule_file(alert(f"{R6H} > (6 * (1 - 0.999)) and {R30M} > (6 * (1 - 0.999))", **NO_FOR))],
        P,
        {},
        id="the Workbook tier 6x over 6h spends 5%",
    ),
    pytest.param(
        "burn-rate-budget-spend",
        [
            rule_file(
                record("slo:burn_rate:ratio_rate30m", f"{R30M} / 0.05"),
                alert(f"{R30M} > 0.72 and {R5M} > 0.72", **NO_FOR),
            )
        ],
        P,
        {},
        id="14.4x over 30m at 95 percent spends exactly 1% (0.72 / 0.05 in floats is 14.399...)",
    ),
    pytest.param(
        "burn-rate-for-too-long",
        [
            rule_file(
                alert(
                    f"{R1H} > (14.4 * (1 - 0.999)) and {R5M} > (14.4 * (1 - 0.999))",
                    **{"for": "1h"},
                )
            )
        ],
        F,
        {},
        id="for: 1h on a 1h/5m pair",
    ),
    pytest.param(
        "burn-rate-for-too-long",
        [
            rule_file(
                alert(
                    f"{R1H} > (14.4 * (1 - 0.999)) and {R5M} > (14.4 * (1 - 0.999))",
                    **{"for": "2m"},
                )
            )
        ],
        P,
        {},
        id="for: 2m on a 1h/5m pair",
    ),
    pytest.param(
        "burn-rate-for-too-long",
        [rule_file(alert("slo:sli_error:ratio_rate5m > 0.1", **{"for": "10m"}))],
        P,
        {},
        id="for on a single-window threshold alert is plain debouncing",
    ),
    # --- quantile maths
    pytest.param(
        "quantile-over-time",
        [
            rule_file(
                alert("avg_over_time(service:http_request_duration_seconds:p99_rate5m[6h]) > 1")
            )
        ],
        F,
        {},
        id="issue 18 case 1: a 6h p99 as the mean of 5m p99s",
    ),
    pytest.param(
        "quantile-over-time",
        [
            rule_file(
                record(
                    "service:lat:p99_rate5m",
                    "histogram_quantile(0.99, sum by (le, service) (rate(lat_seconds_bucket[5m])))",
                ),
                alert("max_over_time(service:lat:p99_rate5m[1h]) > 1"),
            )
        ],
        F,
        {},
        id="max_over_time of a series recorded as histogram_quantile",
    ),
    pytest.param(
        "quantile-over-time",
        [
            rule_file(
                alert(
                    "histogram_quantile(0.99, sum by (le, service) "
                    "(rate(http_request_duration_seconds_bucket[6h]))) > 1"
                )
            )
        ],
        P,
        {},
        id="the 6h p99 from the 6h bucket rates",
    ),
    pytest.param(
        "quantile-over-time",
        [rule_file(alert("avg_over_time(service:http_requests:rate5m[6h]) > 1"))],
        P,
        {},
        id="avg_over_time of a rate is no quantile",
    ),
    pytest.param(
        "quantile-aggregated",
        [
            rule_file(
                alert("avg by (service) (service_pod:http_request_duration_seconds:p99_rate5m) > 1")
            )
        ],
        F,
        {},
        id="issue 18 case 1: a fleet p99 as the mean of per-pod p99s",
    ),
    pytest.param(
        "quantile-aggregated",
        [rule_file(alert('sum(rate_limiter_latency_seconds{quantile="0.99"}) > 1'))],
        F,
        {},
        id="sum of a summary's quantile series",
    ),
    pytest.param(
        "quantile-aggregated",
        [
            rule_file(
                record(
                    "service:lat:p99_rate5m",
                    "histogram_quantile(0.99, sum by (le, service) (rate(lat_seconds_bucket[5m])))",
                ),
                alert("max by (service) (service:lat:p99_rate5m) > 1"),
            )
        ],
        P,
        {},
        id="max by the labels the quantile was computed by merges nothing",
    ),
    pytest.param(
        "quantile-aggregated",
        [rule_file(record("job:gc:max", 'max(go_gc_duration_seconds{quantile="1.0"})'))],
        P,
        {},
        id="max of maxima (quantile 1) is exact",
    ),
    pytest.param(
        "histogram-quantile-of-quantiles",
        [
            rule_file(
                record(
                    "service_pod:lat:p90",
                    "histogram_quantile(0.9, sum by (le, service, pod) (rate(lat_seconds_bucket[5m])))",
                ),
                record(
                    "service:lat:p90",
                    "histogram_quantile(0.9, sum by (le, service) (service_pod:lat:p90))",
                ),
            )
        ],
        F,
        {},
        id="histogram_quantile over recorded quantiles",
    ),
    pytest.param(
        "histogram-quantile-of-quantiles",
        [
            rule_file(
                record("job:lat_bucket:rate5m", "sum by (job) (rate(lat_seconds_bucket[5m]))"),
                record("job:lat:p99", "histogram_quantile(0.99, job:lat_bucket:rate5m)"),
            )
        ],
        F,
        {},
        id="histogram_quantile over a recorded bucket sum that dropped le",
    ),
    pytest.param(
        "histogram-quantile-of-quantiles",
        [
            rule_file(
                record("job:lat_bucket:rate5m", "sum by (job, le) (rate(lat_seconds_bucket[5m]))"),
                record("job:lat:p99", "histogram_quantile(0.99, job:lat_bucket:rate5m)"),
            )
        ],
        P,
        {},
        id="histogram_quantile over recorded bucket rates that keep le",
    ),
    # --- target versions
    pytest.param(
        "promql-function-version",
        [rule_file(alert("holt_winters(x[1h], 0.3, 0.3) > 1"))],
        F,
        {},
        id="issue 18 case 2: holt_winters, default target both",
    ),
    pytest.param(
        "promql-function-version",
        [rule_file(alert("holt_winters(x[1h], 0.3, 0.3) > 1"))],
        F,
        {"versions": ("3",)},
        id="holt_winters on Prometheus 3",
    ),
    pytest.param(
        "promql-function-version",
        [rule_file(alert("holt_winters(x[1h], 0.3, 0.3) > 1"))],
        P,
        {"versions": ("2",)},
        id="holt_winters on Prometheus 2 is fine",
    ),
    pytest.param(
        "promql-function-version",
        [rule_file(alert("double_exponential_smoothing(x[1h], 0.3, 0.3) > 1"))],
        F,
        {"versions": ("2",)},
        id="double_exponential_smoothing on Prometheus 2",
    ),
    pytest.param(
        "promql-function-version",
        [rule_file(alert("double_exponential_smoothing(x[1h], 0.3, 0.3) > 1"))],
        P,
        {"versions": ("3",)},
        id="double_exponential_smoothing on Prometheus 3",
    ),
    pytest.param(
        "promql-experimental-function",
        [
            rule_file(
                record("job:x:rate5m", 'sort_by_label(sum by (job) (rate(x_total[5m])), "job")')
            )
        ],
        F,
        {},
        id="sort_by_label needs the experimental-functions flag",
    ),
    pytest.param(
        "promql-experimental-function",
        [
            rule_file(
                record("job:x:rate5m", 'sort_by_label(sum by (job) (rate(x_total[5m])), "job")')
            )
        ],
        P,
        {"enabled_features": frozenset({"promql-experimental-functions"})},
        id="sort_by_label with the flag declared",
    ),
    pytest.param(
        "regex-dot-newline",
        [rule_file(record("job:x:count", r'count(x{msg=~"error.*\n.*"})'))],
        F,
        {},
        id="a regex about newlines with . in it",
    ),
    pytest.param(
        "regex-dot-newline",
        [rule_file(record("job:x:count", r'count(x{msg=~"error.*\n.*"})'))],
        P,
        {"versions": ("2",)},
        id="the same on Prometheus 2 only",
    ),
    pytest.param(
        "regex-dot-newline",
        [rule_file(record("job:x:count", 'count(x{job=~"api-.*"})'))],
        P,
        {},
        id="a regex with . that says nothing about newlines",
    ),
    pytest.param(
        "range-left-open",
        [rule_file(record("job:x:rate5m", "rate(job:x_total:sum[5m:5m])"))],
        F,
        {},
        id="rate over a subquery whose range equals its step",
    ),
    pytest.param(
        "range-left-open",
        [
            rule_file(
                record("job:x:sum", "sum by (job) (x)"),
                record("job:x:deriv", "deriv(job:x:sum[1m])"),
                interval="1m",
            )
        ],
        F,
        {},
        id="deriv over a recorded series for one evaluation interval",
    ),
    pytest.param(
        "range-left-open",
        [rule_file(record("job:x:rate5m", "rate(job:x_total:sum[5m:5m])"))],
        P,
        {"versions": ("2",)},
        id="subquery range equal to its step on Prometheus 2 (closed range)",
    ),
    pytest.param(
        "range-left-open",
        [rule_file(record("job:x:rate5m", "rate(job:x_total:sum[10m:5m])"))],
        P,
        {},
        id="subquery range of two steps",
    ),
    pytest.param(
        "duplicate-rule",
        [rule_file(alert("up == 0")), rule_file(alert("up  ==  0"))],
        F,
        {},
        id="same alert in two files",
    ),
    pytest.param(
        "duplicate-rule",
        [
            rule_file(
                record("code:x:increase1h", 'sum(increase(x_total{code=~"2.."}[1h]))'),
                record("code:x:increase1h", 'sum(increase(x_total{code=~"5.."}[1h]))'),
            )
        ],
        P,
        {},
        id="one record name over disjoint selections",
    ),
    pytest.param(
        "duplicate-rule",
        [prometheus_rule("a", alert("up == 0")), prometheus_rule("b", alert("up == 0"))],
        F,
        {},
        id="same alert in two PrometheusRule objects of different names",
    ),
    pytest.param(
        "duplicate-rule",
        [prometheus_rule("a", alert("up == 0"), alert("up == 0"))],
        F,
        {},
        id="same alert twice in one PrometheusRule",
    ),
    pytest.param(
        "duplicate-rule",
        [helm_values("a", alert("up == 0")), helm_values("b", alert("up == 0"))],
        F,
        {},
        id="same alert under two Helm rules-map keys",
    ),
    pytest.param(
        "duplicate-rule",
        [rule_file(alert("up == 0"), group="g"), prometheus_rule("a", alert("up == 0"), group="h")],
        F,
        {},
        id="same alert copied into another group of a PrometheusRule",
    ),
    pytest.param(
        "duplicate-rule",
        [rule_file(alert("up == 0")), prometheus_rule("a", alert("up == 0"))],
        P,
        {},
        id="one group as a plain rule file and as a PrometheusRule",
    ),
    pytest.param(
        "duplicate-rule",
        [rule_file(alert("up == 0")), helm_values("a", alert("up == 0"))],
        P,
        {},
        id="one group as a plain rule file and as Helm values",
    ),
    pytest.param(
        "duplicate-rule",
        [prometheus_rule("a", alert("up == 0")), helm_values("a", alert("up == 0"))],
        P,
        {},
        id="one group as a PrometheusRule and as Helm values",
    ),
    pytest.param(
        "duplicate-rule",
        [prometheus_rule("a", alert("up == 0")), prometheus_rule("a", alert("up == 0"))],
        P,
        {},
        id="one PrometheusRule object written in two files",
    ),
    pytest.param(
        "duplicate-rule",
        [helm_values("a", alert("up == 0")), helm_values("a", alert("up == 0"))],
        P,
        {},
        id="one Helm rules-map key in two values files (merged by Helm)",
    ),
    # --- input shapes
    pytest.param(
        "rule-shape",
        [
            {
                "apiVersion": "monitoring.coreos.com/v1",
                "kind": "PrometheusRule",
                "metadata": {"name": "x"},
                "spec": {"groups": {"g": {"rules": [alert("up == 0")]}}},
            }
        ],
        F,
        {},
        id="PrometheusRule whose spec.groups is a mapping",
    ),
    pytest.param(
        "rule-shape",
        [{"groups": {"name": "g", "rules": [alert("up == 0")]}}],
        F,
        {},
        id="plain rule file whose groups is a mapping",
    ),
    pytest.param(
        "rule-shape",
        [{"additionalPrometheusRulesMap": {"a": {"groups": {"name": "g"}}}}],
        F,
        {},
        id="Helm rules-map entry whose groups is a mapping",
    ),
    pytest.param(
        "rule-shape",
        [prometheus_rule("a", alert("up == 0"))],
        P,
        {},
        id="PrometheusRule with a list of groups",
    ),
    *LABEL_CASES,
    *DISABLE_CASES,
    *MORE_CASES,
]


@pytest.mark.parametrize(("check", "docs", "expected", "config"), CASES)
def test_check(
    lint: LintFn,
    check: str,
    docs: list[dict[str, Any] | str],
    expected: bool,
    config: dict[str, Any],
) -> None:
    report = lint(*docs, config=LintConfig(**config))
    hits = [f for f in report.findings if f.check == check]
    assert bool(hits) is expected, [f"{f.check}: {f.message}" for f in report.findings]


def test_every_check_has_a_failing_and_a_passing_case() -> None:
    engine_checks = {
        "promtool",
        "promql-parse",
        "rule-invalid",
        "unreadable-input",
    }  # test_engine.py
    engine_checks |= {c.id for c in all_checks() if c.family == "dashboards"}  # test_dashboards
    ids = {c.id for c in all_checks()} - engine_checks
    failing = {p.values[0] for p in CASES if p.values[2] is F}
    passing = {p.values[0] for p in CASES if p.values[2] is P}
    assert ids - failing == set()
    assert ids - passing == set()
