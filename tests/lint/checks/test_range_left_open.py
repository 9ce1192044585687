"""``range-left-open``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
    pytest.param(
        "range-left-open",
        [rule_file(record("job:x:rate5m", "rate(job:x_total:sum[5m:5m])"))],
        F,
        {},
        id="rate over a subquery whose range equals its step",
    ),
    pytest.param(
        "range-left-open",
        [
            rule_file(
                record("job:x:sum", "sum by (job) (x)"),
                record("job:x:deriv", "deriv(job:x:sum[1m])"),
                interval="1m",
            )
        ],
        F,
        {},
        id="deriv over a recorded series for one evaluation interval",
    ),
    pytest.param(
        "range-left-open",
        [rule_file(record("job:x:rate5m", "rate(job:x_total:sum[5m:5m])"))],
        P,
        {"versions": ("2",)},
        id="subquery range equal to its step on Prometheus 2 (closed range)",
    ),
    pytest.param(
        "range-left-open",
        [rule_file(record("job:x:rate5m", "rate(job:x_total:sum[10m:5m])"))],
        P,
        {},
        id="subquery range of two steps",
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
