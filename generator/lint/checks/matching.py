"""Helpers of ``vector-matching``: binary operations that pair every series with itself.

A one-to-one operation pairs the series of equal labels (Prometheus "Vector matching"). When
both sides read the same series the same way and differ only in label matchers — one side a
subset, ``rate(x{status=~"5.."}[5m]) / rate(x[5m])`` — and every label those matchers name
is kept on both sides and matched on, each pair is one series and itself: ``/`` is always 1,
``-`` always 0, ``>`` never holds. The labels the matchers name must be aggregated away on
both sides (``sum without (status)``) for the subset to be compared with the whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.printer import Path, walk_paths
from generator.lint.registry import Context

# What `op` gives for a series paired with itself (non-zero values; bool comparisons give 0/1).
_OUTCOME = {
    "/": "is always 1 (NaN where both are 0)",
    "-": "is always 0",
    "%": "is always 0",
    ">": "is always empty (a series is never above itself)",
    "<": "is always empty (a series is never below itself)",
    "!=": "is always empty (a series always equals itself)",
    ">=": "keeps every series of the narrower side",
    "<=": "keeps every series of the narrower side",
    "==": "keeps every series of the narrower side",
}
_BOOL_OUTCOME = {">": "0", "<": "0", "!=": "0", ">=": "1", "<=": "1", "==": "1"}


@dataclass(frozen=True)
class SelfMatch:
    """A binary operation pairing each series with itself.

    Attributes:
        path: the operation's path in the tree.
        labels: the labels whose matchers differ between the sides (may be empty).
        message: one line, what the result is and how to write it instead.
        fix: the whole expression rewritten (the labels aggregated away on both sides), or
            ``None`` when no rewrite is sure.
    """

    path: Path
    labels: tuple[str, ...]
    message: str
    fix: str | None


def _shape(node: q.Expr) -> object:
    """The expression with every selector's label matchers left out (names, ranges, offsets,
    functions, groupings and numbers kept): two sides of equal shape read the same series the
    same way, up to their matchers."""
    node = q.unwrap(node)
    if isinstance(node, P.VectorSelector):
        return ("selector", q.selector_name(node), q.seconds(node.offset), str(node.at))
    if isinstance(node, P.MatrixSelector):
        return ("range", _shape(node.vector_selector), q.seconds(node.range))
    if isinstance(node, P.NumberLiteral):
        return ("number", float(node.val))
    if isinstance(node, P.StringLiteral):
        return ("string", str(node.val))
    if isinstance(node, P.SubqueryExpr):
        step = q.seconds(node.step) if node.step is not None else None
        extra: object = (q.seconds(node.range), step, q.seconds(node.offset))
    elif isinstance(node, P.Call):
        extra = q.func_name(node)
    elif isinstance(node, P.AggregateExpr):
        kind, labels = q.grouping(node)
        extra = (q.op(node), kind, tuple(sorted(labels)))
    elif isinstance(node, P.BinaryExpr):
        extra = (q.op(node), _modifier_shape(node))
    else:
        extra = type(node).__name__
    return (type(node).__name__, extra, tuple(_shape(child) for child in q.children(node)))


def _modifier_shape(node: P.BinaryExpr) -> object:
    modifier = node.modifier
    if modifier is None:
        return None
    matching = modifier.matching
    how = None if matching is None else (str(matching.type), tuple(map(str, matching.labels)))
    group = tuple(str(label) for label in modifier.group_labels or ())
    return (modifier.return_bool, how, str(modifier.card), group)


def _matchers(node: q.Expr) -> list[dict[str, tuple[str, ...]]]:
    """Per selector, in walk order: label -> its matchers as text (``__name__`` left out)."""
    found = []
    for sub, _ in q.walk(node):
        if isinstance(sub, P.VectorSelector):
            by_label: dict[str, list[str]] = {}
            for matcher in q.matchers(sub):
                if matcher.name != "__name__":
                    text = printer.matcher_text(matcher)
                    by_label.setdefault(str(matcher.name), []).append(text)
            found.append({label: tuple(sorted(texts)) for label, texts in by_label.items()})
    return found


def _differing(lhs: q.Expr, rhs: q.Expr) -> set[str]:
    """Labels whose matchers differ between two sides of equal shape."""
    labels: set[str] = set()
    for left, right in zip(_matchers(lhs), _matchers(rhs), strict=True):
        labels |= {
            label for label in left.keys() | right.keys() if left.get(label) != right.get(label)
        }
    return labels


def _matched_on(node: P.BinaryExpr, label: str) -> bool:
    """True when the one-to-one operation ``node`` pairs series by ``label``."""
    modifier = node.modifier
    matching = modifier.matching if modifier is not None else None
    if matching is None:
        return True
    named = {str(name) for name in matching.labels}
    on = matching.type == P.LabelModifierType.Include
    return (label in named) is on


def _aggregated_away(node: q.Expr, path: Path, labels: set[str]) -> str:
    """``node`` (at ``path``) with ``labels`` aggregated away: removed from its ``by (…)``,
    added to its ``without (…)``, or ``sum without (…) (node)`` around anything else."""
    while isinstance(node, P.ParenExpr):
        node, path = node.expr, (*path, 0)
    dropped = ", ".join(sorted(labels))
    if isinstance(node, P.AggregateExpr) and q.op(node) in q.MERGING_AGGREGATIONS:
        kind, grouped = q.grouping(node)
        if kind == "by":
            rest = [label for label in grouped if label not in labels]
            grouping = f" by ({', '.join(rest)}) " if rest else ""
        elif kind == "without":
            grouping = f" without ({', '.join(sorted({*grouped, *labels}))}) "
        else:
            grouping = ""
        kids = q.children(node)
        parts = [printer.render(kids[i], path=(*path, i)) for i in range(len(kids))][::-1]
        return f"{q.op(node)}{grouping}({', '.join(parts)})"
    return f"sum without ({dropped}) ({printer.render(node, path=path)})"


def _values_disjoint(lhs: q.Expr, rhs: q.Expr, labels: set[str], ctx: Context) -> bool:
    """True when some label's fixed values never meet (``vector-matching``'s other finding)."""
    left, right = ctx.analysis(lhs).labels, ctx.analysis(rhs).labels
    for label in labels:
        a, b = left.values_of(label), right.values_of(label)
        if a is not None and b is not None and not a & b:
            return True
    return False


def self_matches(tree: q.Expr, ctx: Context) -> Iterator[SelfMatch]:
    """Every one-to-one operation of ``tree`` whose sides are the same series (see module)."""
    for path, node in walk_paths(tree):
        binary = q.as_binary(node, *_OUTCOME)
        if binary is None:
            continue
        modifier = binary.modifier
        if modifier is not None and modifier.card in (
            P.VectorMatchCardinality.ManyToOne,
            P.VectorMatchCardinality.OneToMany,
        ):
            continue
        lhs, rhs = binary.lhs, binary.rhs
        if q.constant(lhs) is not None or _shape(lhs) != _shape(rhs):
            continue
        left, right = ctx.analysis(lhs).labels, ctx.analysis(rhs).labels
        if left.scalar or right.scalar:
            continue
        differ = _differing(lhs, rhs)
        if not all(
            _matched_on(binary, label) and left.can(label) and right.can(label) for label in differ
        ):
            continue
        if _values_disjoint(lhs, rhs, differ, ctx):
            continue
        yield _finding(tree, path, binary, differ)


def _finding(tree: q.Expr, path: Path, binary: P.BinaryExpr, differ: set[str]) -> SelfMatch:
    operator = q.op(binary)
    is_bool = binary.modifier is not None and binary.modifier.return_bool
    outcome = f"is always {_BOOL_OUTCOME[operator]}" if is_bool else _OUTCOME[operator]
    shown = ", ".join(f"`{label}`" for label in sorted(differ))
    fix = rewritten = None
    plain = binary.modifier is None or binary.modifier.matching is None
    if differ and "le" not in differ and operator == "/" and plain:
        lhs = _aggregated_away(binary.lhs, (*path, 0), differ)
        rhs = _aggregated_away(binary.rhs, (*path, 1), differ)
        rewritten = f"{lhs} / {rhs}"
        fix = printer.render(tree, {path: rewritten})
    if not differ:
        message = f"`{operator}` compares an expression with itself: the result {outcome}"
    else:
        if "le" in differ:
            remedy = (
                'to divide some buckets by all requests, divide by the `le="+Inf"` bucket '
                "(or the `_count` series) with `ignoring (le)`"
            )
        else:
            remedy = f"aggregate {shown} away on both sides to compare the part with the whole"
        message = (
            f"`{operator}` pairs each series with itself: both sides read the same series and "
            f"differ only in their matchers on {shown}, which both keep and the match compares, "
            f"so every pair is one series and the result {outcome}; {remedy}"
            + (f": `{rewritten}`" if rewritten else "")
        )
    return SelfMatch(path, tuple(sorted(differ)), message, fix)
