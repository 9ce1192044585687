"""``promql-experimental-function``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
    pytest.param(
        "promql-experimental-function",
        [
            rule_file(
                record("job:x:rate5m", 'sort_by_label(sum by (job) (rate(x_total[5m])), "job")')
            )
        ],
        F,
        {},
        id="sort_by_label needs the experimental-functions flag",
    ),
    pytest.param(
        "promql-experimental-function",
        [
            rule_file(
                record("job:x:rate5m", 'sort_by_label(sum by (job) (rate(x_total[5m])), "job")')
            )
        ],
        P,
        {"enabled_features": frozenset({"promql-experimental-functions"})},
        id="sort_by_label with the flag declared",
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
