"""``rate-over-aggregated``: rate() over a recorded series that is already aggregated or already a
rate."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.counters import _already, _rate_first, _rated_selectors
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "rate-over-aggregated",
    Severity.WARNING,
    "counters",
    "rate() over a recorded series that is already aggregated or already a rate",
)
def rate_over_aggregated(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``rate(job:requests_total:sum[5m])``: sum first, rate second hides counter resets."""
    for path, call, name in _rated_selectors(tree):
        if not ctx.names.is_recorded(name):
            continue
        why = _already(name, ctx)
        if not why:
            continue
        arg = call.args[0]
        right = _rate_first(name, q.seconds(arg.range), ctx)  # type: ignore[attr-defined]
        if right is None and "rate" in why:
            right = printer.render(arg.vector_selector, path=(*path, 0, 0))  # type: ignore[attr-defined]
        advice = (
            f"write `{right}`"
            if right
            else "record sum(rate(<counter>[…])) and use the recorded rate directly"
        )
        yield Hit(
            f"{call.func.name}({name}[…]): {why}; rate first, then sum: {advice}",
            fix=Fix(expr=printer.render(tree, {path: right})) if right else None,
        )


CHECK = rate_over_aggregated
