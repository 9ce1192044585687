"""``regex-dot-newline``: a regex about line breaks whose `.` means something else on
Prometheus 3."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.versions import _NEWLINE_AWARE, _dots_outside_classes, single_line_dots
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import matcher_text, walk_paths
from generator.lint.registry import Context, Hit, rule_check
from generator.promql import quote


@rule_check(
    "regex-dot-newline",
    Severity.INFO,
    "versions",
    "a regex about line breaks whose `.` means something else on Prometheus 3",
)
def regex_dot_newline(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Prometheus 3 compiles matchers as ``(?s:…)``: ``.`` also matches a newline. Only
    regexes that mention line breaks (``\\n``, ``\\r``, an ``s`` flag) are reported: label
    values practically never hold one otherwise."""
    if "3" not in ctx.config.versions:
        return
    for path, node in walk_paths(tree):
        if not isinstance(node, P.VectorSelector) or node.matchers.or_matchers:
            continue
        for matcher in node.matchers.matchers:
            value = str(matcher.value)
            if not q.is_regex(matcher) or not _NEWLINE_AWARE.search(value):
                continue
            if not _dots_outside_classes(value):
                continue
            op = "=~" if matcher.op == P.MatchOp.Re else "!~"
            wanted = f"{matcher.name}{op}{quote(single_line_dots(value))}"
            kept = printer.selector_with(node, matcher.name, wanted)
            yield Hit(
                f"`{matcher_text(matcher)}` deals with line breaks, but on Prometheus 3 `.` "
                f"also matches a newline (on 2 it does not); write {wanted} to mean the same "
                "on both",
                fix=Fix(expr=printer.render(tree, selectors={path: kept})),
            )


CHECK = regex_dot_newline
