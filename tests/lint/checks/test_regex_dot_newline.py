"""``regex-dot-newline``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
    pytest.param(
        "regex-dot-newline",
        [rule_file(record("job:x:count", r'count(x{msg=~"error.*\n.*"})'))],
        F,
        {},
        id="a regex about newlines with . in it",
    ),
    pytest.param(
        "regex-dot-newline",
        [rule_file(record("job:x:count", r'count(x{msg=~"error.*\n.*"})'))],
        P,
        {"versions": ("2",)},
        id="the same on Prometheus 2 only",
    ),
    pytest.param(
        "regex-dot-newline",
        [rule_file(record("job:x:count", 'count(x{job=~"api-.*"})'))],
        P,
        {},
        id="a regex with . that says nothing about newlines",
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
