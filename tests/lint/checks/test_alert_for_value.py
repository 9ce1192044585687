"""``alert-for-value``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, doc_case, rule_file

CASES = [
    doc_case("alert-for-value", rule_file(alert("up == 0", **{"for": "0m"})), F, "for: 0m"),
    doc_case("alert-for-value", rule_file(alert("up == 0", **{"for": "5m"})), P, "for: 5m"),
    doc_case(
        "alert-for-value",
        rule_file(alert("up == 0", keep_firing_for="0s")),
        F,
        "keep_firing_for: 0s",
    ),
    doc_case(
        "alert-for-value",
        rule_file(alert("up == 0", keep_firing_for="10m")),
        P,
        "keep_firing_for: 10m",
    ),
    doc_case(
        "alert-for-value",
        rule_file(alert("up == 0", **{"for": "1m"}), interval="5m"),
        F,
        "for shorter than the group interval",
    ),
    doc_case(
        "alert-for-value",
        rule_file(alert("up == 0", **{"for": "10m"}), interval="5m"),
        P,
        "for longer than the group interval",
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
