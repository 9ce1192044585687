"""``rate-filter-before-quantile``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, record, rule_file

CASES = [
    pytest.param(
        "rate-filter-before-quantile",
        [
            rule_file(
                record(
                    "service:latency:p90",
                    "histogram_quantile(0.9, sum by (le) (rate(x_bucket[5m]) > 0))",
                )
            )
        ],
        F,
        {},
        id="rate > 0 inside histogram_quantile",
    ),
    pytest.param(
        "rate-filter-before-quantile",
        [rule_file(alert("histogram_quantile(0.9, sum by (le) (rate(x_bucket[5m]))) > 2"))],
        P,
        {},
        id="comparing the quantile itself",
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
