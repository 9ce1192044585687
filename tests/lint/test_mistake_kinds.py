"""tests/lint/data/mistake_kinds.rules.yaml: one rule per mistake kind, each with the checks it
must get and no other (bench/pint_compare.py measures the same file against pint)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from generator.lint import LintConfig, lint_paths

FIXTURE = Path(__file__).resolve().parent / "data" / "mistake_kinds.rules.yaml"

EXPECTED = {
    "job:vllm_e2e_seconds:p99": ["histogram-quantile-without-le"],
    "job:sglang_ttft_seconds:p90": ["bucket-without-rate"],
    "VllmPreemptions": ["counter-compared-raw"],
    "VllmQueueGrowing": ["rate-on-gauge"],
    "ErrorRatioAlwaysOne": ["vector-matching"],
    "job:request_seconds:apdex_rate5m": ["vector-matching"],
    "InstanceShare": ["vector-matching"],
    "UnlessSum": ["alert-without-comparison", "vector-matching"],
    "job:latency_seconds:p99": ["histogram-input"],
    "job:latency_seconds:p90": ["histogram-input", "label-removed"],
    "job:vllm_ttft_seconds:p50": ["histogram-input"],
    "job:requests:count_rate5m": ["histogram-input"],
    "KvCacheFull": ["threshold-unit"],
    "InterTokenLatencyHigh": ["threshold-unit"],
    "MemoryAlmostFull": ["threshold-unit"],
    "job:latency_seconds:avg_mean": ["nan-in-aggregation"],
    "TooManyErrors": ["counter-compared-raw"],
    "QueueRate": ["rate-on-gauge"],
    "job:http_get:rate5m": ["regex-plain-string", "regex-redundant-anchor"],
    "TopQueues": ["fragile-aggregation"],
    "ErrorsHigh": ["template-label"],
    "Down": ["alert-for-value"],
}


def test_every_mistake_gets_its_checks_and_no_other() -> None:
    report = lint_paths([str(FIXTURE)], LintConfig(), promtool=False)
    found: dict[str, list[str]] = defaultdict(list)
    for finding in report.findings:
        found[finding.rule].append(finding.check)
    assert {rule: sorted(checks) for rule, checks in found.items()} == EXPECTED
