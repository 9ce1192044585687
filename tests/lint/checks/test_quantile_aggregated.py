"""``quantile-aggregated``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, record, rule_file

CASES = [
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
]


@pytest.mark.parametrize(("check", "docs", "expected", "config"), CASES)
def test_check(
    lint: LintFn,
    check: str,
    docs: list[dict[str, Any] | str],
    expected: bool,
    config: dict[str, Any],
) -> None:
    case_result(lint, check, docs, expected, config)
