"""``alert-without-comparison``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "alert-without-comparison",
        [rule_file(alert("rate(http_errors_total[5m])"))],
        F,
        {},
        id="alert on a bare rate",
    ),
    pytest.param(
        "alert-without-comparison",
        [rule_file(alert("rate(http_errors_total[5m]) > 0.1"))],
        P,
        {},
        id="alert with a threshold",
    ),
    pytest.param(
        "alert-without-comparison",
        [rule_file(alert("vector(1)", name="Watchdog"))],
        P,
        {},
        id="always-firing watchdog",
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
