"""``rate-on-gauge``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, case_result, record, rule_file

CASES = [
    pytest.param(
        "rate-on-gauge",
        [
            rule_file(
                record("job:queue_depth:rate5m", "sum by (job) (rate(inference_queue_depth[5m]))")
            )
        ],
        F,
        {},
        id="rate of a gauge",
    ),
    pytest.param(
        "rate-on-gauge",
        [
            rule_file(
                record(
                    "job:x:rate5m",
                    "sum by (job) (rate(http_requests_total[5m])) + sum by (job) "
                    "(rate(x_count[5m])) + sum by (job) (rate(x_sum[5m]))",
                )
            )
        ],
        P,
        {},
        id="rate of _total _count _sum counters",
    ),
    pytest.param(
        "rate-on-gauge",
        [rule_file(record("instance:faults:rate5m", "rate(node_vmstat_pgmajfault[5m])"))],
        P,
        {},
        id="rate of a legacy node_vmstat counter",
    ),
    pytest.param(
        "rate-on-gauge",
        [rule_file(record("job:legacy:rate5m", "rate(my_legacy_requests[5m])"))],
        P,
        {"counters": ("my_legacy_.*",)},
        id="rate of a counter listed in the config",
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
