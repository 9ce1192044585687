"""``group-interval-too-long``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
    pytest.param(
        "group-interval-too-long",
        [rule_file(record("job:x:rate5m", "sum(rate(x_total[5m]))"), interval="10m")],
        F,
        {},
        id="group evaluated every 10m",
    ),
    pytest.param(
        "group-interval-too-long",
        [rule_file(record("job:x:rate5m", "sum(rate(x_total[5m]))"), interval="1m")],
        P,
        {},
        id="group evaluated every 1m",
    ),
    pytest.param(
        "group-interval-too-long",
        [rule_file(record("job:x:rate5m", "sum(rate(x_total[5m]))"), interval="5m")],
        F,
        {},
        id="group evaluated every 5m: left-open lookback on Prometheus 3",
    ),
    pytest.param(
        "group-interval-too-long",
        [rule_file(record("job:x:rate5m", "sum(rate(x_total[5m]))"), interval="5m")],
        P,
        {"versions": ("2",)},
        id="group evaluated every 5m on Prometheus 2",
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
