"""``dashboard-unused-variable``: dashboards it must report and dashboards it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, dashboard, panel

C = "dashboard-unused-variable"

_POD = {"name": "pod", "type": "query", "query": "label_values(up, pod)"}
_NAMESPACE = {"name": "namespace", "type": "query", "query": "label_values(up, namespace)"}
_POD_IN = dict(_POD, query='label_values(up{namespace=~"$namespace"}, pod)')

CASES = [
    pytest.param(
        C,
        [dashboard(panel("A", "up"), variables=(_POD,))],
        F,
        {},
        id="a variable no query uses",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", 'up{pod=~"$pod"}'), variables=(_POD, _NAMESPACE))],
        F,
        {},
        id="one of two variables unused",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", 'up{pod=~"${pod}"}'), variables=(_POD,))],
        P,
        {},
        id="a variable a panel query uses",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", 'up{pod=~"$pod"}'), variables=(_POD_IN, _NAMESPACE))],
        P,
        {},
        id="a variable another variable's query uses",
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
