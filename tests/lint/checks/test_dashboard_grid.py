"""``dashboard-grid``: dashboards it must report and dashboards it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, dashboard, panel

C = "dashboard-grid"

CASES = [
    pytest.param(
        C,
        [dashboard(panel("A", grid=(0, 0, 12, 8)), panel("B", grid=(6, 4, 12, 8)))],
        F,
        {},
        id="two panels overlapping",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", grid=(0, 0, 30, 8)))],
        F,
        {},
        id="a panel wider than the 24 columns",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", gridPos={"x": 0, "y": 0, "w": 12}))],
        F,
        {},
        id="a gridPos without its height",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", gridPos=None))],
        F,
        {},
        id="a panel without a gridPos",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", grid=(0, 0, 12, 8)), panel("B", grid=(12, 0, 12, 8)))],
        P,
        {},
        id="two panels side by side",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", grid=(0, 0, 24, 8)), panel("B", grid=(0, 8, 24, 8)))],
        P,
        {},
        id="two full-width panels one above the other",
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
