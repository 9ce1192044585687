"""``promql-function-version``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "promql-function-version",
        [rule_file(alert("holt_winters(x[1h], 0.3, 0.3) > 1"))],
        F,
        {},
        id="issue 18 case 2: holt_winters, default target both",
    ),
    pytest.param(
        "promql-function-version",
        [rule_file(alert("holt_winters(x[1h], 0.3, 0.3) > 1"))],
        F,
        {"versions": ("3",)},
        id="holt_winters on Prometheus 3",
    ),
    pytest.param(
        "promql-function-version",
        [rule_file(alert("holt_winters(x[1h], 0.3, 0.3) > 1"))],
        P,
        {"versions": ("2",)},
        id="holt_winters on Prometheus 2 is fine",
    ),
    pytest.param(
        "promql-function-version",
        [rule_file(alert("double_exponential_smoothing(x[1h], 0.3, 0.3) > 1"))],
        F,
        {"versions": ("2",)},
        id="double_exponential_smoothing on Prometheus 2",
    ),
    pytest.param(
        "promql-function-version",
        [rule_file(alert("double_exponential_smoothing(x[1h], 0.3, 0.3) > 1"))],
        P,
        {"versions": ("3",)},
        id="double_exponential_smoothing on Prometheus 3",
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
