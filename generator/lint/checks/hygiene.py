"""Helpers of the hygiene checks: naming, matchers, windows, group intervals, duplicates."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.model import Rule
from generator.lint.printer import Path, matcher_text, walk_paths
from generator.lint.regex import is_anchored
from generator.promql import selector_text

# Labels whose anchored regexes are a deliberate, documented form (bucket/quantile spelling
# across Prometheus 2 and 3: le=~"^(?:1|1\\.0)$").
_ANCHOR_EXEMPT = frozenset({"le", "quantile"})
# Longest group interval (seconds): beyond the 5m lookback, recorded series go stale between
# evaluations and alerts see gaps.
MAX_GROUP_INTERVAL = 300.0
SUGGESTED_INTERVAL = "1m"  # Prometheus' default evaluation_interval
_WINDOW_FACTOR = 4


def _regex_matchers(tree: q.Expr) -> Iterator[tuple[Path, P.VectorSelector, P.Matcher]]:
    for path, node in walk_paths(tree):
        if isinstance(node, P.VectorSelector) and not node.matchers.or_matchers:
            for matcher in node.matchers.matchers:
                if q.is_regex(matcher):
                    yield path, node, matcher


def _with_matcher(
    tree: q.Expr, path: Path, node: P.VectorSelector, old: P.Matcher, new: str
) -> str:
    """The expression with ``old`` (one matcher of the selector at ``path``) replaced."""
    name = str(node.name) if node.name else q.selector_name(node)
    kept = [
        new
        if m is old or (m.name == old.name and m.op == old.op and m.value == old.value)
        else matcher_text(m)
        for m in node.matchers.matchers
        if not (name and printer.is_name_matcher(m, name))
    ]
    return printer.render(tree, selectors={path: selector_text(name, kept)})


def _strip_anchors(pattern: str) -> str:
    if pattern.startswith("^"):
        pattern = pattern[1:]
    if is_anchored(pattern) and pattern.endswith("$"):
        pattern = pattern[:-1]
    return pattern


def _identity(rule: Rule, tree: q.Expr | None) -> tuple[str, str, tuple[tuple[str, str], ...], str]:
    expr = str(tree) if tree is not None else " ".join(rule.expr.split())
    return rule.kind, rule.name, tuple(sorted(rule.labels.items())), expr


def _same_rule_deployed_once(a: Rule, b: Rule) -> bool:
    """True when two identical rules never load into one Prometheus side by side.

    Two cases: the same object written to two files (a PrometheusRule of the same
    ``namespace/name``, a Helm rules-map entry of the same key: applying or merging them
    keeps one), or the same group shipped in two packagings (a plain rule file and a
    PrometheusRule or Helm entry holding a group of the same name), which are alternatives.
    """
    if a.packaging != b.packaging:
        return a.group == b.group
    return a.file != b.file and a.deployed_as != "" and a.deployed_as == b.deployed_as
