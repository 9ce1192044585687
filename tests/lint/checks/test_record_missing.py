"""``record-missing``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, doc_case, record, rule_file

CASES = [
    doc_case(
        "record-missing",
        rule_file(alert("job:http_errors:rate5m > 1")),
        F,
        "an alert on a record no linted rule writes",
    ),
    pytest.param(
        "record-missing",
        [
            rule_file(record("job:http_errors:rate5m", "sum by (job) (rate(errors_total[5m]))")),
            rule_file(alert("job:http_errors:rate5m > 1")),
        ],
        P,
        {},
        id="the record is written in another linted file",
    ),
    doc_case(
        "record-missing",
        rule_file(alert("rate(vllm:request_success_total[5m]) > 1")),
        P,
        "a scraped name with one colon (vLLM) is no record",
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
