"""``burn-rate-below-budget``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "burn-rate-below-budget",
        [rule_file(alert("slo:sli_error:ratio_rate1h > (0.5 * (1 - 0.999))"))],
        F,
        {},
        id="burn factor one half",
    ),
    pytest.param(
        "burn-rate-below-budget",
        [rule_file(alert("slo:sli_error:ratio_rate1h > (14.4 * 0.001)"))],
        P,
        {},
        id="burn factor 14.4",
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
