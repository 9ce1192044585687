"""``burn-rate-budget-spend``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import (
    NO_FOR,
    R1H,
    R3D,
    R5M,
    R6H,
    R30M,
    F,
    LintFn,
    P,
    alert,
    case_result,
    record,
    rule_file,
)

CASES = [
    pytest.param(
        "burn-rate-budget-spend",
        [
            rule_file(
                alert(f"{R3D} > (14.4 * (1 - 0.999)) and {R6H} > (14.4 * (1 - 0.999))", **NO_FOR)
            )
        ],
        F,
        {},
        id="14.4x over 3d spends 144% of the budget before firing",
    ),
    pytest.param(
        "burn-rate-budget-spend",
        [rule_file(alert(f"{R1H} > (1 * (1 - 0.999)) and {R5M} > (1 * (1 - 0.999))", **NO_FOR))],
        F,
        {},
        id="1x over 1h pages on 0.14% of the budget",
    ),
    pytest.param(
        "burn-rate-budget-spend",
        [rule_file(alert(f"{R6H} > (6 * (1 - 0.999)) and {R30M} > (6 * (1 - 0.999))", **NO_FOR))],
        P,
        {},
        id="the Workbook tier 6x over 6h spends 5%",
    ),
    pytest.param(
        "burn-rate-budget-spend",
        [
            rule_file(
                record("slo:burn_rate:ratio_rate30m", f"{R30M} / 0.05"),
                alert(f"{R30M} > 0.72 and {R5M} > 0.72", **NO_FOR),
            )
        ],
        P,
        {},
        id="14.4x over 30m at 95 percent spends exactly 1% (0.72 / 0.05 in floats is 14.399...)",
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
