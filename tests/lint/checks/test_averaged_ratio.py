"""``averaged-ratio``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
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
