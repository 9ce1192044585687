"""``counter-compared-raw``: a counter compared to a threshold without rate()/increase()."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.counters import _gauge_named_count, _raw_counters, _state_test
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "counter-compared-raw",
    Severity.WARNING,
    "counters",
    "a counter compared to a threshold without rate()/increase()",
)
def counter_compared_raw(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``errors_total > 5`` holds forever after the fifth error since the process started."""
    window = q.fmt_seconds(max(300.0, 4 * ctx.config.scrape_interval))
    seen: set[str] = set()
    for path, node, ancestors in printer.walk_full(tree):
        if not q.is_comparison(node):
            continue
        if _state_test(node, ancestors):
            continue
        for index, side in enumerate((node.lhs, node.rhs)):
            for at, name in _raw_counters(side, (*path, index), ctx):
                if name in seen or _gauge_named_count(name, tree, ctx):
                    continue
                seen.add(name)
                selector = printer.render(printer.node_at(tree, at), path=at)
                increase = f"increase({selector}[{window}])"
                yield Hit(
                    f"counter `{name}` is compared raw (`{q.op(node)}`): its value counts since "
                    f"the process started; compare its increase over a window instead: "
                    f"`{increase}`",
                    fix=Fix(expr=printer.render(tree, {at: increase})),
                )


CHECK = counter_compared_raw
