"""``rate-over-aggregated``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
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
