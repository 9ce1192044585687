"""``label-removed``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, doc_case, record, rule_file

CASES = [
    doc_case(
        "label-removed",
        rule_file(record("cluster:errors:group", "group by (cluster) (sum(errors_total))")),
        F,
        "pint: group by (cluster) over sum()",
    ),
    doc_case(
        "label-removed",
        rule_file(
            record("cluster:errors:group", "group by (cluster) (sum by (cluster) (errors_total))")
        ),
        P,
        "group by (cluster) over sum by (cluster)",
    ),
    doc_case(
        "label-removed",
        rule_file(record("cluster:foo_bar:ratio", "sum(foo) / on (cluster) count(bar)")),
        F,
        "pint: on (cluster) between two sum()s",
    ),
    doc_case(
        "label-removed",
        rule_file(
            record(
                "cluster:foo_bar:ratio",
                "sum by (cluster) (foo) / on (cluster) count by (cluster) (bar)",
            )
        ),
        P,
        "on (cluster) between two by (cluster)",
    ),
    doc_case(
        "label-removed",
        rule_file(
            alert(
                "service_ready and on (instance) (service_errors == 0) "
                "* on (cluster) group_left (env, location) cluster_info"
            )
        ),
        F,
        "pint: group_left labels on the right of and never reach the result",
    ),
    doc_case(
        "label-removed",
        rule_file(
            alert(
                "(service_ready and on (instance) (service_errors == 0)) "
                "* on (cluster) group_left (env, location) cluster_info"
            )
        ),
        P,
        "pint's fix: the and in parentheses before the join",
    ),
    doc_case(
        "label-removed",
        rule_file(alert("up * on (cluster) group_left (env) sum by (cluster) (cluster_info) == 0")),
        F,
        "group_left copies a label the right side summed away",
    ),
    doc_case(
        "label-removed",
        rule_file(
            alert("up * on (cluster) group_left (env) max by (cluster, env) (cluster_info) == 0")
        ),
        P,
        "group_left copies a label the right side keeps",
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
