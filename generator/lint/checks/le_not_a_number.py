"""``le-not-a-number``: an `le` matcher value that is not a number (`le="0.5s"`) matches no
bucket."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import bounds, printer
from generator.lint import promql as q
from generator.lint.checks.histograms import _as_seconds, _le_values
from generator.lint.model import Fix, Rule, Severity
from generator.lint.names import parse_go_float
from generator.lint.printer import matcher_text, walk_paths
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "le-not-a-number",
    Severity.ERROR,
    "histograms",
    'an `le` matcher value that is not a number (`le="0.5s"`) matches no bucket',
)
def le_not_a_number(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Bucket bounds are plain numbers in base units; ``"0.5s"`` or ``"500ms"`` never match."""
    for path, node in walk_paths(tree):
        if not isinstance(node, P.VectorSelector):
            continue
        for matcher in q.matchers(node):
            if matcher.name != "le":
                continue
            values = _le_values(matcher) or set()
            wrong = sorted(v for v in values if v and parse_go_float(v) is None)
            if not wrong:
                continue
            seconds = [_as_seconds(v) for v in sorted(values)]
            if matcher.op in (P.MatchOp.Equal, P.MatchOp.Re) and all(
                x is not None for x in seconds
            ):
                wanted = bounds.matcher_for(
                    [x for x in seconds if x is not None], ctx.config.versions
                )
                selector = printer.selector_with(node, "le", wanted)
                yield Hit(
                    f"`{matcher_text(matcher)}`: {wrong[0]!r} is not a number, so it matches "
                    f"no bucket; bounds are plain numbers in seconds: {wanted}",
                    fix=Fix(expr=printer.render(tree, selectors={path: selector})),
                )
            else:
                yield Hit(
                    f"`{matcher_text(matcher)}`: {wrong[0]!r} is not a number, so it matches "
                    "no bucket; write the bound as a plain number in the metric's base unit"
                )


CHECK = le_not_a_number
