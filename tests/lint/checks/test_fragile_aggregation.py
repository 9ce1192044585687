"""``fragile-aggregation``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, doc_case, rule_file

CASES = [
    doc_case(
        "fragile-aggregation",
        rule_file(alert("topk(10, rate(http_requests_total[5m]) > 0)")),
        F,
        "pint: topk(10, …) in an alert",
    ),
    doc_case(
        "fragile-aggregation",
        rule_file(alert("rate(http_requests_total[5m]) > 100")),
        P,
        "fixed twin: a threshold over every series",
    ),
    doc_case(
        "fragile-aggregation",
        rule_file(alert("topk by (namespace) (1, max without (instance) (kube_quota)) > 0.9")),
        P,
        "topk by (…) (1, …) de-duplicates",
    ),
    doc_case(
        "fragile-aggregation",
        rule_file(alert("count(topk(3, rate(x_total[5m]))) > 2")),
        P,
        "topk merged again by count()",
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
