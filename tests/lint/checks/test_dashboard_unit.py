"""``dashboard-unit``: dashboards it must report and dashboards it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, dashboard, panel

C = "dashboard-unit"

CASES = [
    pytest.param(
        C,
        [dashboard(panel("A", fieldConfig={"defaults": {}, "overrides": []}))],
        F,
        {},
        id="a panel without a unit",
    ),
    pytest.param(
        C,
        [dashboard(panel("Row", type="row", panels=[panel("Inner", fieldConfig=None)]))],
        F,
        {},
        id="a collapsed row's panel without a field config",
    ),
    pytest.param(C, [dashboard(panel("A"))], P, {}, id="a panel with a unit"),
    pytest.param(
        C,
        [dashboard(panel("Row", type="row", fieldConfig=None, targets=None))],
        P,
        {},
        id="a row (it shows no values)",
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
