"""``absent-without-for``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "absent-without-for",
        [rule_file(alert('absent(up{job="x"})', **{"for": None}))],
        F,
        {},
        id="absent without for",
    ),
    pytest.param(
        "absent-without-for", [rule_file(alert('absent(up{job="x"})'))], P, {}, id="absent with for"
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
