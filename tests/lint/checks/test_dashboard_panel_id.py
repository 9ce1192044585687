"""``dashboard-panel-id``: dashboards it must report and dashboards it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, dashboard, panel

C = "dashboard-panel-id"

CASES = [
    pytest.param(
        C,
        [dashboard(panel("A", id=1), panel("B", id=1, grid=(12, 0, 12, 8)))],
        F,
        {},
        id="two panels sharing an id",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", id=1), panel("B", grid=(12, 0, 12, 8)))],
        F,
        {},
        id="a panel without an id among numbered ones",
    ),
    pytest.param(
        C,
        [
            dashboard(
                panel("Row", type="row", id=1, grid=(0, 0, 24, 1), panels=[panel("Inner", id=1)]),
                panel("B", id=2, grid=(0, 1, 12, 8)),
            )
        ],
        F,
        {},
        id="a collapsed row's panel reusing the row's id",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", id=1), panel("B", id=2, grid=(12, 0, 12, 8)))],
        P,
        {},
        id="unique ids",
    ),
    pytest.param(
        C,
        [dashboard(panel("A"), panel("B", grid=(12, 0, 12, 8)))],
        P,
        {},
        id="no panel has an id (Grafana assigns them on import)",
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
