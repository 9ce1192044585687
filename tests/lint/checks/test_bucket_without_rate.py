"""``bucket-without-rate``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import F, LintFn, P, alert, case_result, record, rule_file

CASES = [
    pytest.param(
        "bucket-without-rate",
        [
            rule_file(
                record("service:latency:p90", "histogram_quantile(0.9, sum by (le) (x_bucket))")
            )
        ],
        F,
        {},
        id="quantile over raw cumulative buckets",
    ),
    pytest.param(
        "bucket-without-rate",
        [rule_file(record("service:slow:ratio", 'sum(x_bucket{le="0.5"}) / sum(x_count)'))],
        F,
        {},
        id="bucket arithmetic without rate",
    ),
    pytest.param(
        "bucket-without-rate",
        [
            rule_file(
                record(
                    "service:fast:increase1m",
                    'sum((x_bucket{le="0.5"} - x_bucket{le="0.5"} offset 1m) >= 0 '
                    'or (x_bucket{le="0.5"} and x_bucket{le="0.5"} offset 1m))',
                )
            )
        ],
        P,
        {},
        id="exact reset-aware increase of a bucket (offset difference, new value on reset)",
    ),
    pytest.param(
        "bucket-without-rate",
        [
            rule_file(
                record(
                    "service:fast:increase1m",
                    'sum((x_bucket{le="0.5"} - x_bucket{le="0.5"} offset 1m) >= 0 '
                    'or (x_bucket{le="1"} and x_bucket{le="0.5"} offset 1m))',
                )
            )
        ],
        F,
        {},
        id="an or-branch of another bucket is still raw",
    ),
    pytest.param(
        "bucket-without-rate",
        [
            rule_file(
                record(
                    "service:latency:p90",
                    "histogram_quantile(0.9, sum by (le) (rate(x_bucket[5m])))",
                )
            )
        ],
        P,
        {},
        id="quantile over rated buckets",
    ),
    pytest.param(
        "bucket-without-rate",
        [
            rule_file(
                alert(
                    "BucketMissing",
                    'group by (namespace) (up == 1) unless on (namespace) group by (namespace) (x_bucket{le="0.5"})',
                )
            )
        ],
        P,
        {},
        id="group() of buckets is a presence test, not their values",
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
