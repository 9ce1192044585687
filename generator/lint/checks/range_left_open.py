"""``range-left-open``: a range that holds one sample fewer on Prometheus 3 (left-open) and so
returns nothing."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.versions import _TWO_SAMPLES, _recorded_interval
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import walk_paths
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "range-left-open",
    Severity.WARNING,
    "versions",
    "a range that holds one sample fewer on Prometheus 3 (left-open) and so returns nothing",
)
def range_left_open(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Prometheus 3 selects ``(t − range, t]`` instead of ``[t − range, t]``. A subquery or a
    recorded series (both sampled on an exact grid) read over a range equal to its step
    loses the sample at the start: ``rate(x[5m:5m])`` has one point and returns nothing."""
    if "3" not in ctx.config.versions:
        return
    for path, node in walk_paths(tree):
        call = q.as_call(node, *_TWO_SAMPLES)
        if call is None or not call.args:
            continue
        arg = call.args[0]
        if isinstance(arg, P.SubqueryExpr):
            window = q.seconds(arg.range)
            step = q.seconds(arg.step) if arg.step is not None else ctx.config.scrape_interval
            what = f"the subquery [{q.fmt_seconds(window)}:{q.fmt_seconds(step)}]"
        elif isinstance(arg, P.MatrixSelector) and ctx.names.is_recorded(q.selector_name(arg)):
            interval = _recorded_interval(q.selector_name(arg), ctx)
            if interval is None:
                continue
            window, step = q.seconds(arg.range), interval
            what = f"`{q.selector_name(arg)}` (recorded every {q.fmt_seconds(step)})"
        else:
            continue
        if window > step:
            continue
        seconds = max(2 * step, 4 * ctx.config.scrape_interval)  # range-too-short's minimum
        wider = printer.with_range(arg, seconds, (*path, 0))
        yield Hit(
            f"{call.func.name}() over {what} sees one sample on Prometheus 3, whose ranges "
            f"exclude their start, and returns nothing; use a range of at least two steps: "
            f"`{wider}`",
            fix=Fix(expr=printer.render(tree, {(*path, 0): wider})),
        )


CHECK = range_left_open
