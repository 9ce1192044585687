"""``burn-rate-never-fires``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import NO_FOR, R1H, R5M, F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "burn-rate-never-fires",
        [rule_file(alert(f"{R1H} > (14.4 * (1 - 0.9)) and {R5M} > (14.4 * (1 - 0.9))", **NO_FOR))],
        F,
        {},
        id="14.4x a 10% budget is a 144% error ratio",
    ),
    pytest.param(
        "burn-rate-never-fires",
        [rule_file(alert(f"{R1H} > (6 * (1 - 0.9)) and {R5M} > (6 * (1 - 0.9))", **NO_FOR))],
        P,
        {},
        id="6x a 10% budget is 60%",
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
