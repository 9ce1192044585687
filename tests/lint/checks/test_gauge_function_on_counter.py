"""``gauge-function-on-counter``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "gauge-function-on-counter",
        [rule_file(alert("delta(node_vmstat_oom_kill[30m]) > 0"))],
        F,
        {},
        id="delta of a counter",
    ),
    pytest.param(
        "gauge-function-on-counter",
        [rule_file(alert("delta(node_memory_MemAvailable_bytes[30m]) < 0"))],
        P,
        {},
        id="delta of a gauge",
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
