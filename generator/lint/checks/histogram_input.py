"""``histogram-input``: a histogram function over series that hold no histogram to read.

``histogram_quantile``/``histogram_fraction`` read classic buckets (``x_bucket`` with ``le``)
or native histograms; ``histogram_count``/``_sum``/``_avg``/``_stddev``/``_stdvar`` read native
histograms only (Prometheus "Functions"; ``histogram_fraction`` reads classic buckets from 3.4
on). A ``_count``/``_sum``/``_total`` counter, a gauge, or a classic histogram's bare name
(which names no series: only ``_bucket``/``_count``/``_sum`` exist, unless Prometheus converts
the histogram to a native one, NHCB) gives no result. A bare name that may be a native
histogram is accepted under ``rate()``; read raw it is a quantile of the whole uptime.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import promql_parser as P

from generator.lint import known, printer
from generator.lint import promql as q
from generator.lint.model import Fix, Rule, Severity
from generator.lint.names import scraped_by_server
from generator.lint.printer import Path, walk_paths
from generator.lint.registry import Context, Hit, rule_check

# Function -> index of its histogram argument.
_BUCKET_READERS = {"histogram_quantile": 1, "histogram_fraction": 2}
_NATIVE_ONLY = {
    "histogram_count": 0,
    "histogram_sum": 0,
    "histogram_avg": 0,
    "histogram_stddev": 0,
    "histogram_stdvar": 0,
}
_FLOAT_SUFFIXES = ("_count", "_sum", "_total", "_created", "_info")
_RATED = q.RATE_FUNCS | {"delta", "idelta"}
_PASSING = frozenset({"label_replace", "label_join", "sort", "sort_desc"})


@dataclass(frozen=True)
class _Source:
    """A selector whose samples reach the histogram argument's value."""

    path: Path
    name: str
    rated: bool
    le_kept: bool


def _sources(
    node: q.Expr, path: Path, rated: bool = False, le_kept: bool = True
) -> Iterator[_Source]:
    if isinstance(node, P.ParenExpr | P.UnaryExpr | P.SubqueryExpr):
        yield from _sources(node.expr, (*path, 0), rated, le_kept)
    elif isinstance(node, P.MatrixSelector):
        yield from _sources(node.vector_selector, (*path, 0), rated, le_kept)
    elif isinstance(node, P.VectorSelector):
        yield _Source(path, q.selector_name(node), rated, le_kept)
    elif isinstance(node, P.AggregateExpr):
        if q.op(node) not in ("count", "group", "count_values"):
            kept = le_kept and q.keeps_label(node, "le")
            yield from _sources(node.expr, (*path, 0), rated, kept)
    elif isinstance(node, P.Call):
        name = q.func_name(node)
        if (name in _RATED or name in _PASSING) and node.args:
            yield from _sources(node.args[0], (*path, 0), rated or name in _RATED, le_kept)
    elif isinstance(node, P.BinaryExpr):
        if q.constant(node.rhs) is not None:
            yield from _sources(node.lhs, (*path, 0), rated, le_kept)
        elif q.constant(node.lhs) is not None or (
            node.modifier is not None and node.modifier.card == P.VectorMatchCardinality.OneToMany
        ):
            yield from _sources(node.rhs, (*path, 1), rated, le_kept)
        else:
            yield from _sources(node.lhs, (*path, 0), rated, le_kept)
            if q.op(node) == "or":
                yield from _sources(node.rhs, (*path, 1), rated, le_kept)


def _float_kind(name: str, ctx: Context) -> str:
    """Why the scraped series ``name`` holds plain numbers, ``""`` when it may be a histogram."""
    gauge = known.gauge(name)
    if gauge is not None:
        return f"a {gauge.server} gauge ({gauge.what})"
    found = known.histogram_of_series(name)
    if found is not None and found[1] in ("_count", "_sum"):
        return f"the {found[1]} counter of {found[0].server}'s histogram `{found[0].name}`"
    if name.endswith(_FLOAT_SUFFIXES):
        return f"a `{name[name.rindex('_') :]}` series (a plain number)"
    if ctx.names.is_known(name):
        return "a counter"
    return ""


def _recorded_problem(name: str, ctx: Context, seen: frozenset[str]) -> str:
    """What a recorded input lacks: read through its recording rules here, else its name."""
    trees = ctx.recorded_trees(name) if name not in seen else []
    for tree in trees:
        for source in _sources(tree, ()):
            inner = source.name
            if ctx.names.is_recorded(inner):
                why = _recorded_problem(inner, ctx, seen | {name})
            else:
                why = _float_kind(inner, ctx)
            if why:
                return f"its recording rule reads `{inner}`, {why}"
        return ""
    parts = ctx.names.split(name)
    if not trees and parts is not None and parts[1].endswith(("_count", "_sum", "_total")):
        return f"its name says it records `{parts[1]}`, a plain number"
    return ""


def _renamed_fix(
    tree: q.Expr, call_path: Path, sources: list[_Source], rename: dict[Path, str], window: str
) -> Fix | None:
    """The expression with each renamed selector reading ``<base>_bucket`` (rated when it was
    not), when every aggregation on the way keeps ``le``."""
    if not rename or not all(s.le_kept for s in sources if s.path in rename):
        return None
    replace: dict[Path, str] = {}
    selectors: dict[Path, str] = {}
    for source in sources:
        if source.path not in rename:
            continue
        node = printer.node_at(tree, source.path)
        assert isinstance(node, P.VectorSelector)
        text = printer.renamed_selector(node, rename[source.path])
        if source.rated:
            selectors[source.path] = text
        else:
            replace[source.path] = f"rate({text}[{window}])"
    return Fix(expr=printer.render(tree, replace, selectors))


@rule_check(
    "histogram-input",
    Severity.ERROR,
    "histograms",
    "a histogram function over series that are no histogram (a _count/_sum, a counter, a "
    "gauge, a classic histogram's bare name) or a native histogram read without rate()",
)
def histogram_input(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``histogram_quantile(0.99, sum by (le) (rate(x_count[5m])))`` reads no bucket at all."""
    window = q.fmt_seconds(max(300.0, 4 * ctx.config.scrape_interval))
    for path, node in walk_paths(tree):
        func = q.func_name(node)
        index = _BUCKET_READERS.get(func, _NATIVE_ONLY.get(func))
        if index is None or len(q.children(node)) <= index:
            continue
        arg = q.children(node)[index]
        sources = list(_sources(arg, (*path, index)))
        yield from _judge(tree, path, func, sources, window, ctx)


def _judge(
    tree: q.Expr, path: Path, func: str, sources: list[_Source], window: str, ctx: Context
) -> Iterator[Hit]:
    rename: dict[Path, str] = {}
    problems: list[str] = []
    native_only = func in _NATIVE_ONLY
    for source in sources:
        name = source.name
        if not name:
            continue
        if ctx.names.is_recorded(name):
            why = _recorded_problem(name, ctx, frozenset())
            if why:
                problems.append(f"`{name}`: {why}")
            continue
        why = _float_kind(name, ctx)
        preset = known.histogram(name)
        if why:
            problems.append(f"`{name}` is {why}")
            base = name.rsplit("_", 1)[0]
            if name.endswith(("_count", "_sum")) and not native_only:
                rename[source.path] = base + "_bucket"
        elif name.endswith("_bucket"):
            if native_only:
                problems.append(f"`{name}` holds classic buckets, plain numbers per `le`")
            elif func == "histogram_fraction" and "2" in ctx.config.versions:
                problems.append(
                    f"`{name}` holds classic buckets, which histogram_fraction reads only "
                    "from Prometheus 3.4 on (Prometheus 2 reads native histograms only)"
                )
        elif preset is not None and not preset.native:
            problems.append(
                f"`{name}` is {preset.server}'s classic histogram: no series has its bare "
                f"name, only `{name}_bucket`/`_count`/`_sum` (unless your Prometheus converts "
                "it to a native histogram, NHCB)"
            )
            if not native_only:
                rename[source.path] = name + "_bucket"
        elif ":" in name and scraped_by_server(name):
            server = name.split(":")[0]
            problems.append(
                f"`{name}` is in the `{server}:` namespace of a server whose histograms "
                f"obsgen's presets know only as classic ones: no series has its bare name, "
                f"only `{name}_bucket`/`_count`/`_sum` (unless your Prometheus converts it to "
                "a native histogram, NHCB)"
            )
            if not native_only:
                rename[source.path] = name + "_bucket"
        elif not source.rated and not native_only:
            problems.append(
                f"`{name}` is read without rate(): as a native histogram it gives the "
                "quantile of every observation since the process started, and as a classic "
                "histogram's bare name it names no series"
            )
    if not problems:
        return
    fix = None if native_only else _renamed_fix(tree, path, sources, rename, window)
    if native_only:
        fix = _native_fix(tree, path, func, sources)
    advice = _advice(func, fix)
    yield Hit(f"{func}() finds no histogram to read: {'; '.join(problems)}; {advice}", fix=fix)


def _native_fix(tree: q.Expr, path: Path, func: str, sources: list[_Source]) -> Fix | None:
    """``histogram_count(rate(x_count[5m]))`` -> ``rate(x_count[5m])`` (and ``_sum`` for
    histogram_sum): the classic series already hold what the function would compute."""
    suffix = {"histogram_count": "_count", "histogram_sum": "_sum"}.get(func)
    if suffix is None or not sources or not all(s.name.endswith(suffix) for s in sources):
        return None
    arg = printer.node_at(tree, (*path, 0))
    text = printer.render(arg, path=(*path, 0))
    return Fix(expr=printer.render(tree, {path: f"({text})" if q.as_binary(arg) else text}))


def _advice(func: str, fix: Fix | None) -> str:
    if func in _NATIVE_ONLY:
        if fix is not None and fix.expr is not None:
            return f"the classic series already holds it: `{fix.expr}`"
        return (
            f"{func}() reads native histograms only: for a classic histogram use "
            "rate(x_count[…]), rate(x_sum[…]) or their ratio"
        )
    if fix is not None and fix.expr is not None:
        return f"read the buckets: `{fix.expr}`"
    return (
        "read a classic histogram's buckets (`sum by (le) (rate(x_bucket[5m]))`) or a native "
        "histogram's rate (`rate(x[5m])`)"
    )


CHECK = histogram_input
