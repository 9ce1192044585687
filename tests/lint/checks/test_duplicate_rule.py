"""``duplicate-rule``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import (
    F,
    LintFn,
    P,
    alert,
    case_result,
    helm_values,
    prometheus_rule,
    record,
    rule_file,
)

CASES = [
    pytest.param(
        "duplicate-rule",
        [rule_file(alert("up == 0")), rule_file(alert("up  ==  0"))],
        F,
        {},
        id="same alert in two files",
    ),
    pytest.param(
        "duplicate-rule",
        [
            rule_file(
                record("code:x:increase1h", 'sum(increase(x_total{code=~"2.."}[1h]))'),
                record("code:x:increase1h", 'sum(increase(x_total{code=~"5.."}[1h]))'),
            )
        ],
        P,
        {},
        id="one record name over disjoint selections",
    ),
    pytest.param(
        "duplicate-rule",
        [prometheus_rule("a", alert("up == 0")), prometheus_rule("b", alert("up == 0"))],
        F,
        {},
        id="same alert in two PrometheusRule objects of different names",
    ),
    pytest.param(
        "duplicate-rule",
        [prometheus_rule("a", alert("up == 0"), alert("up == 0"))],
        F,
        {},
        id="same alert twice in one PrometheusRule",
    ),
    pytest.param(
        "duplicate-rule",
        [helm_values("a", alert("up == 0")), helm_values("b", alert("up == 0"))],
        F,
        {},
        id="same alert under two Helm rules-map keys",
    ),
    pytest.param(
        "duplicate-rule",
        [rule_file(alert("up == 0"), group="g"), prometheus_rule("a", alert("up == 0"), group="h")],
        F,
        {},
        id="same alert copied into another group of a PrometheusRule",
    ),
    pytest.param(
        "duplicate-rule",
        [rule_file(alert("up == 0")), prometheus_rule("a", alert("up == 0"))],
        P,
        {},
        id="one group as a plain rule file and as a PrometheusRule",
    ),
    pytest.param(
        "duplicate-rule",
        [rule_file(alert("up == 0")), helm_values("a", alert("up == 0"))],
        P,
        {},
        id="one group as a plain rule file and as Helm values",
    ),
    pytest.param(
        "duplicate-rule",
        [prometheus_rule("a", alert("up == 0")), helm_values("a", alert("up == 0"))],
        P,
        {},
        id="one group as a PrometheusRule and as Helm values",
    ),
    pytest.param(
        "duplicate-rule",
        [prometheus_rule("a", alert("up == 0")), prometheus_rule("a", alert("up == 0"))],
        P,
        {},
        id="one PrometheusRule object written in two files",
    ),
    pytest.param(
        "duplicate-rule",
        [helm_values("a", alert("up == 0")), helm_values("a", alert("up == 0"))],
        P,
        {},
        id="one Helm rules-map key in two values files (merged by Helm)",
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
