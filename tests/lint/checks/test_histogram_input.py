"""``histogram-input``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "histogram-input",
        [rule_file(alert("histogram_quantile(0.99, http_request_duration_seconds) > 1"))],
        F,
        {},
        id="histogram_quantile over a bare histogram name, no rate",
    ),
    pytest.param(
        "histogram-input",
        [rule_file(alert("histogram_quantile(0.9, sum by (le) (rate(x_seconds_count[5m]))) > 1"))],
        F,
        {},
        id="histogram_quantile over a _count",
    ),
    pytest.param(
        "histogram-input",
        [rule_file(alert("histogram_sum(rate(x_seconds_sum[5m])) > 1"))],
        F,
        {},
        id="histogram_sum over a classic _sum",
    ),
    pytest.param(
        "histogram-input",
        [rule_file(alert("histogram_quantile(0.9, sum(rate(x_seconds[5m]))) > 1"))],
        P,
        {},
        id="a native histogram under rate",
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
