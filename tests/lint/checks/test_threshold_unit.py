"""``threshold-unit``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "threshold-unit",
        [rule_file(alert("vllm:gpu_cache_usage_perc > 90"))],
        F,
        {},
        id="percent threshold on vLLM's 0-1 KV-cache usage",
    ),
    pytest.param(
        "threshold-unit",
        [rule_file(alert("vllm:gpu_cache_usage_perc > 0.9"))],
        P,
        {},
        id="ratio threshold on vLLM's KV-cache usage",
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
