"""``dashboard-datasource``: dashboards it must report and dashboards it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, dashboard, panel

C = "dashboard-datasource"

CASES = [
    pytest.param(
        C,
        [dashboard(panel("A", datasource=None))],
        F,
        {},
        id="a panel without a datasource",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", targets=[{"expr": "up", "refId": "A"}]))],
        F,
        {},
        id="a target without a datasource",
    ),
    pytest.param(C, [dashboard(panel("A"))], P, {}, id="a panel and its target naming one"),
    pytest.param(
        C,
        [dashboard(panel("Row", type="row", datasource=None, targets=None))],
        P,
        {},
        id="a row (it queries nothing)",
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
