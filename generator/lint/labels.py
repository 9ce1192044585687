"""Label-set inference over PromQL: which labels each sub-expression's series can carry.

:func:`analyse` follows Prometheus' evaluation rules (``by``/``without``, ``on``/``ignoring``,
``group_left``/``group_right``, ``absent``, ``label_replace``, ``vector`` …) bottom-up and
reports the joins and groupings that name a label which can never be there. The metric name
(``__name__``) is left out throughout: vector matching ignores it. Besides label names it
follows the values a label is fixed to (``status="5xx"``, ``le=~"0.5|1"``): sides whose
values of a matched label never meet never match either.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import promql_parser as P

from generator.lint import promql as q
from generator.lint.names import scraped_by_server
from generator.lint.regex import literal_set

NAME = "__name__"
_ABSENT = frozenset({"absent", "absent_over_time"})
_SCALAR_FUNCS = frozenset({"scalar", "time", "pi"})
_NO_LABEL_FUNCS = frozenset({"vector"})
_DROPS_LE = frozenset({"histogram_quantile", "histogram_fraction"})
_KEEPS_INPUT = frozenset({"topk", "bottomk", "limitk", "limit_ratio"})
_ABSENT_WHY = "`absent()` (it keeps only its selector's `=` matchers)"


@dataclass(frozen=True)
class Labels:
    """The labels an expression's series can carry.

    Attributes:
        scalar: the expression is a scalar or string: no series, nothing to match.
        only: the labels a series can carry at most; ``None`` when open (a selector: any label
            its series have, except ``never``).
        never: labels that can never be there although the set is open (``x{a=""}``, a
            ``without (a)``).
        expected: labels every series is meant to carry: equality matchers, ``by`` labels,
            ``label_replace`` targets. A join on a side expecting a label the other side can
            never carry can never match.
        why: what limited the set last, for messages (e.g. "`sum by (frontend)`").
        joined: labels copied in by a ``group_left``/``group_right`` below.
        reasons: ``(label, what removed it)`` for labels removed one by one (``without``,
            ``ignoring``, ``histogram_quantile``'s ``le``).
        values: ``(label, values)`` for labels fixed to a finite set of values (an ``=``
            matcher, a regex of alternatives), sorted by label.
        fallback: the labels (at most) of the series of an ``or`` branch that can answer
            alone (``x or vector(0)``: none), ``None`` when there is no such branch.
    """

    scalar: bool = False
    only: frozenset[str] | None = None
    never: frozenset[str] = frozenset()
    expected: frozenset[str] = frozenset()
    why: str = ""
    joined: frozenset[str] = frozenset()
    reasons: tuple[tuple[str, str], ...] = ()
    values: tuple[tuple[str, frozenset[str]], ...] = ()
    fallback: frozenset[str] | None = None

    def values_of(self, label: str) -> frozenset[str] | None:
        """The only values ``label`` can have, ``None`` when not fixed."""
        return dict(self.values).get(label)

    def reason(self, label: str) -> str:
        """What removed ``label`` (e.g. "`sum by (frontend)`"), ``""`` when unknown."""
        return dict(self.reasons).get(label, self.why)

    def can(self, label: str) -> bool:
        """True when some series of the expression may carry ``label``."""
        if self.scalar:
            return False
        if self.only is not None:
            return label in self.only
        return label not in self.never

    def expects(self, label: str) -> bool:
        """True when the series are meant to carry ``label`` (and can)."""
        return label in self.expected and self.can(label)

    def describe(self) -> str:
        """``"{a, b}"`` for a closed set, ``"{a, b, …}"`` for an open one."""
        if self.scalar:
            return "a scalar (no labels)"
        if self.only is None:
            shown = sorted(self.expected)
            return "{" + ", ".join([*shown, "…"]) + "}"
        return "{" + ", ".join(sorted(self.only)) + "}" if self.only else "no labels"


SCALAR = Labels(scalar=True)
OPEN = Labels()


@dataclass(frozen=True)
class Problem:
    """A join or grouping that names a label that can never be there.

    Attributes:
        kind: ``"never-matches"`` (a binary operation whose sides can never match) or
            ``"label-removed"`` (``on``/``group_left``/``by`` naming a label a side lacks).
        message: one line, naming the operation, the label and what removed it.
    """

    kind: str
    message: str


@dataclass
class Analysis:
    """The result of :func:`analyse`.

    Attributes:
        labels: the labels of the whole expression's series.
        problems: every problem found, bottom-up.
    """

    labels: Labels
    problems: list[Problem] = field(default_factory=list)


Records = Callable[[str], Labels | None]


def _no_records(name: str) -> Labels | None:
    return None


def _matches_empty(pattern: str) -> bool:
    try:
        return re.fullmatch(pattern, "") is not None
    except re.error:
        return True


Values = tuple[tuple[str, frozenset[str]], ...]


def _fixed(values: dict[str, frozenset[str]]) -> Values:
    return tuple(sorted(values.items()))


def _restrict(labels: Labels, keep: Callable[[str], bool]) -> Values:
    """The fixed values of the labels ``keep`` accepts."""
    return tuple((label, vals) for label, vals in labels.values if keep(label))


def _meet(lhs: Values, rhs: Values) -> Values:
    """Values of series that carry both sides' values (a one-to-one match): a label fixed on
    both sides keeps the values they share."""
    found = dict(lhs)
    for label, vals in rhs:
        found[label] = found[label] & vals if label in found else vals
    return _fixed(found)


def _join(lhs: Values, rhs: Values) -> Values:
    """Values of series from either side (``or``): only labels fixed on both stay fixed."""
    right = dict(rhs)
    return _fixed({label: vals | right[label] for label, vals in lhs if label in right})


def _histogram_part(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """``(expected, never)`` labels a scraped name's histogram suffix implies: every
    ``x_bucket`` series carries ``le``; a classic histogram's ``x_count``/``x_sum`` never do
    (Prometheus "Histograms and summaries"). Recorded names say nothing."""
    if not name or (":" in name and not scraped_by_server(name)):
        return frozenset(), frozenset()
    if name.endswith("_bucket"):
        return frozenset({"le"}), frozenset()
    if name.endswith(("_count", "_sum")):
        return frozenset(), frozenset({"le"})
    return frozenset(), frozenset()


def selector_labels(node: P.VectorSelector) -> Labels:
    """Labels of a plain selector: open, minus ``x=""`` labels, expecting its other matchers
    (and ``le`` on a bucket series), with the values its ``=`` and ``=~"a|b"`` matchers fix."""
    never: set[str] = set()
    expected: set[str] = set()
    values: dict[str, frozenset[str]] = {}
    for matcher in node.matchers.matchers:
        name, value = str(matcher.name), str(matcher.value)
        if name == NAME:
            continue
        allowed: frozenset[str] | None = None
        if matcher.op == P.MatchOp.Equal:
            (expected if value else never).add(name)
            allowed = frozenset({value}) if value else None
        elif matcher.op == P.MatchOp.NotEqual and not value:
            expected.add(name)
        elif matcher.op == P.MatchOp.Re:
            (never if value == "" else expected if not _matches_empty(value) else set()).add(name)
            options = literal_set(value)
            allowed = frozenset(options) if options and "" not in options else None
        elif matcher.op == P.MatchOp.NotRe and _matches_empty(value):
            expected.add(name)
        if allowed is not None:
            values[name] = values[name] & allowed if name in values else allowed
    if node.matchers.or_matchers:
        expected.clear()
        values.clear()
    implied, excluded = _histogram_part(q.selector_name(node))
    expected |= implied - never
    never |= excluded - expected
    return Labels(never=frozenset(never), expected=frozenset(expected), values=_fixed(values))


def absent_labels(arg: q.Expr) -> Labels:
    """Labels of ``absent(arg)``: only the equality matchers of a plain selector argument."""
    arg = q.unwrap(arg)
    if isinstance(arg, P.MatrixSelector):
        arg = arg.vector_selector
    if isinstance(arg, P.VectorSelector) and not arg.matchers.or_matchers:
        pairs = {
            str(m.name): frozenset({str(m.value)})
            for m in arg.matchers.matchers
            if m.op == P.MatchOp.Equal and str(m.name) != NAME and str(m.value)
        }
        kept = frozenset(pairs)
        return Labels(only=kept, expected=kept, why=_ABSENT_WHY, values=_fixed(pairs))
    return Labels(only=frozenset(), why=_ABSENT_WHY)


def _with(labels: Labels, extra: frozenset[str], expected: bool) -> Labels:
    only = None if labels.only is None else labels.only | extra
    return replace(
        labels,
        only=only,
        never=labels.never - extra,
        expected=labels.expected | extra if expected else labels.expected,
        values=_restrict(labels, lambda label: label not in extra),
        fallback=None if labels.fallback is None else labels.fallback | extra,
    )


def _without(labels: Labels, removed: frozenset[str], why: str) -> Labels:
    only = None if labels.only is None else labels.only - removed
    return Labels(
        only=only,
        never=labels.never | removed,
        expected=labels.expected - removed,
        why=labels.why,
        joined=labels.joined - removed,
        reasons=(*labels.reasons, *((label, why) for label in sorted(removed))),
        values=_restrict(labels, lambda label: label not in removed),
        fallback=None if labels.fallback is None else labels.fallback - removed,
    )


def _keep(labels: Labels, kept: frozenset[str], why: str) -> Labels:
    return Labels(
        only=frozenset(label for label in kept if labels.can(label)),
        expected=labels.expected & kept,
        why=why,
        values=_restrict(labels, lambda label: label in kept),
        fallback=None if labels.fallback is None else labels.fallback & kept,
    )


def _label_list(labels: object) -> str:
    return ", ".join(str(label) for label in labels)  # type: ignore[attr-defined]


class _Analyser:
    def __init__(self, records: Records) -> None:
        self.records = records
        self.problems: list[Problem] = []

    def labels(self, node: q.Expr) -> Labels:
        if isinstance(node, P.ParenExpr | P.UnaryExpr | P.SubqueryExpr):
            return self.labels(node.expr)
        if isinstance(node, P.MatrixSelector):
            return self.labels(node.vector_selector)
        if isinstance(node, P.VectorSelector):
            return self._selector(node)
        if isinstance(node, P.NumberLiteral | P.StringLiteral):
            return SCALAR
        if isinstance(node, P.AggregateExpr):
            return self._aggregate(node)
        if isinstance(node, P.Call):
            return self._call(node)
        if isinstance(node, P.BinaryExpr):
            return self._binary(node)
        return OPEN

    def _selector(self, node: P.VectorSelector) -> Labels:
        own = selector_labels(node)
        recorded = self.records(q.selector_name(node))
        if recorded is None or recorded.only is None:
            return own
        kept = frozenset(label for label in recorded.only if own.can(label))
        return Labels(
            only=kept,
            expected=(recorded.expected | own.expected) & kept,
            why=f"the recording rule of `{q.selector_name(node)}`",
            values=_restrict(
                replace(own, values=_meet(recorded.values, own.values)), lambda la: la in kept
            ),
            fallback=None if recorded.fallback is None else recorded.fallback & kept,
        )

    def _aggregate(self, node: P.AggregateExpr) -> Labels:
        inner = self.labels(node.expr)
        if isinstance(node.param, P.Expr):
            self.labels(node.param)
        operator = q.op(node)
        if operator in _KEEPS_INPUT:
            return inner
        kind, grouped = q.grouping(node)
        names = frozenset(grouped) - {NAME}
        extra: frozenset[str] = frozenset()
        if operator == "count_values" and isinstance(node.param, P.StringLiteral):
            extra = frozenset({str(node.param.val)})
        if kind == "without":
            result = _without(inner, names, f"`{operator} without ({_label_list(grouped)})`")
        else:
            text = f"`{operator} by ({_label_list(grouped)})`" if kind else f"`{operator}()`"
            for label in sorted(names):
                if not inner.can(label):
                    self.problems.append(
                        Problem(
                            "label-removed",
                            f"{text} groups by `{label}`, which its input can never carry "
                            f"({_removed(inner, label)}): every series lands in one group",
                        )
                    )
            kept = _keep(inner, names, text)
            result = replace(kept, expected=kept.expected | (kept.only or frozenset()))
        return _with(result, extra, expected=True) if extra else result

    def _call(self, node: P.Call) -> Labels:
        name = q.func_name(node)
        args = [arg for arg in node.args if isinstance(arg, P.Expr)]
        inner = [self.labels(arg) for arg in args]
        if name in _ABSENT:
            return absent_labels(args[0]) if args else Labels(only=frozenset())
        if name in _SCALAR_FUNCS:
            return SCALAR
        if name in _NO_LABEL_FUNCS:
            return Labels(only=frozenset(), why=f"`{name}()`")
        vectors = [labels for labels in inner if not labels.scalar]
        if name == "info":
            return OPEN
        if not vectors:
            return Labels(only=frozenset(), why=f"`{name}()`")
        first = vectors[0]
        if name in _DROPS_LE:
            return _without(first, frozenset({"le"}), f"`{name}()`")
        if name in ("label_replace", "label_join") and len(args) > 1:
            target = q.unwrap(args[1])
            if isinstance(target, P.StringLiteral):
                return _with(first, frozenset({str(target.val)}), expected=True)
        return first

    def _binary(self, node: P.BinaryExpr) -> Labels:
        lhs, rhs = self.labels(node.lhs), self.labels(node.rhs)
        if lhs.scalar and rhs.scalar:
            return SCALAR
        if lhs.scalar or rhs.scalar:
            return rhs if lhs.scalar else lhs
        operator = q.op(node)
        modifier = node.modifier
        matching = modifier.matching if modifier is not None else None
        on = matching is not None and matching.type == P.LabelModifierType.Include
        named = frozenset(matching.labels) - {NAME} if matching is not None else frozenset()
        card = modifier.card if modifier is not None else None
        text = _binary_text(node)
        if on:
            self._check_on(text, named, lhs, rhs)
        self._check_match(text, operator, on, named, lhs, rhs)
        include = frozenset(modifier.group_labels or ()) if modifier is not None else frozenset()
        if card == P.VectorMatchCardinality.ManyToOne:
            return self._grouped(text, "group_left", "right", include, lhs, rhs)
        if card == P.VectorMatchCardinality.OneToMany:
            return self._grouped(text, "group_right", "left", include, rhs, lhs)
        if operator in ("and", "unless"):
            lost = sorted(rhs.joined - lhs.expected)
            if lost:
                self.problems.append(
                    Problem(
                        "label-removed",
                        f"`{operator}` keeps only the left side's labels: "
                        f"{', '.join(f'`{label}`' for label in lost)} copied in by a group "
                        f"modifier on its right side never reach the result; put the "
                        f"`{operator}` in parentheses before the join",
                    )
                )
            return lhs
        if operator == "or":
            return union(lhs, rhs)
        if on:
            return _keep(lhs, named, text)
        if named:
            return _without(lhs, named, text)
        both = lhs.expected | rhs.expected
        met = _meet(lhs.values, rhs.values)
        # Two fallbacks can meet each other; one alone never reaches the result.
        kept = None if lhs.fallback is None or rhs.fallback is None else lhs.fallback
        if lhs.only is not None and rhs.only is not None:
            return Labels(
                only=lhs.only & rhs.only,
                expected=both,
                why=lhs.why or rhs.why,
                values=met,
                fallback=kept,
            )
        closed = lhs if lhs.only is not None else rhs
        return replace(
            closed, expected=both, never=lhs.never | rhs.never, values=met, fallback=kept
        )

    def _check_on(self, text: str, named: frozenset[str], lhs: Labels, rhs: Labels) -> None:
        for label in sorted(named):
            for side, labels in (("left", lhs), ("right", rhs)):
                if not labels.can(label):
                    self.problems.append(
                        Problem(
                            "label-removed",
                            f"{text} joins on `{label}`, which the {side} side can never carry "
                            f"({_removed(labels, label)})",
                        )
                    )

    def _check_match(
        self,
        text: str,
        operator: str,
        on: bool,
        named: frozenset[str],
        lhs: Labels,
        rhs: Labels,
    ) -> None:
        if operator == "or":
            return
        for label in sorted(lhs.expected | rhs.expected):
            if (label in named) is not on or label == NAME:
                continue
            for side, has, other_side, other in (
                ("left", lhs, "right", rhs),
                ("right", rhs, "left", lhs),
            ):
                if has.expects(label) and not other.can(label):
                    self.problems.append(
                        Problem(
                            "never-matches",
                            _never_message(text, operator, label, side, other_side, other),
                        )
                    )
                    return
        for side, this, other in (("left", lhs, rhs), ("right", rhs, lhs)):
            if this.fallback is None or other.fallback is not None:
                continue
            for label in sorted(other.expected):
                if label in this.fallback or (label in named) is not on or not this.can(label):
                    continue
                self.problems.append(
                    Problem("never-matches", _fallback_message(text, operator, label, side))
                )
                return
        for label, left in lhs.values:
            right = rhs.values_of(label)
            if right is None or left & right or (label in named) is not on:
                continue
            if lhs.can(label) and rhs.can(label):
                self.problems.append(
                    Problem("never-matches", _disjoint_message(text, operator, label, left, right))
                )
                return

    def _grouped(
        self,
        text: str,
        modifier: str,
        one_side: str,
        include: frozenset[str],
        many: Labels,
        one: Labels,
    ) -> Labels:
        for label in sorted(include):
            if not one.can(label):
                self.problems.append(
                    Problem(
                        "label-removed",
                        f"{text}: {modifier}({label}) copies `{label}` from the {one_side} "
                        f"side, which can never carry it ({_removed(one, label)})",
                    )
                )
        copied = frozenset(label for label in include if one.can(label))
        joined = _with(many, copied, expected=False)
        return replace(joined, joined=joined.joined | copied)


def union(lhs: Labels, rhs: Labels) -> Labels:
    """Labels of series from either ``lhs`` or ``rhs`` (``a or b``, two recording rules)."""
    only = None if lhs.only is None or rhs.only is None else lhs.only | rhs.only
    return Labels(
        only=only,
        never=lhs.never & rhs.never,
        expected=lhs.expected & rhs.expected,
        why=lhs.why or rhs.why,
        values=_join(lhs.values, rhs.values),
        fallback=_fallback(lhs, rhs),
    )


def _fallback(lhs: Labels, rhs: Labels) -> frozenset[str] | None:
    """The labels of the narrower branch of ``lhs or rhs`` when one branch is closed and
    carries fewer labels than the other can (``x or vector(0)``), else an inner fallback."""
    for narrow, wide in ((rhs, lhs), (lhs, rhs)):
        if narrow.only is not None and (wide.only is None or narrow.only < wide.only):
            return narrow.only
    found = [f for f in (lhs.fallback, rhs.fallback) if f is not None]
    return min(found, key=len) if found else None


def _removed(labels: Labels, label: str) -> str:
    shown = labels.describe()
    why = labels.reason(label)
    return f"it has {shown}: {why} removed `{label}`" if why else f"it has {shown}"


def _binary_text(node: P.BinaryExpr) -> str:
    modifier = node.modifier
    text = str(node.op)
    if modifier is not None and modifier.matching is not None:
        kind = "on" if modifier.matching.type == P.LabelModifierType.Include else "ignoring"
        text += f" {kind} ({_label_list(modifier.matching.labels)})"
    return f"`{text}`"


def _never_message(
    text: str, operator: str, label: str, side: str, other_side: str, other: Labels
) -> str:
    outcome = {
        "and": "is always empty",
        "unless": "never removes anything",
    }.get(operator, "is always empty")
    return (
        f"{text} can never match: the {side} side's series carry `{label}`, the {other_side} "
        f"side's never do ({_removed(other, label)}), so the result {outcome}; match on the labels "
        f"both sides keep (`on (…)`/`ignoring ({label})`) or keep `{label}` on both sides"
    )


def _fallback_message(text: str, operator: str, label: str, side: str) -> str:
    outcome = "removes nothing" if operator == "unless" else "is empty"
    return (
        f"{text} matches on `{label}`, which the {side} side's narrower `or` branch (`or vector(0)`, `or sum(…)`) "
        f"never carries: when only the fallback answers (nothing counted), it matches nothing "
        f"and the result {outcome} exactly then; give the fallback the labels of the other "
        f"side (`or 0 * sum by ({label}) (<a series every {label} has>)`), or apply it "
        "after the join"
    )


def _shown_values(values: frozenset[str]) -> str:
    return " or ".join(f'"{value}"' for value in sorted(values))


def _disjoint_message(
    text: str, operator: str, label: str, left: frozenset[str], right: frozenset[str]
) -> str:
    outcome = "never removes anything" if operator == "unless" else "is always empty"
    return (
        f"{text} can never match: it pairs series with equal `{label}`, but the left side's "
        f"`{label}` is only {_shown_values(left)} and the right side's only "
        f"{_shown_values(right)}, so the result {outcome}; to compare across `{label}` values "
        f"match with `ignoring ({label})` (or `on (…)` without it), or aggregate `{label}` "
        "away on both sides"
    )


def analyse(tree: q.Expr, records: Records = _no_records) -> Analysis:
    """Infer the labels of ``tree``'s series and collect every impossible join or grouping.

    Args:
        tree: a parsed expression.
        records: the labels of a recorded series by name (from its recording rules in the
            same lint run), or ``None`` when unknown (treated as an open selector).

    Returns:
        The labels of the whole expression and the problems, in evaluation order.
    """
    analyser = _Analyser(records)
    result = analyser.labels(tree)
    return Analysis(result, analyser.problems)
