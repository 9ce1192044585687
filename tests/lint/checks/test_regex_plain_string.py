"""``regex-plain-string``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "regex-plain-string",
        [rule_file(alert('rate(x_total{method=~"GET"}[5m]) > 1'))],
        F,
        {},
        id="regex on a plain string",
    ),
    pytest.param(
        "regex-plain-string",
        [rule_file(alert('rate(x_total{method=~"GET|POST"}[5m]) > 1'))],
        P,
        {},
        id="regex alternation",
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
