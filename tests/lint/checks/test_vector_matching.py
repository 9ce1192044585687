"""``vector-matching``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import (
    ISSUE_ERRORS,
    ISSUE_ERRORS_FIXED,
    F,
    LintFn,
    P,
    alert,
    case_result,
    doc_case,
    record,
    rule_file,
)

CASES = [
    doc_case(
        "vector-matching",
        rule_file(alert(ISSUE_ERRORS)),
        F,
        "issue: sum by (handler, status) / sum by (handler)",
    ),
    doc_case(
        "vector-matching", rule_file(alert(ISSUE_ERRORS_FIXED)), P, "fixed twin: both by (handler)"
    ),
    doc_case(
        "vector-matching",
        rule_file(
            alert(
                'sum by (handler, status) (rate(http_requests_total{status="5xx"}[5m])) '
                "/ ignoring (status) group_left sum by (handler) (rate(http_requests_total[5m])) "
                "> 0.05"
            )
        ),
        P,
        "fixed twin: ignoring (status) group_left",
    ),
    doc_case(
        "vector-matching",
        rule_file(
            alert(
                'rate(http_errors_total{instance="a"}[5m]) '
                "/ sum by (cluster) (rate(http_errors_total[5m])) > 0.1"
            )
        ),
        F,
        "pint: an instance series over a cluster aggregate",
    ),
    doc_case(
        "vector-matching",
        rule_file(
            alert(
                'sum by (cluster, instance) (rate(http_errors_total{instance="a"}[5m])) '
                "/ ignoring (instance) group_left sum by (cluster) (rate(http_errors_total[5m])) "
                "> 0.1"
            )
        ),
        P,
        "pint's fix: ignoring (instance)",
    ),
    doc_case(
        "vector-matching",
        rule_file(alert('foo{job="bar"} unless sum(foo)')),
        F,
        "pint: unless against sum() never removes anything",
    ),
    doc_case(
        "vector-matching",
        rule_file(alert('foo{job="bar"} unless on (job) sum by (job) (foo)')),
        P,
        "unless on (job) against sum by (job)",
    ),
    doc_case(
        "vector-matching",
        rule_file(
            record("job:up:sum", "sum by (job) (up)"),
            alert('up{instance="a"} == 0 and job:up:sum > 0'),
        ),
        F,
        "and with a recorded series that dropped the matched label",
    ),
    doc_case(
        "vector-matching",
        rule_file(
            record("job:up:sum", "sum by (job) (up)"),
            alert('up{instance="a"} == 0 and on (job) job:up:sum > 0'),
        ),
        P,
        "and on (job) with the recorded series",
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
