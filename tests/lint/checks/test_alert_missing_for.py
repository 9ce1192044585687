"""``alert-missing-for``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, rule_file

CASES = [
    pytest.param(
        "alert-missing-for",
        [rule_file(alert("rate(http_errors_total[5m]) > 10", **{"for": None}))],
        F,
        {},
        id="short-window threshold without for",
    ),
    pytest.param(
        "alert-missing-for",
        [rule_file(alert("queue_depth > 100", **{"for": "0m"}))],
        F,
        {},
        id="gauge threshold with for 0m",
    ),
    pytest.param(
        "alert-missing-for",
        [rule_file(alert("rate(http_errors_total[5m]) > 10"))],
        P,
        {},
        id="short-window threshold with for",
    ),
    pytest.param(
        "alert-missing-for",
        [rule_file(alert("increase(oom_events_total[5m]) > 0", **{"for": None}))],
        P,
        {},
        id="event alert needs no for",
    ),
    pytest.param(
        "alert-missing-for",
        [
            rule_file(
                alert(
                    "slo:sli_error:ratio_rate1h > (14.4 * 0.001) and "
                    "slo:sli_error:ratio_rate5m > (14.4 * 0.001)",
                    **{"for": None},
                )
            )
        ],
        P,
        {},
        id="multiwindow burn alert needs no for",
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
