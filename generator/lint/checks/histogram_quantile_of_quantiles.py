"""``histogram-quantile-of-quantiles``: histogram_quantile over quantiles, or over a recorded
bucket rate that dropped `le`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.quantiles import (
    _le_dropped_by_record,
    _phi_words,
    _requested_grouping,
    quantile_of,
)
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import walk_paths
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "histogram-quantile-of-quantiles",
    Severity.ERROR,
    "quantiles",
    "histogram_quantile over quantiles, or over a recorded bucket rate that dropped `le`",
)
def histogram_quantile_of_quantiles(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``histogram_quantile(0.99, p99_series)`` has no ``le`` to work with: it returns nothing."""
    for path, node in walk_paths(tree):
        call = q.as_call(node, "histogram_quantile")
        if call is None or len(call.args) != 2:
            continue
        for sub, _ in q.walk(call.args[1]):
            if not isinstance(sub, P.VectorSelector):
                continue
            found = quantile_of(sub, ctx)
            if found is not None:
                phi = q.constant(call.args[0])
                wanted = replace(found, phi=phi) if phi is not None else found
                right = wanted.correct_form(_requested_grouping(call.args[1]), None)
                yield Hit(
                    f"histogram_quantile() over `{q.selector_name(sub)}`, which already holds "
                    f"{_phi_words(found)} (known from {found.how}): it has no `le` buckets, so "
                    "the result is empty; take the quantile of the bucket rates"
                    + (f": `{right}`" if right else ""),
                    fix=Fix(expr=printer.render(tree, {path: right})) if right else None,
                )
                break
            dropped = _le_dropped_by_record(q.selector_name(sub), ctx)
            if dropped:
                yield Hit(
                    f"histogram_quantile() over `{q.selector_name(sub)}`, whose recording rule "
                    f"aggregates the buckets with `{dropped}` and so drops `le`: the quantile "
                    "is empty; keep `le` in that rule's grouping"
                )
                break


CHECK = histogram_quantile_of_quantiles
