"""``group-interval-too-long``: a rule group `interval` of 5m or more (above 5m on Prometheus 2):
recorded series go stale."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from generator.lint import promql as q
from generator.lint.checks.hygiene import MAX_GROUP_INTERVAL, SUGGESTED_INTERVAL
from generator.lint.model import Fix, Rule, Severity, SourceFile
from generator.lint.registry import Context, Hit, set_check


@set_check(
    "group-interval-too-long",
    Severity.WARNING,
    "hygiene",
    "a rule group `interval` of 5m or more (above 5m on Prometheus 2): recorded series go stale",
)
def group_interval_too_long(
    files: Sequence[SourceFile], trees: Mapping[Rule, q.Expr | None], ctx: Context
) -> Iterator[tuple[SourceFile, Rule | None, Hit]]:
    """``interval: 10m`` outlives the 5m lookback: queries see gaps, alerts flap."""
    for source in files:
        for group in source.groups:
            interval = group.raw.get("interval")
            if interval is None:
                continue
            try:
                seconds = q.parse_duration(str(interval))
            except ValueError:
                continue  # promtool reports it
            # Prometheus 3's lookback is left-open: a sample exactly 5m old is not found.
            left_open = "3" in ctx.config.versions
            if seconds > MAX_GROUP_INTERVAL or (left_open and seconds == MAX_GROUP_INTERVAL):
                limit = "below 5m" if left_open else "5m or less"
                yield (
                    source,
                    None,
                    Hit(
                        f"group {group.name!r} is evaluated every {interval}: its recorded "
                        "series go stale between evaluations (the 5m lookback"
                        f"{' excludes a sample exactly 5m old on Prometheus 3' if left_open else ''}"
                        f"); evaluate it every {SUGGESTED_INTERVAL} (anything {limit} works)",
                        line=group.line,
                        fix=Fix(fields=(("group.interval", SUGGESTED_INTERVAL),)),
                    ),
                )


CHECK = group_interval_too_long
