"""Writing PromQL trees back as text, with sub-trees replaced: how fixes are built.

``promql-parser`` prints its nodes, but not faithfully (string literals lose their escapes,
bare selectors gain ``{}``), so suggested expressions are printed here instead. Strings go
through :func:`generator.promql.quote`, so a suggestion always parses back to the same tree.

Nodes are addressed by *paths*: the child indexes from the root, in the order of
:func:`generator.lint.promql.children`. :func:`walk_paths` yields them, :func:`render`
prints a tree with some paths replaced by given text.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import timedelta

import promql_parser as P

from generator.lint import promql as q
from generator.promql import LEGACY_METRIC_NAME, label_name, quote, selector_text

Path = tuple[int, ...]


_Walk = tuple[tuple[Path, ...], tuple[q.Expr, ...], tuple[tuple[q.Expr, ...], ...]]


def _compute_walk(node: q.Expr) -> _Walk:
    paths: list[Path] = []
    stack: list[tuple[Path, q.Expr]] = [((), node)]
    while stack:
        current_path, current = stack.pop()
        paths.append(current_path)
        kids = q.children(current)
        for index in range(len(kids) - 1, -1, -1):
            stack.append(((*current_path, index), kids[index]))
    walked = q.walk(node)
    return (tuple(paths), tuple(n for n, _ in walked), tuple(a for _, a in walked))


def _walked(node: q.Expr) -> _Walk:
    """Paths, nodes and ancestors of every node under ``node``, in ``q.walk`` order
    (remembered for the run, like ``q.walk``: checks walk the same tree many times)."""
    return q.memo("paths", node, lambda: _compute_walk(node))


def walk_paths(node: q.Expr, path: Path = ()) -> Iterator[tuple[Path, q.Expr]]:
    """Every node under ``node`` with its path (prefixed by ``path``), in ``q.walk`` order."""
    paths, nodes, _ = _walked(node)
    if not path:
        return zip(paths, nodes, strict=True)
    return iter([((*path, *relative), sub) for relative, sub in zip(paths, nodes, strict=True)])


def walk_full(node: q.Expr) -> Iterator[tuple[Path, q.Expr, tuple[q.Expr, ...]]]:
    """``(path, node, ancestors)`` of every node under ``node``, in ``q.walk`` order."""
    return zip(*_walked(node), strict=True)


def _duration(delta: timedelta) -> str:
    if delta < timedelta(0):
        return "-" + q.fmt_seconds(-delta.total_seconds())
    return q.fmt_seconds(delta.total_seconds())


def _number(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _modifiers(node: P.VectorSelector | P.SubqueryExpr) -> str:
    out = ""
    if node.offset is not None:
        out += f" offset {_duration(node.offset)}"
    at = node.at
    if at is not None:
        if at.type == P.AtModifierType.Start:
            out += " @ start()"
        elif at.type == P.AtModifierType.End:
            out += " @ end()"
        elif at.at is not None:
            out += f" @ {at.at.timestamp():.3f}"
    return out


def matcher_text(matcher: P.Matcher) -> str:
    """``name<op>"value"`` with the value escaped as a PromQL string."""
    if matcher.op == P.MatchOp.Equal:
        op = "="
    elif matcher.op == P.MatchOp.NotEqual:
        op = "!="
    elif matcher.op == P.MatchOp.Re:
        op = "=~"
    else:
        op = "!~"
    return f"{label_name(str(matcher.name))}{op}{quote(str(matcher.value))}"


def _selector(node: P.VectorSelector) -> str:
    name = str(node.name) if node.name else ""
    if not name and not node.matchers.or_matchers:
        # A quoted Prometheus 3 name ({"a.b"}) is parsed as a __name__ matcher: written back
        # as it came, the name first and quoted.
        name = q.selector_name(node)
        if name:
            kept = [m for m in node.matchers.matchers if not is_name_matcher(m, name)]
            return selector_text(name, [matcher_text(m) for m in kept])
    plain = [m for m in node.matchers.matchers if not (name and m.name == "__name__")]
    parts = [",".join(matcher_text(m) for m in plain)] if plain else []
    for alternative in node.matchers.or_matchers:
        parts.append(",".join(matcher_text(m) for m in alternative))
    inner = " or ".join(p for p in parts if p)
    braces = f"{{{inner}}}" if inner or not name else ""
    return name + braces


def _labels(labels: object) -> str:
    return ", ".join(str(label) for label in labels or [])  # type: ignore[attr-defined]


def bin_modifier(node: P.BinaryExpr) -> str:
    """The modifiers of a binary expression as written after its operator (`` bool on (a)
    group_left (b)``), ``""`` when it has none."""
    modifier = node.modifier
    if modifier is None:
        return ""
    out = " bool" if modifier.return_bool else ""
    matching = modifier.matching
    if matching is not None:
        word = "on" if matching.type == P.LabelModifierType.Include else "ignoring"
        out += f" {word} ({_labels(matching.labels)})"
    group = _labels(modifier.group_labels)
    if modifier.card == P.VectorMatchCardinality.ManyToOne:
        out += f" group_left ({group})" if group else " group_left"
    elif modifier.card == P.VectorMatchCardinality.OneToMany:
        out += f" group_right ({group})" if group else " group_right"
    return out


def render(
    node: q.Expr,
    replace: Mapping[Path, str] | None = None,
    selectors: Mapping[Path, str] | None = None,
    path: Path = (),
) -> str:
    """``node`` as PromQL text, with some parts replaced.

    Args:
        node: the tree.
        replace: path -> text for whole sub-trees (inserted as is: wrap it in parentheses
            when precedence matters).
        selectors: path of a vector selector (also one inside a range ``x[5m]``) -> text
            for its name and matchers; its range, offset and ``@`` are kept.
        path: the path of ``node`` itself.
    """
    if replace and path in replace:
        return replace[path]
    kids = q.children(node)

    def sub(index: int) -> str:
        return render(kids[index], replace, selectors, (*path, index))

    def selector(vector: P.VectorSelector, at: Path) -> str:
        return selectors[at] if selectors and at in selectors else _selector(vector)

    if isinstance(node, P.NumberLiteral):
        return _number(float(node.val))
    if isinstance(node, P.StringLiteral):
        return quote(str(node.val))
    if isinstance(node, P.VectorSelector):
        return selector(node, path) + _modifiers(node)
    if isinstance(node, P.MatrixSelector):
        vector = node.vector_selector
        window = _duration(node.range) if node.range is not None else ""
        return f"{selector(vector, (*path, 0))}[{window}]{_modifiers(vector)}"
    if isinstance(node, P.ParenExpr):
        return f"({sub(0)})"
    if isinstance(node, P.UnaryExpr):
        return f"-{sub(0)}"
    if isinstance(node, P.SubqueryExpr):
        step = _duration(node.step) if node.step is not None else ""
        window = _duration(node.range) if node.range is not None else ""
        return f"{sub(0)}[{window}:{step}]{_modifiers(node)}"
    if isinstance(node, P.Call):
        return f"{q.func_name(node)}({', '.join(sub(i) for i in range(len(kids)))})"
    if isinstance(node, P.AggregateExpr):
        kind, labels = q.grouping(node)
        grouping = f" {kind} ({', '.join(labels)}) " if kind else ""
        inner = ", ".join(sub(i) for i in range(len(kids))[::-1]) if len(kids) == 2 else sub(0)
        return f"{q.op(node)}{grouping}({inner})"
    if isinstance(node, P.BinaryExpr):
        return f"{sub(0)} {q.op(node)}{bin_modifier(node)} {sub(1)}"
    raise ValueError(f"cannot print {type(node).__name__}")


def renamed_call(node: P.Call, name: str, path: Path = ()) -> str:
    """The call ``node`` (at ``path``) with its function renamed to ``name``."""
    kids = q.children(node)
    return f"{name}({', '.join(render(k, path=(*path, i)) for i, k in enumerate(kids))})"


def is_name_matcher(matcher: P.Matcher, name: str) -> bool:
    """True for the ``__name__="name"`` matcher a selector's metric name is parsed into."""
    return (
        matcher.name == "__name__" and matcher.op == P.MatchOp.Equal and str(matcher.value) == name
    )


def selector_with(node: P.VectorSelector, label: str, matcher: str) -> str:
    """The selector's name and matchers with every matcher on ``label`` replaced by
    ``matcher`` (text such as ``le="1.0"``)."""
    name = str(node.name) if node.name else q.selector_name(node)
    kept = [
        matcher_text(m)
        for m in node.matchers.matchers
        if m.name != label and not (name and is_name_matcher(m, name))
    ]
    return selector_text(name, [*kept, matcher])


def with_range(node: P.MatrixSelector | P.SubqueryExpr, seconds: float, path: Path = ()) -> str:
    """The range selector or subquery ``node`` (at ``path``) with another range."""
    window = q.fmt_seconds(seconds)
    if isinstance(node, P.MatrixSelector):
        vector = node.vector_selector
        return f"{_selector(vector)}[{window}]{_modifiers(vector)}"
    step = _duration(node.step) if node.step is not None else ""
    inner = render(q.children(node)[0], path=(*path, 0))
    return f"{inner}[{window}:{step}]{_modifiers(node)}"


def renamed_selector(node: P.VectorSelector, name: str) -> str:
    """The selector's matchers under another metric name (no range, offset or ``@``)."""
    kept = [matcher_text(m) for m in node.matchers.matchers if m.name != "__name__"]
    return selector_text(name, kept) if kept or not LEGACY_METRIC_NAME.match(name) else name


def node_at(tree: q.Expr, path: Path) -> q.Expr:
    """The node at ``path`` under ``tree``."""
    node = tree
    for index in path:
        node = q.children(node)[index]
    return node


def regrouped(node: P.AggregateExpr, path: Path, keep: str) -> str:
    """The aggregation ``node`` (at ``path``) changed so that it keeps the label ``keep``:
    added to ``by (…)``, removed from ``without (…)``, ``by (keep)`` when it had none."""
    kind, labels = q.grouping(node)
    if kind == "without":
        rest = [label for label in labels if label != keep]
        grouping = f"without ({', '.join(rest)}) " if rest else f"by ({keep}) "
    else:
        grouping = f"by ({', '.join(sorted({keep, *labels}))}) "
    kids = q.children(node)
    parts = [render(kids[i], path=(*path, i)) for i in range(len(kids))][::-1]
    return f"{q.op(node)} {grouping}({', '.join(parts)})"
