"""Rules that survive duplicate series: ``ruler.deduplication: rules`` (docs/scale-out.md, "One
copy of each series").

A central ruler that no querier or ingester deduplicates sees each series of an HA Prometheus
pair twice (differing only by a replica label, ``prometheus_replica``) and each series of a pod
selected by two scrape configurations twice (differing by ``job``, ``endpoint``, ``instance``).
Summed, every gauge and counter doubles; joined with ``group_left``/``group_right`` or ``on``,
the query fails with "found duplicate series for the match group".

In ``rules`` mode every rule expression is rewritten so that each raw series read (a selector
whose name has no ``:``; obsgen's records always have one, and carry no copy label) is collapsed
*after* its per-copy computation and *before* anything that combines series:

- the argument of every aggregation that reads raw series becomes
  ``max without (<copy labels> − <its by labels>) (…)``;
- the "one" side of a ``group_left``/``group_right`` join (either side of a one-to-one ``on``
  join) becomes ``max without (<copy labels> − <matching labels> − <included labels>) (…)``,
  so copies still pair with their own copy through the labels the join matches on;
- a raw read left at the top of an expression (an alert or record per series) drops only the
  replica labels: ``max without (<replica labels>) (…)``; the target labels may be printed.

Per-copy first, then collapse: ``x - x offset 1m`` and ``rate(x[5m])`` are computed within each
copy (one-to-one matching on all labels pairs a copy with itself), so a counter's increments
stay exact per copy. The set operators (``and``, ``or``, ``unless``) and ``absent`` need no
collapse: they accept many-to-many and any copy.

Why ``max`` and not ``avg``: the copies of one series hold the same quantity sampled at
slightly different times (up to one scrape interval apart). For counters the collapsed value is
a per-copy increment or rate; when one copy misses samples (its Prometheus restarted, a gap in
its remote write) its increment is low or absent, and ``max`` keeps the copy that saw the
events where ``avg`` would halve them — the events that failed while a replica was down would
be under-counted, which is the failure mode that matters for paging. For gauges (queue depth,
KV-cache usage, ``up``), ``max`` reads the larger of two nearly equal samples, never a mean of a
fresh and a stale one, and a 0/1 series stays 0/1 (``avg`` of ``up`` gives 0.5 during a replica's
restart). ``max`` over one copy is that copy, so the rewrite changes nothing on clean data.

The limit: a copy that resumes after a gap books the gap's events at its first evaluation
after it (the bridged increments, docs/spec.md "Gaps in the samples"), while the other copy
booked them minute by minute; ``max`` takes both, so the gap's events count twice — good and
bad alike, so the error ratio stays near the truth, but the event counts of that stretch are
high. Collapsing the counter *values* instead (``max(x) - max(x offset 1m)``) would be worse: when
the fresher copy stops, the maximum drops and reads as a reset, booking the whole counter.
A deduplicating querier or ingester (``querier``/``ingest``) has neither problem.

Native histograms are the exception: PromQL's ``max`` (and ``min``, ``topk``) ignore histogram
samples, so where a native histogram's value (``rate(h[5m])``, not yet read by a
``histogram_*`` function) is collapsed the copies are averaged, ``avg without (…)``. A copy with
no sample in the window has no rate and is not averaged in; one whose rate rests on fewer samples
is averaged with the complete one (the error is the copy's own extrapolation, not a halving).
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
"""Aggregations whose answer is the same for one copy or several (``max`` is the collapse)."""
_FLOAT_OF_ANY = frozenset(
    {"count_over_time", "present_over_time", "timestamp", "absent", "absent_over_time"}
)
"""Functions that answer a float whatever the samples they read."""


def is_raw(node: q.Expr) -> bool:
    """Whether ``node`` is a selector of a scraped series (no ``:`` in its name: obsgen's
    records all have one) rather than a record or a series the ruler writes."""
    name = q.selector_name(node)
    if not isinstance(node, P.VectorSelector | P.MatrixSelector):
        return False
    return bool(name) and ":" not in name and name not in RULER_MADE


def _wrap(text: str, labels: Iterable[str], histogram: bool = False) -> str:
    names = sorted(set(labels))
    how = "avg" if histogram else "max"
    return f"{how} without ({', '.join(label_name(n) for n in names)}) ({text})"


def _matching(node: P.BinaryExpr) -> tuple[str, set[str], set[str]]:
    """``("on"|"ignoring"|"", labels, included labels)`` of a binary expression."""
    modifier = node.modifier
    if modifier is None or modifier.matching is None:
        return "", set(), set()
    word = "on" if modifier.matching.type == P.LabelModifierType.Include else "ignoring"
    labels = {str(n) for n in modifier.matching.labels or []}
    included = {str(n) for n in modifier.group_labels or []}
    return word, labels, included


def _join_collapse(node: P.BinaryExpr, copy: frozenset[str]) -> set[str]:
    """The copy labels a side of the join ``node`` must lose so that it has one series per
    match group: those the matching ignores (``on``: every label not listed), never one it
    copies over (``group_left (…)``)."""
    word, labels, included = _matching(node)
    if word == "on":
        return set(copy) - labels - included
    if word == "ignoring":
        return (set(copy) & labels) - included
    return set()


def _by_child(texts: list[str]) -> dict[printer.Path, str]:
    """Replacements of a node's direct children (paths ``(i,)``) by their texts."""
    return {(i,): text for i, text in enumerate(texts)}


class _Emitter:
    """Prints a tree with its copies collapsed; ``histograms``: the names of native histograms
    (their values are histograms until a ``histogram_*`` function reads them)."""

    def __init__(self, copy: frozenset[str], histograms: frozenset[str]) -> None:
        self.copy = copy
        self.histograms = histograms

    def emit(self, node: q.Expr) -> tuple[str, bool, bool]:
        """``node`` as text with its copies collapsed below the top, whether a raw series
        still reaches its top uncollapsed, and whether its value is a native histogram."""
        copy = self.copy
        if isinstance(node, P.VectorSelector | P.MatrixSelector):
            return printer.render(node), is_raw(node), q.selector_name(node) in self.histograms
        kids = q.children(node)
        if not kids:
            return printer.render(node), False, False
        done = [self.emit(kid) for kid in kids]
        texts = [text for text, _, _ in done]
        exposed = [raw for _, raw, _ in done]
        histogram = any(h for _, _, h in done)
        if isinstance(node, P.AggregateExpr):
            kind, labels = q.grouping(node)
            drop = set(copy) - set(labels) if kind == "by" else set(copy)
            if exposed[0] and drop and q.op(node) not in _SAME_FOR_COPIES:
                texts[0] = _wrap(texts[0], drop, done[0][2])
            return printer.render(node, _by_child(texts)), False, histogram
        if isinstance(node, P.BinaryExpr) and str(node.op) not in q.SET_OPS:
            drop = _join_collapse(node, copy)
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
                    texts[side] = _wrap(texts[side], drop, done[side][2])
                    exposed[side] = False
        if isinstance(node, P.Call):
            name = q.func_name(node)
            if name in _NO_COPIES:
                exposed = [False for _ in exposed]
            if name.startswith("histogram_") or name in _FLOAT_OF_ANY:
                histogram = False
        return printer.render(node, _by_child(texts)), any(exposed), histogram


def collapse(
    expr: str,
    copy_labels: Sequence[str],
    replica_labels: Sequence[str],
    histograms: Iterable[str] = (),
) -> str:
    """``expr`` with every raw series read collapsed over ``copy_labels`` before it is
    aggregated or joined, and over ``replica_labels`` where it reaches the result uncollapsed
    (module docstring). ``histograms``: names of native histograms, whose copies are averaged
    (``max`` ignores histogram samples). An expression that reads no raw series comes back
    unchanged, as written.

    Raises:
        ValueError: ``expr`` does not parse.
    """
    tree = q.parse(expr)
    emitter = _Emitter(frozenset(copy_labels), frozenset(histograms))
    text, exposed, histogram = emitter.emit(tree)
    if exposed:
        text = _wrap(text, replica_labels, histogram)
    if text == printer.render(tree):
        return expr
    q.parse(text)  # the rewrite must still be PromQL
    return text
