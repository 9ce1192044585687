"""``regex-plain-string``: a regex matcher on a plain string (`=~"GET"` instead of `="GET"`)."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import promql as q
from generator.lint.checks.hygiene import _regex_matchers, _with_matcher
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import matcher_text
from generator.lint.regex import is_plain
from generator.lint.registry import Context, Hit, rule_check
from generator.promql import quote


@rule_check(
    "regex-plain-string",
    Severity.INFO,
    "hygiene",
    'a regex matcher on a plain string (`=~"GET"` instead of `="GET"`)',
)
def regex_plain_string(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``method=~"GET"`` runs the regex engine for an equality test."""
    for path, node, matcher in _regex_matchers(tree):
        value = str(matcher.value)
        if is_plain(value):
            equal = "=" if matcher.op == P.MatchOp.Re else "!="
            wanted = f"{matcher.name}{equal}{quote(value.replace(chr(92), ''))}"
            yield Hit(
                f"`{matcher_text(matcher)}` has no regex operator; write {wanted}",
                fix=Fix(expr=_with_matcher(tree, path, node, matcher, wanted)),
            )


CHECK = regex_plain_string
