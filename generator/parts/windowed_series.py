"""Series for windowed alerts' promtool cases: per-minute sample lists and the held time.

Windowed alerts (:func:`generator.parts.common.held_for`: targets down, replicas short,
crash loops, GPU slowdown) count the subquery steps at which their condition held; the cases
predict that count from one sample per test step (:data:`Minutes`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from generator.parts.promtool_series import INTERVAL_MS, Series, promtool_group
from generator.parts.series_parts import Minutes as Minutes
from generator.parts.series_parts import values_text as values_text
from generator.parts.series_parts import without as without
from generator.promql import Matcher

if TYPE_CHECKING:
    from generator.plan import ServicePlan


def sample(values: Minutes, t_ms: int) -> float | None:
    """The sample a query at ``t_ms`` sees (the step's own: no series here skips a step)."""
    i = t_ms // INTERVAL_MS
    return values[i] if 0 <= i < len(values) else None


def held_seconds(
    plan: ServicePlan, held: Callable[[int], bool], at_ms: int, window_ms: int
) -> float:
    """What ``held_for``'s ``count_over_time((…)[window:step]) * step`` returns at ``at_ms``
    (seconds): the steps are the multiples of ``spec.prometheus.scrapeInterval`` after
    ``at_ms - window_ms + step / 2`` (the subquery's range, off any step, so Prometheus 2 and 3
    count the same steps) up to ``at_ms``, none before the first sample at 0; ``held(t)`` says
    whether the condition holds at step ``t``."""
    step = plan.scrape_interval_ms
    first = max(0, -(-(at_ms - window_ms + step // 2) // step) * step)
    return sum(step for t in range(first, at_ms + 1, step) if held(t)) / 1000


def cycle(
    healthy_min: int, bad: float, good: float, bad_min: int, good_min: int, length: int
) -> Minutes:
    """``good`` for ``healthy_min`` minutes, then ``bad_min`` minutes of ``bad`` and
    ``good_min`` of ``good`` over and over (a crash loop, a flapping brake)."""
    cycle = [bad] * bad_min + [good] * good_min
    return [good] * healthy_min + [cycle[i % len(cycle)] for i in range(length - healthy_min)]


def first_firing(
    plan: ServicePlan, held: Callable[[int], bool], window_ms: int, least_s: float, length: int
) -> int:
    """The first test step (ms) at which the held time is at least ``least_s`` plus one step
    (a margin against an off-by-one step).

    Raises:
        ValueError: it never is within ``length`` steps (the case would prove nothing).
    """
    margin = least_s + plan.scrape_interval_ms / 1000
    for i in range(1, length):
        if held_seconds(plan, held, i * INTERVAL_MS, window_ms) >= margin:
            return i * INTERVAL_MS
    raise ValueError("a windowed alert case never reaches its threshold")


def gauge_group(name: str, s: Series, length: int, tests: list[dict[str, Any]]) -> dict[str, Any]:
    """A test group named ``name`` on ``s`` rendered for ``length`` steps, running ``tests``."""
    return promtool_group(name, s.render(length), tests)


def selected(m: Matcher, labels: Mapping[str, str]) -> bool:
    """Whether a series with ``labels`` matches ``m`` (regexes fully anchored, as PromQL's)."""
    value = labels.get(m.label, "")
    if m.op == "=":
        return value == m.value
    if m.op == "!=":
        return value != m.value
    full = re.fullmatch(m.value, value) is not None
    return full if m.op == "=~" else not full
