"""``burn-rate-window-mismatch``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "burn-rate-window-mismatch",
        [
            rule_file(
                alert(
                    "slo:sli_error:ratio_rate1h > (14.4 * 0.001) and "
                    "slo:sli_error:ratio_rate5m > (6 * 0.001)"
                )
            )
        ],
        F,
        {},
        id="pair with different thresholds",
    ),
    pytest.param(
        "burn-rate-window-mismatch",
        [
            rule_file(
                alert(
                    "slo:sli_error:ratio_rate1h > (14.4 * 0.001) and "
                    "slo:sli_error:ratio_rate1h > (14.4 * 0.001)"
                )
            )
        ],
        F,
        {},
        id="pair with the same window twice",
    ),
    pytest.param(
        "burn-rate-window-mismatch",
        [
            rule_file(
                alert(
                    "slo:sli_error:ratio_rate1h > (14.4 * 0.001) and "
                    "slo:sli_error:ratio_rate5m > (14.4 * 0.001)"
                )
            )
        ],
        P,
        {},
        id="1h and 5m pair at 14.4",
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
