"""``bucket-sum-across-le``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
    pytest.param(
        "bucket-sum-across-le",
        [rule_file(record("job:x:rate5m", "sum by (job) (rate(x_bucket[5m]))"))],
        F,
        {},
        id="sum by job adds every bucket",
    ),
    pytest.param(
        "bucket-sum-across-le",
        [rule_file(record("job:x_slow:rate5m", 'sum by (job) (rate(x_bucket{le="0.5"}[5m]))'))],
        P,
        {},
        id="sum of one pinned bucket",
    ),
    pytest.param(
        "bucket-sum-across-le",
        [
            rule_file(
                record(
                    "job:x_slow:rate5m", 'sum by (job) (rate(x_bucket{le=~"^(?:1|1\\\\.0)$"}[5m]))'
                )
            )
        ],
        P,
        {},
        id="sum of one bucket in compat spelling",
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
