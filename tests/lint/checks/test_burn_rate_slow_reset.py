"""``burn-rate-slow-reset``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import NO_FOR, R1H, R5M, R30M, F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "burn-rate-slow-reset",
        [rule_file(alert(f"{R1H} > (14.4 * (1 - 0.999))", **NO_FOR))],
        F,
        {},
        id="a 1h window alone keeps firing ~59m after recovery",
    ),
    pytest.param(
        "burn-rate-slow-reset",
        [
            rule_file(
                alert(f"{R1H} > (14.4 * (1 - 0.999)) and {R30M} > (14.4 * (1 - 0.999))", **NO_FOR)
            )
        ],
        F,
        {},
        id="a 30m short window for a 1h long one",
    ),
    pytest.param(
        "burn-rate-slow-reset",
        [
            rule_file(
                alert(f"{R1H} > (14.4 * (1 - 0.999)) and {R5M} > (14.4 * (1 - 0.999))", **NO_FOR)
            )
        ],
        P,
        {},
        id="the Workbook pair 1h/5m",
    ),
    pytest.param(
        "burn-rate-slow-reset",
        [rule_file(alert("slo:sli_error:ratio_rate10m > 0.05"))],
        P,
        {},
        id="a 10m window alone resets within 10m",
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
