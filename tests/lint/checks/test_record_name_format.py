"""``record-name-format``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
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
