"""``histogram-quantile-of-quantiles``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
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
