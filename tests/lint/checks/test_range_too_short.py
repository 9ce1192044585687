"""``range-too-short``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "range-too-short",
        [rule_file(alert("rate(x_total[1m]) > 1"))],
        F,
        {},
        id="1m window at a 30s scrape",
    ),
    pytest.param(
        "range-too-short",
        [rule_file(alert("rate(x_total[2m]) > 1"))],
        P,
        {},
        id="2m window at a 30s scrape",
    ),
    pytest.param(
        "range-too-short",
        [rule_file(alert("rate(x_total[1m]) > 1"))],
        P,
        {"scrape_interval": 15.0},
        id="1m window at a 15s scrape",
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
