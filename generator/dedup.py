"""Rules that survive duplicate series: ``ruler.deduplication: rules`` (docs/scale-out.md, "What
the ruler must provide", point 3).

A central ruler that no querier or ingester deduplicates sees each series of an HA Prometheus
pair twice (differing only by a replica label, ``prometheus_replica``) and each series of a pod
selected by two scrape configurations twice (differing by ``job``, ``endpoint``, ``instance``).
Summed, every gauge and counter doubles; joined with ``group_left``/``group_right`` or ``on``,
the query fails with "found duplicate series for the match group".

In ``rules`` mode every rule expression is rewritten so that each raw series read (a selector
whose name has no ``:``; obsgen's records always have one, and carry no copy label) is collapsed
*after* its per-copy computation and *before* anything that combines series:

- the argument of every aggregation that reads raw series becomes
  ``avg without (<copy labels> − <its by labels>) (…)`` (``group`` and ``max`` need none);
- a join matching ``on (…)`` also matches on the replica labels, so each copy pairs with its own
  copy (the counter-birth check compares a copy's samples with *its* Prometheus' successful
  scrapes of the target, never with the other replica's), and its "one" side (either side of a
  one-to-one join) is collapsed over the copy labels it still does not match on (``endpoint``);
- a raw read left at the top of an expression (an alert or record per series) drops only the
  replica labels: ``avg without (<replica labels>) (…)``; the target labels may be printed.

Per-copy first, then collapse: ``x - x offset 1m`` and ``rate(x[5m])`` are computed within each
copy (one-to-one matching on all labels pairs a copy with itself), so a counter's increments
stay exact per copy — collapsing the counter *values* first (``max(x) - max(x offset 1m)``)
would read a drop, and so a reset booking the whole counter, whenever the fresher copy stops.
The set operators (``and``, ``or``, ``unless``) and ``absent`` need no collapse: they accept
many-to-many. An ``on (…)`` set operation between two copied reads also matches on the replica
labels: "the target was up a minute ago" must be asked of the copy's own Prometheus, or a
replica that joins the pair (or returns after more than the bridge) would book its counters'
whole history as new events.

Why ``avg`` and not ``max``: the copies hold one quantity sampled at different phases (two
Prometheus scrape a target up to one scrape interval apart). Each copy's per-minute increments
add up exactly over any window (they telescope), so their mean does too: ``avg`` books every
event once. ``max`` does not: an error scraped by one replica before a minute's boundary and by
the other after it is an increment of 1 in two consecutive minutes, and ``max`` books both —
sparse failures, the ones an SLO pages on, would count up to twice (a quarter of them at a 15 s
phase in a 1 m evaluation). ``avg`` is also the collapse PromQL defines for native histograms
(``max`` ignores histogram samples: the p99 records would be empty). A copy with no sample (its
Prometheus restarting) is absent, not zero, and is not averaged in. For gauges the copies are
nearly equal and ``avg`` reads their mean; a 0/1 series whose replicas disagree (one Prometheus
cut off from the target) reads 0.5 in a sum — alerts filter first (``up == 0`` per copy), so a
target either replica sees down still pages. ``avg`` over one copy is that copy: the rewrite
changes nothing on clean data.

The limit: a copy that resumes after a gap books the gap's events at its first evaluation after
it (the bridged increments, docs/spec.md "Gaps in the samples"), while the other copy booked them
minute by minute; averaged, that stretch's events count one and a half times — good and bad
alike, so the error ratio stays near the truth. A deduplicating querier or ingester
(``querier``/``ingest``) has no such limit.
"""

from __future__ import annotations

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
