"""``rule-shape``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, prometheus_rule

CASES = [
    pytest.param(
        "rule-shape",
        [
            {
                "apiVersion": "monitoring.coreos.com/v1",
                "kind": "PrometheusRule",
                "metadata": {"name": "x"},
                "spec": {"groups": {"g": {"rules": [alert("up == 0")]}}},
            }
        ],
        F,
        {},
        id="PrometheusRule whose spec.groups is a mapping",
    ),
    pytest.param(
        "rule-shape",
        [{"groups": {"name": "g", "rules": [alert("up == 0")]}}],
        F,
        {},
        id="plain rule file whose groups is a mapping",
    ),
    pytest.param(
        "rule-shape",
        [{"additionalPrometheusRulesMap": {"a": {"groups": {"name": "g"}}}}],
        F,
        {},
        id="Helm rules-map entry whose groups is a mapping",
    ),
    pytest.param(
        "rule-shape",
        [prometheus_rule("a", alert("up == 0"))],
        P,
        {},
        id="PrometheusRule with a list of groups",
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
