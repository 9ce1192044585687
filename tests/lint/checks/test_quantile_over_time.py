"""``quantile-over-time``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, record, rule_file

CASES = [
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
