"""``burn-rate-for-too-long``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import R1H, R5M, F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "burn-rate-for-too-long",
        [
            rule_file(
                alert(
                    f"{R1H} > (14.4 * (1 - 0.999)) and {R5M} > (14.4 * (1 - 0.999))",
                    **{"for": "1h"},
                )
            )
        ],
        F,
        {},
        id="for: 1h on a 1h/5m pair",
    ),
    pytest.param(
        "burn-rate-for-too-long",
        [
            rule_file(
                alert(
                    f"{R1H} > (14.4 * (1 - 0.999)) and {R5M} > (14.4 * (1 - 0.999))",
                    **{"for": "2m"},
                )
            )
        ],
        P,
        {},
        id="for: 2m on a 1h/5m pair",
    ),
    pytest.param(
        "burn-rate-for-too-long",
        [rule_file(alert("slo:sli_error:ratio_rate5m > 0.1", **{"for": "10m"}))],
        P,
        {},
        id="for on a single-window threshold alert is plain debouncing",
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
