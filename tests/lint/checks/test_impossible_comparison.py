"""``impossible-comparison``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, doc_case, record, rule_file

CASES = [
    doc_case(
        "impossible-comparison",
        rule_file(alert('count(up{job="api"} == 1) == 0')),
        F,
        "count() == 0 never holds: count of nothing is nothing",
    ),
    doc_case(
        "impossible-comparison",
        rule_file(alert('(count(up{job="api"} == 1) or vector(0)) == 0')),
        P,
        "fixed twin: or vector(0) before == 0",
    ),
    doc_case(
        "impossible-comparison",
        rule_file(alert('absent(up{job="api"}) > 1')),
        F,
        "absent() is 1: > 1 never holds",
    ),
    doc_case(
        "impossible-comparison", rule_file(alert('absent(up{job="api"})')), P, "plain absent()"
    ),
    doc_case(
        "impossible-comparison",
        rule_file(alert("rate(errors_total[5m]) < 0")),
        F,
        "rate() is never negative",
    ),
    doc_case(
        "impossible-comparison",
        rule_file(alert("0.5 < rate(errors_total[5m])")),
        P,
        "a threshold on the left of a rate",
    ),
    doc_case(
        "impossible-comparison",
        rule_file(alert("vector(1) > 2")),
        P,
        "vector(1) > 2: no constant pair, watchdog-style (not reported here)",
    ),
    doc_case(
        "impossible-comparison",
        rule_file(record("job:x:never", "1 > bool 2")),
        F,
        "two constants",
    ),
    doc_case(
        "impossible-comparison",
        rule_file(alert("rate(errors_total[5m]) > bool 1")),
        F,
        "an alert with bool fires for every series",
    ),
    doc_case(
        "impossible-comparison",
        rule_file(record("job:errors:above", "rate(errors_total[5m]) > bool 1")),
        P,
        "a recording rule may record 0/1 with bool",
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
