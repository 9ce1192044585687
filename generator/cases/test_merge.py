"""Merge generated promtool test cases that can share one input block.

When two cases may share an input block, and why no assertion changes: docs/proof.md,
"Merging promtool test cases".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from generator.promql import names_in, series_metric
from generator.units import parse_duration_ms

_LAST_RUN = re.compile(r"^(.*)x(\d+)$")
ALERTS_SERIES = "ALERTS"
# A merged block's name lists its cases; past this length the block takes no more (promtool
# prints the name of a failing group, and it must stay one readable line).
MAX_NAME_CHARS = 1500


def reads(groups: Sequence[Mapping[str, Any]]) -> dict[str, frozenset[str]]:
    """Every name each alert of the rule ``groups`` reads: the names in its expression and,
    through each recording rule it reads, in that rule's, transitively. ``{alert: names}``."""
    records: dict[str, set[str]] = {}
    alerts: dict[str, set[str]] = {}
    for group in groups:
        for rule in group["rules"]:
            names = names_in(rule["expr"])
            if "record" in rule:
                records.setdefault(rule["record"], set()).update(names)
            else:
                alerts.setdefault(rule["alert"], set()).update(names)
    closed: dict[str, frozenset[str]] = {}

    def close(names: set[str]) -> set[str]:
        seen, todo = set(names), list(names)
        while todo:
            for name in records.get(todo.pop(), ()):
                if name not in seen:
                    seen.add(name)
                    todo.append(name)
        return seen

    for alert, names in alerts.items():
        closed[alert] = frozenset(close(names))
    return closed


# Each input series' metric name, parsed once per process: merging compares every block's
# series with every other block's (bounded: cleared when it grows past the limit).
_METRICS: dict[str, str] = {}
_METRICS_LIMIT = 65536


def _metric(series: str) -> str:
    metric = _METRICS.get(series)
    if metric is None:
        if len(_METRICS) >= _METRICS_LIMIT:
            _METRICS.clear()
        metric = _METRICS[series] = series_metric(series)
    return metric


# _same_run's answers: the blocks of one file hold the same few values strings many times.
_RUNS: dict[tuple[str, str], str | None] = {}


def _same_run(a: str, b: str) -> str | None:
    """The longer of two ``values`` strings that are the same input up to the shorter's end,
    or None (remembered per process, bounded as :data:`_METRICS`)."""
    if a == b:
        return a
    pair = (a, b)
    if pair in _RUNS:
        return _RUNS[pair]
    if len(_RUNS) >= _METRICS_LIMIT:
        _RUNS.clear()
    found = _RUNS[pair] = _run_of(a, b)
    return found


def _run_of(a: str, b: str) -> str | None:
    head_a, space_a, last_a = a.rpartition(" ")
    head_b, space_b, last_b = b.rpartition(" ")
    if head_a != head_b or space_a != space_b:
        return None
    run_a, run_b = _LAST_RUN.match(last_a), _LAST_RUN.match(last_b)
    if run_a is None or run_b is None or run_a.group(1) != run_b.group(1):
        return None
    return a if int(run_a.group(2)) >= int(run_b.group(2)) else b


@dataclass
class _Block:
    interval: str
    names: list[str]
    series: dict[str, str]
    tests: list[dict[str, Any]]
    reads: set[str] = field(default_factory=set)

    def merged(self, other: _Block) -> dict[str, str] | None:
        """The input series of this block and ``other`` together, or None when they clash.

        Every clash is found before the series are copied (most pairs of blocks clash): the
        result is this block's series, in their order, with ``other``'s changes applied in
        ``other``'s order (new series after them)."""
        if other.interval != self.interval:
            return None
        names = len(self.names) + len(other.names)
        chars = sum(map(len, self.names)) + sum(map(len, other.names)) + 3 * (names - 1)
        if chars > MAX_NAME_CHARS:  # the length of the joined name " | ".join(names)
            return None
        mine_series, theirs = self.series, other.series
        mine_reads, their_reads = self.reads, other.reads
        changes: dict[str, str] = {}
        for key, values in theirs.items():
            mine = mine_series.get(key)
            if mine is None:
                if _metric(key) in mine_reads:
                    return None
                changes[key] = values
                continue
            same = _same_run(mine, values)
            if same is not None:
                changes[key] = same
                continue
            metric = _metric(key)
            if metric in their_reads:
                if metric in mine_reads:
                    return None
                changes[key] = values
        for key in mine_series:
            if key not in theirs and _metric(key) in their_reads:
                return None
        out = dict(mine_series)
        out.update(changes)
        return out


def _block(group: Mapping[str, Any], alert_reads: Mapping[str, frozenset[str]]) -> _Block | None:
    if set(group) != {"name", "interval", "input_series", "alert_rule_test"}:
        return None
    read: set[str] = set()
    for test in group["alert_rule_test"]:
        names = alert_reads.get(test["alertname"])
        if names is None or ALERTS_SERIES in names:
            return None
        read |= names
    series = {s["series"]: s["values"] for s in group["input_series"]}
    if len(series) != len(group["input_series"]):
        return None  # a series given twice: keep the case as written
    return _Block(group["interval"], [group["name"]], series, list(group["alert_rule_test"]), read)


def _last_eval_ms(group: Mapping[str, Any]) -> int:
    return max((parse_duration_ms(t["eval_time"]) for t in group["alert_rule_test"]), default=0)


def merge_cases(
    groups: Sequence[dict[str, Any]], alert_reads: Mapping[str, frozenset[str]]
) -> list[dict[str, Any]]:
    """``groups`` (promtool test groups of one file) with every group that can share an input
    block with another merged into it; longest groups first, each block keeping its cases'
    assertions in order and only the input series they read. ``alert_reads``: :func:`reads`
    of the rule file tested.
    """
    order = sorted(range(len(groups)), key=lambda i: -_last_eval_ms(groups[i]))
    blocks: list[_Block] = []
    kept: list[dict[str, Any]] = []
    for index in order:
        block = _block(groups[index], alert_reads)
        if block is None:
            kept.append(groups[index])
            continue
        for existing in blocks:
            series = existing.merged(block)
            if series is not None:
                existing.series = series
                existing.names.extend(block.names)
                existing.tests.extend(t for t in block.tests if t not in existing.tests)
                existing.reads |= block.reads
                break
        else:
            blocks.append(block)
    merged = [
        {
            "name": " | ".join(b.names),
            "interval": b.interval,
            "input_series": [
                {"series": k, "values": v} for k, v in b.series.items() if _metric(k) in b.reads
            ],
            "alert_rule_test": b.tests,
        }
        for b in blocks
    ]
    return merged + kept
