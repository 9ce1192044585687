"""``regex-redundant-anchor``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, record, rule_file

CASES = [
    pytest.param(
        "regex-redundant-anchor",
        [rule_file(alert('rate(x_total{job=~"^api$"}[5m]) > 1'))],
        F,
        {},
        id="anchored job regex",
    ),
    pytest.param(
        "regex-redundant-anchor",
        [
            rule_file(
                record(
                    "job:x_slow:rate5m", 'sum by (job) (rate(x_bucket{le=~"^(?:1|1\\\\.0)$"}[5m]))'
                )
            )
        ],
        P,
        {},
        id="anchored le compat regex is deliberate",
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
