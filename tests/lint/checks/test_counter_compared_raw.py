"""``counter-compared-raw``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "counter-compared-raw",
        [rule_file(alert("http_errors_total > 5"))],
        F,
        {},
        id="raw counter above a threshold",
    ),
    pytest.param(
        "counter-compared-raw",
        [rule_file(alert("sum(http_errors_total) > 5"))],
        F,
        {},
        id="sum of raw counters above a threshold",
    ),
    pytest.param(
        "counter-compared-raw",
        [rule_file(alert("increase(http_errors_total[10m]) > 5"))],
        P,
        {},
        id="increase of a counter above a threshold",
    ),
    pytest.param(
        "counter-compared-raw",
        [rule_file(alert("(http_errors_total - http_errors_total offset 1m) >= 0"))],
        P,
        {},
        id="a counter minus itself one offset ago is an increase",
    ),
    pytest.param(
        "counter-compared-raw",
        [rule_file(alert('(http_errors_total - http_errors_total{code="500"} offset 1m) > 5'))],
        F,
        {},
        id="a counter minus another selection is still raw",
    ),
    pytest.param(
        "counter-compared-raw",
        [
            rule_file(
                alert(
                    "x_count > 0 and on (job) histogram_quantile(0.01, sum by (job, le) "
                    "(rate(x_bucket[5m]))) < 3600"
                )
            )
        ],
        P,
        {},
        id="raw count as an existence guard of and",
    ),
    pytest.param(
        "counter-compared-raw",
        [rule_file(alert("devices_total == 0"))],
        P,
        {},
        id="counter equal to zero is a state test",
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
