"""``disable-comment``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import TODAY, F, LintFn, P, case_result, commented

CASES = [
    pytest.param(
        "disable-comment",
        [commented("# obsgen lint disable irate-in-alrt")],
        F,
        TODAY,
        id="a misspelt check id",
    ),
    pytest.param(
        "disable-comment",
        [commented("# obsgen lint disable irate-in-alert until 2026-12-02")],
        F,
        TODAY,
        id="an expired disable comment",
    ),
    pytest.param(
        "disable-comment",
        [commented("# obsgen lint disable irate-in-alert until 2026-31-12")],
        F,
        TODAY,
        id="a date that is no date",
    ),
    pytest.param(
        "disable-comment",
        [commented("# obsgen lint disable irate-in-alert until 2027-01-31")],
        P,
        TODAY,
        id="a disable comment still in force",
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
