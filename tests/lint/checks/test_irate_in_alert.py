"""``irate-in-alert``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import (
    ISSUE_IRATE,
    ISSUE_IRATE_FIXED,
    NO_FOR,
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
        "irate-in-alert", rule_file(alert(ISSUE_IRATE, **{"for": "5m"})), F, "issue: irate with for"
    ),
    doc_case("irate-in-alert", rule_file(alert(ISSUE_IRATE_FIXED)), P, "fixed twin: rate"),
    doc_case(
        "irate-in-alert",
        rule_file(alert("idelta(queue_depth[5m]) > 10", **NO_FOR)),
        F,
        "idelta without for flaps",
    ),
    doc_case(
        "irate-in-alert",
        rule_file(
            record("job:http_requests:irate5m", "sum by (job) (irate(http_requests_total[5m]))"),
            alert("job:http_requests:irate5m > 1"),
        ),
        F,
        "an alert on a series recorded with irate",
    ),
    doc_case(
        "irate-in-alert",
        rule_file(
            record("job:http_requests:irate5m", "sum by (job) (irate(http_requests_total[5m]))")
        ),
        P,
        "irate in a recording rule no alert reads (for dashboards)",
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
