"""``histogram-quantile-without-le``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
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
