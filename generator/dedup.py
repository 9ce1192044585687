"""Rules that survive duplicate series: ``ruler.deduplication: rules`` (docs/scale-out.md, "What
the ruler must provide", point 3). Every raw series read is computed per copy, then collapsed
with ``avg without (<copy labels>)`` before it is summed or joined; joins of two copied reads
also match on the replica labels.

Why ``avg`` and not ``max``, and the limit after a gap: docs/scale-out.md, "Rules that
survive duplicate series".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.promql import label_name

RULER_MADE = frozenset({"ALERTS", "ALERTS_FOR_STATE"})
"""Series the ruler writes itself: one copy per ruler, nothing to collapse."""
_NO_COPIES = frozenset({"absent", "absent_over_time"})
"""Functions whose answer is the same for one copy or several."""
_SAME_FOR_COPIES = frozenset({"group", "max"})
"""Aggregations whose answer is the same for one copy or several identical ones."""


def is_raw(node: q.Expr) -> bool:
    """Whether ``node`` is a selector of a scraped series (no ``:`` in its name: obsgen's
    records all have one) rather than a record or a series the ruler writes."""
    name = q.selector_name(node)
    if not isinstance(node, P.VectorSelector | P.MatrixSelector):
        return False
    return bool(name) and ":" not in name and name not in RULER_MADE


def _wrap(text: str, labels: Iterable[str]) -> str:
    names = sorted(set(labels))
    return f"avg without ({', '.join(label_name(n) for n in names)}) ({text})"


def _matching(node: P.BinaryExpr) -> tuple[str, set[str], set[str]]:
    """``("on"|"ignoring"|"", labels, included labels)`` of a binary expression."""
    modifier = node.modifier
    if modifier is None or modifier.matching is None:
        return "", set(), set()
    word = "on" if modifier.matching.type == P.LabelModifierType.Include else "ignoring"
    labels = {str(n) for n in modifier.matching.labels or []}
    included = {str(n) for n in modifier.group_labels or []}
    return word, labels, included


def _join(
    node: P.BinaryExpr, copy: frozenset[str], replicas: frozenset[str], both: bool
) -> tuple[str, set[str]]:
    """The modifiers of the join ``node`` — with the replica labels added to its ``on (…)``
    list when ``both`` sides read copies, so each copy pairs with its own — and the copy labels
    a side must still lose to have one series per match group: those the matching ignores,
    never one it copies over (``group_left (…)``)."""
    word, labels, included = _matching(node)
    modifier = printer.bin_modifier(node)
    if word == "on":
        matched = labels | replicas if both and labels else labels
        if matched != labels and node.modifier is not None and node.modifier.matching:
            written = ", ".join(str(n) for n in node.modifier.matching.labels)
            extended = ", ".join(label_name(n) for n in sorted(matched))
            modifier = modifier.replace(f" on ({written})", f" on ({extended})", 1)
        return modifier, set(copy) - matched - included
    if word == "ignoring":
        return modifier, (set(copy) & labels) - included
    return modifier, set()


def _by_child(texts: list[str]) -> dict[printer.Path, str]:
    """Replacements of a node's direct children (paths ``(i,)``) by their texts."""
    return {(i,): text for i, text in enumerate(texts)}


class _Emitter:
    """Prints a tree with its copies collapsed."""

    def __init__(self, copy: frozenset[str], replicas: frozenset[str]) -> None:
        self.copy = copy
        self.replicas = replicas

    def emit(self, node: q.Expr) -> tuple[str, bool]:
        """``node`` as text with its copies collapsed below the top, and whether a raw series
        still reaches its top uncollapsed."""
        copy = self.copy
        if isinstance(node, P.VectorSelector | P.MatrixSelector):
            return printer.render(node), is_raw(node)
        kids = q.children(node)
        if not kids:
            return printer.render(node), False
        done = [self.emit(kid) for kid in kids]
        texts = [text for text, _ in done]
        exposed = [raw for _, raw in done]
        if isinstance(node, P.AggregateExpr):
            kind, labels = q.grouping(node)
            drop = set(copy) - set(labels) if kind == "by" else set(copy)
            if kind == "without" and q.op(node) == "avg" and drop <= set(labels):
                drop = set()  # a collapse already (collapsing twice changes nothing)
            if exposed[0] and drop and q.op(node) not in _SAME_FOR_COPIES:
                texts[0] = _wrap(texts[0], drop)
            return printer.render(node, _by_child(texts)), False
        if (
            isinstance(node, P.BinaryExpr)
            and str(node.op) not in q.SET_OPS
            and exposed
            != [
                False,
                False,
            ]
        ):
            modifier, drop = _join(node, copy, self.replicas, all(exposed))
            card = node.modifier.card if node.modifier is not None else None
            sides: tuple[int, ...]
            if card == P.VectorMatchCardinality.ManyToOne:
                sides = (1,)
            elif card == P.VectorMatchCardinality.OneToMany:
                sides = (0,)
            else:
                sides = (0, 1) if drop else ()
            for side in sides:
                if exposed[side] and drop:
                    texts[side] = _wrap(texts[side], drop)
                    exposed[side] = False
            return f"{texts[0]} {q.op(node)}{modifier} {texts[1]}", any(exposed)
        if isinstance(node, P.BinaryExpr) and str(node.op) in q.SET_OPS and all(exposed):
            # a set operation between two copied reads pairs each copy with its own too: the
            # counter-birth check "its target was up a minute ago" asks the copy's own Prometheus
            modifier, _ = _join(node, copy, self.replicas, True)
            return f"{texts[0]} {q.op(node)}{modifier} {texts[1]}", True
        if isinstance(node, P.Call) and q.func_name(node) in _NO_COPIES:
            exposed = [False for _ in exposed]
        return printer.render(node, _by_child(texts)), any(exposed)


def collapse(expr: str, copy_labels: Sequence[str], replica_labels: Sequence[str]) -> str:
    """``expr`` with every raw series read collapsed over ``copy_labels`` before it is
    aggregated or joined, and over ``replica_labels`` where it reaches the result uncollapsed
    (module docstring). An expression that reads no raw series comes back unchanged, as
    written.

    Raises:
        ValueError: ``expr`` does not parse.
    """
    tree = q.parse(expr)
    emitter = _Emitter(frozenset(copy_labels), frozenset(replica_labels))
    text, exposed = emitter.emit(tree)
    if exposed:
        text = _wrap(text, replica_labels)
    if text == printer.render(tree):
        return expr
    q.parse(text)  # the rewrite must still be PromQL
    return text


_GRAFANA_RANGES = {
    "__rate_interval": "20m34s567ms",
    "__interval": "20m34s568ms",
    "__range": "20m34s569ms",
}
"""Durations that stand in for Grafana's range variables while a panel query is rewritten
(printed back exactly as written: no rule or panel of obsgen reads such a range)."""
_GRAFANA_RANGE = re.compile(r"\$\{?(__rate_interval|__interval|__range)\}?")


def collapse_panel(expr: str, copy_labels: Sequence[str], replica_labels: Sequence[str]) -> str:
    """A Grafana panel query ``expr`` collapsed as :func:`collapse` collapses a rule, so a
    panel summing gauges or counters across copies reads each series once. Its range
    variables (``[$__rate_interval]``) stand in as durations while it is rewritten; variables
    in label values (``pod=~"$pod"``) are strings and pass through.

    Raises:
        ValueError: ``expr`` does not parse with its range variables replaced.
    """
    text = _GRAFANA_RANGE.sub(lambda m: _GRAFANA_RANGES[m[1]], expr)
    out = collapse(text, copy_labels, replica_labels)
    if out == text:
        return expr
    for name, stand_in in _GRAFANA_RANGES.items():
        out = out.replace(stand_in, f"${name}")
    return out
