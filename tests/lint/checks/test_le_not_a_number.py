"""``le-not-a-number``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
    pytest.param(
        "le-not-a-number",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="0.5s"}[5m]))'))],
        F,
        {},
        id="le with a unit suffix is not a number",
    ),
    pytest.param(
        "le-not-a-number",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le=~"500ms|0.5"}[5m]))'))],
        F,
        {},
        id="le regex alternative with a unit",
    ),
    pytest.param(
        "le-not-a-number",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="0.5"}[5m]))'))],
        P,
        {},
        id="le in seconds is a number",
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
