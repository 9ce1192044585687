"""``regex-redundant-anchor``: a regex matcher anchored with ^ or $ (Prometheus anchors every
matcher)."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import promql as q
from generator.lint.checks.hygiene import (
    _ANCHOR_EXEMPT,
    _regex_matchers,
    _strip_anchors,
    _with_matcher,
)
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import matcher_text
from generator.lint.regex import is_anchored, is_plain
from generator.lint.registry import Context, Hit, rule_check
from generator.promql import quote


@rule_check(
    "regex-redundant-anchor",
    Severity.INFO,
    "hygiene",
    "a regex matcher anchored with ^ or $ (Prometheus anchors every matcher)",
)
def regex_redundant_anchor(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``job=~"^api$"``: the anchors are implied and suggest an unanchored match elsewhere."""
    for path, node, matcher in _regex_matchers(tree):
        value = str(matcher.value)
        if matcher.name in _ANCHOR_EXEMPT or not is_anchored(value):
            continue
        stripped = _strip_anchors(value)
        if is_plain(stripped):  # what is left is a literal: an equality says it plainly
            op = "=" if matcher.op == P.MatchOp.Re else "!="
            stripped = stripped.replace("\\", "")
        else:
            op = "=~" if matcher.op == P.MatchOp.Re else "!~"
        wanted = f"{matcher.name}{op}{quote(stripped)}"
        yield Hit(
            f"`{matcher_text(matcher)}`: Prometheus already anchors regex matchers; write {wanted}",
            fix=Fix(expr=_with_matcher(tree, path, node, matcher, wanted)),
        )


CHECK = regex_redundant_anchor
