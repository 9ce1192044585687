"""What differs between the Prometheus versions a rule file may target (2.x and 3.x).

Sources: the Prometheus 3.0 migration guide and release notes (``holt_winters`` renamed
``double_exponential_smoothing`` and moved behind ``--enable-feature=promql-experimental-functions``;
regex ``.`` matches newlines; range selectors and the lookback delta are left-open; ``le`` and
``quantile`` label values normalised to floats), and ``promql/parser/functions.go`` of 2.55 and
3.x for which functions exist and which are experimental.
"""

from __future__ import annotations

from collections.abc import Iterable

VERSIONS = ("2", "3")
TARGETS = ("2", "3", "both")

# Functions of one major version only (name -> the version that has it).
ONLY_IN: dict[str, str] = {
    "holt_winters": "2",
    "double_exponential_smoothing": "3",
    "info": "3",
    "first_over_time": "3",
    "ts_of_first_over_time": "3",
    "ts_of_last_over_time": "3",
    "ts_of_max_over_time": "3",
    "ts_of_min_over_time": "3",
    "histogram_quantiles": "3",
    "integral": "3",
    "start": "3",
    "end": "3",
    "range": "3",
    "step": "3",
}
# The same function under another name in the other version (same arguments).
RENAMED: dict[str, str] = {
    "holt_winters": "double_exponential_smoothing",
    "double_exponential_smoothing": "holt_winters",
}
# Functions and aggregations a version only accepts with
# `--enable-feature=promql-experimental-functions` (rule files using them fail to load without).
EXPERIMENTAL: dict[str, frozenset[str]] = {
    "2": frozenset(
        {"sort_by_label", "sort_by_label_desc", "mad_over_time", "limitk", "limit_ratio"}
    ),
    "3": frozenset(
        {
            "sort_by_label",
            "sort_by_label_desc",
            "mad_over_time",
            "limitk",
            "limit_ratio",
            "double_exponential_smoothing",
            "info",
            "first_over_time",
            "ts_of_first_over_time",
            "ts_of_last_over_time",
            "ts_of_max_over_time",
            "ts_of_min_over_time",
            "histogram_quantiles",
            "integral",
            "start",
            "end",
            "range",
            "step",
        }
    ),
}


def parse_target(text: str) -> tuple[str, ...]:
    """``"2"`` -> ``("2",)``, ``"3"`` -> ``("3",)``, ``"both"`` -> ``("2", "3")``.

    Raises:
        ValueError: anything else.
    """
    if text == "both":
        return VERSIONS
    if text in VERSIONS:
        return (text,)
    raise ValueError(f"unknown Prometheus version {text!r}; expected 2, 3 or both")


def describe(versions: Iterable[str]) -> str:
    """``"Prometheus 2"``, ``"Prometheus 3"`` or ``"Prometheus 2 and 3"``."""
    return "Prometheus " + " and ".join(sorted(versions))
