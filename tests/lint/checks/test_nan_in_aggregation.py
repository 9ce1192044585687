"""``nan-in-aggregation``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "nan-in-aggregation",
        [rule_file(alert("avg(rate(x_seconds_sum[5m]) / rate(x_seconds_count[5m])) > 1"))],
        F,
        {},
        id="average of per-series means: NaN while one series is idle",
    ),
    pytest.param(
        "nan-in-aggregation",
        [rule_file(alert("sum(rate(x_seconds_sum[5m])) / sum(rate(x_seconds_count[5m])) > 1"))],
        P,
        {},
        id="aggregate first, then divide",
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
