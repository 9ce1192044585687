"""``range-too-short``: a rate-like range window shorter than 4x the scrape interval."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.hygiene import _WINDOW_FACTOR
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import Path, walk_paths
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "range-too-short",
    Severity.WARNING,
    "hygiene",
    "a rate-like range window shorter than 4x the scrape interval",
)
def range_too_short(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``rate(x[1m])`` at a 30s scrape sees two samples; one missed scrape empties it."""
    minimum = _WINDOW_FACTOR * ctx.config.scrape_interval
    replace: dict[Path, str] = {}
    found: list[tuple[str, float]] = []
    for path, node in walk_paths(tree):
        call = q.as_call(node, *q.SAMPLE_HUNGRY_FUNCS)
        if call is None or not call.args:
            continue
        func, arg = call.func.name, call.args[0]
        if not isinstance(arg, P.MatrixSelector):
            continue
        window = q.seconds(arg.range)
        if window < minimum:
            replace[(*path, 0)] = printer.with_range(arg, minimum, (*path, 0))
            if (func, window) not in found:
                found.append((func, window))
    fix = Fix(expr=printer.render(tree, replace)) if replace else None
    for func, window in found:
        yield Hit(
            f"{func}(…[{q.fmt_seconds(window)}]) is shorter than 4 × the "
            f"{q.fmt_seconds(ctx.config.scrape_interval)} scrape interval; use "
            f"[{q.fmt_seconds(minimum)}] (or set `scrapeInterval` in .obsgen-lint.yaml)",
            fix=fix,
        )


CHECK = range_too_short
