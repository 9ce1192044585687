"""``alert-severity-value``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "alert-severity-value",
        [rule_file(alert("up == 0", labels={"severity": "page"}))],
        F,
        {},
        id="severity page",
    ),
    pytest.param(
        "alert-severity-value",
        [rule_file(alert("up == 0", labels={"severity": "critical"}))],
        P,
        {},
        id="severity critical",
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
