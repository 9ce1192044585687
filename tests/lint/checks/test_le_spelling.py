"""``le-spelling``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1"}[5m]))'))],
        F,
        {},
        id="le 1 is stored as 1.0 by Prometheus 3",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1800000"}[5m]))'))],
        F,
        {},
        id="le 1800000 is stored as 1.8e+06",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="0.00005"}[5m]))'))],
        F,
        {},
        id="le 0.00005 is stored as 5e-05",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1.0"}[5m]))'))],
        P,
        {"versions": ("3",)},
        id="le 1.0 is the Prometheus 3 spelling",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1.0"}[5m]))'))],
        F,
        {},
        id="le 1.0 misses Go clients' 1 on Prometheus 2 (default target: both)",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1.8e+06"}[5m]))'))],
        P,
        {"versions": ("3",)},
        id="le 1.8e+06 is the Prometheus 3 spelling",
    ),
    pytest.param(
        "le-spelling",
        [
            rule_file(
                record("service:slow:rate5m", 'sum(rate(x_bucket{le=~"^(?:1|1\\\\.0)$"}[5m]))')
            )
        ],
        P,
        {},
        id="anchored compat regex matches both spellings",
    ),
    pytest.param(
        "le-spelling",
        [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le=~"1(\\\\.0)?"}[5m]))'))],
        P,
        {},
        id="optional .0 regex matches both spellings",
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
