"""``dashboard-rate-interval``: dashboards it must report and dashboards it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, dashboard, panel

C = "dashboard-rate-interval"

CASES = [
    pytest.param(
        C,
        [dashboard(panel("A", "sum(rate(http_requests_total[5m]))"))],
        F,
        {},
        id="a rate over a fixed 5m range",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", "max_over_time(queue_depth[$__interval])"))],
        F,
        {},
        id="a range of $__interval",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", "sum(rate(http_requests_total[$__rate_interval]))"))],
        P,
        {},
        id="[$__rate_interval]",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", "sum(rate(http_requests_total[${__rate_interval}]))"))],
        P,
        {},
        id="[${__rate_interval}]",
    ),
    pytest.param(
        C,
        [dashboard(panel("A", 'up{pod=~"model-[a-z0-9]+"}'))],
        P,
        {},
        id="brackets inside a label regex are no range",
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
