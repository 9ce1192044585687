"""The unit and range of an expression's value, from what the presets and metric names say.

A :class:`Quantity` is a dimension (``fraction``, ``time``, ``bytes``) with a scale — value
units per base unit: a 0–1 ratio is 1, a percent 100; seconds 1, milliseconds 1000 — and the
largest value it can take when known (a ratio 1, a percent 100; ``histogram_quantile`` of a
preset histogram its largest finite bucket bound). Sources: the presets (generator/lint/
known.py), Prometheus "Metric and label naming" (base units: ``_seconds``, ``_bytes``, ``_ratio``
for 0–1), and recording rules of the same run. Arithmetic by constants rescales
(``ratio * 100`` is a percent); anything else is unknown (``None``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import promql_parser as P

from generator.lint import known
from generator.lint import promql as q
from generator.lint.registry import Context


@dataclass(frozen=True)
class Quantity:
    """What an expression's value measures.

    Attributes:
        dimension: ``fraction``, ``time`` or ``bytes``.
        scale: value units per base unit (ratio 1, percent 100; s 1, ms 1000, µs 1e6).
        top: the largest value it can take, in value units, ``None`` when unknown.
        source: a few words saying how it is known (for messages).
    """

    dimension: str
    scale: float
    top: float | None
    source: str

    def unit(self) -> str:
        """``"a 0–1 ratio"``, ``"percent"``, ``"seconds"``, ``"milliseconds"`` … as words."""
        names = {
            ("fraction", 1.0): "a 0–1 ratio",
            ("fraction", 100.0): "percent (0–100)",
            ("time", 1.0): "seconds",
            ("time", 1000.0): "milliseconds",
            ("time", 1e6): "microseconds",
            ("bytes", 1.0): "bytes",
        }
        return names.get((self.dimension, self.scale), f"{self.dimension} × {self.scale:g}")


# Name suffix -> (dimension, scale, top): Prometheus base units, and the usual non-base ones.
_SUFFIXES = (
    ("_ratio", "fraction", 1.0, 1.0),
    ("_percent", "fraction", 100.0, 100.0),
    ("_percentage", "fraction", 100.0, 100.0),
    ("_seconds", "time", 1.0, None),
    ("_milliseconds", "time", 1000.0, None),
    ("_ms", "time", 1000.0, None),
    ("_microseconds", "time", 1e6, None),
    ("_us", "time", 1e6, None),
    ("_bytes", "bytes", 1.0, None),
)
_KEEPS_UNIT_FUNCS = frozenset(
    {
        "avg_over_time",
        "max_over_time",
        "min_over_time",
        "last_over_time",
        "quantile_over_time",
        "abs",
        "ceil",
        "floor",
        "round",
        "clamp",
        "clamp_max",
        "clamp_min",
        "label_replace",
        "label_join",
        "sort",
        "sort_desc",
    }
)
_KEEPS_UNIT_AGGREGATIONS = frozenset({"avg", "min", "max", "quantile", "topk", "bottomk", "limitk"})


def _by_suffix(name: str, what: str) -> Quantity | None:
    for suffix, dimension, scale, top in _SUFFIXES:
        if name.endswith(suffix):
            return Quantity(dimension, scale, top, f"{what} `{name}` ends in `{suffix}`")
    return None


def of_name(name: str, ctx: Context, seen: frozenset[str] = frozenset()) -> Quantity | None:
    """The quantity a series holds: a preset gauge, a recording rule of this run, a unit
    suffix of a scraped name."""
    if ctx.names.is_recorded(name):
        if name in seen:
            return None
        # Remembered for the run by name and path: every copy of a record (one group shipped
        # as a rule file, a PrometheusRule and Helm values) and every rule reading it would
        # otherwise evaluate the records below again, multiplying per level.
        return q.memo(
            "quantity of record", (id(ctx), name, seen), lambda: _of_record(name, ctx, seen)
        )
    gauge = known.gauge(name)
    if gauge is not None:
        if gauge.kind == "ratio":
            return Quantity("fraction", 1.0, 1.0, f"{gauge.server}'s {gauge.what}, a 0–1 ratio")
        if gauge.kind == "percent":
            return Quantity("fraction", 100.0, 100.0, f"{gauge.server}'s {gauge.what} in percent")
        return None
    if name.endswith(("_total", "_count", "_sum", "_bucket", "_created")):
        return None  # counters: their values count since the start, in no unit of their own
    return _by_suffix(name, "the name")


def _of_record(name: str, ctx: Context, seen: frozenset[str]) -> Quantity | None:
    """The quantity of the recorded ``name``: the one its recording rules agree on."""
    found = {of(tree, ctx, seen | {name}) for tree in ctx.recorded_trees(name)}
    if len(found) != 1:
        return None
    inner = found.pop()
    return None if inner is None else replace(inner, source=f"its recording rule: {inner.source}")


def _histogram_quantity(base: str) -> Quantity | None:
    """The unit of the observations of the histogram named ``base`` (its bucket bounds)."""
    preset = known.histogram(base)
    if preset is not None:
        scale = 1.0 / preset.seconds_per_unit
        unit = Quantity("time", scale, preset.top, "").unit()
        return Quantity(
            "time",
            scale,
            preset.top,
            f"{preset.server}'s histogram `{base}` in {unit}, whose largest bucket bound is "
            f"{preset.top:g}",
        )
    return _by_suffix(base, "the histogram")


def _quantile_of(arg: q.Expr, ctx: Context) -> Quantity | None:
    for node, _ in q.walk(arg):
        name = q.selector_name(node)
        if not name:
            continue
        if ctx.names.is_recorded(name):
            parts = ctx.names.split(name)
            metric = parts[1] if parts else ""
            return _histogram_quantity(metric.removesuffix("_bucket")) if metric else None
        return _histogram_quantity(name.removesuffix("_bucket"))
    return None


def _mean_of(lhs: q.Expr, rhs: q.Expr) -> Quantity | None:
    """``rate(x_sum[w]) / rate(x_count[w])``: the mean observation, in the histogram's unit
    (no top: a mean may pass the largest bucket bound)."""
    top_names = [q.selector_name(n) for n, _ in q.walk(lhs) if q.selector_name(n)]
    bottom_names = [q.selector_name(n) for n, _ in q.walk(rhs) if q.selector_name(n)]
    if len(top_names) != 1 or len(bottom_names) != 1:
        return None
    total, count = top_names[0], bottom_names[0]
    if not (total.endswith("_sum") and count == total.removesuffix("_sum") + "_count"):
        return None
    found = _histogram_quantity(total.removesuffix("_sum"))
    return None if found is None else replace(found, top=None)


def of(node: q.Expr, ctx: Context, seen: frozenset[str] = frozenset()) -> Quantity | None:
    """The quantity ``node``'s value measures, ``None`` when unknown."""
    node = q.unwrap(node)
    if isinstance(node, P.VectorSelector):
        return of_name(q.selector_name(node), ctx, seen)
    if isinstance(node, P.Call):
        func = q.func_name(node)
        if func == "histogram_quantile" and len(node.args) == 2:
            return _quantile_of(node.args[1], ctx)
        if func in _KEEPS_UNIT_FUNCS and node.args:
            arg = node.args[1] if func == "quantile_over_time" else node.args[0]
            inner = arg.vector_selector if isinstance(arg, P.MatrixSelector) else arg
            return of(inner, ctx, seen)
        return None
    if isinstance(node, P.AggregateExpr):
        inner = of(node.expr, ctx, seen)
        if q.op(node) in _KEEPS_UNIT_AGGREGATIONS:
            return inner
        if q.op(node) == "sum" and inner is not None and inner.dimension == "bytes":
            return replace(inner, top=None)
        return None
    if isinstance(node, P.BinaryExpr):
        return _binary(node, ctx, seen)
    return None


def _binary(node: P.BinaryExpr, ctx: Context, seen: frozenset[str]) -> Quantity | None:
    operator = q.op(node)
    lhs_value, rhs_value = q.constant(node.lhs), q.constant(node.rhs)
    if operator in q.COMPARISONS and not (node.modifier and node.modifier.return_bool):
        return of(node.lhs, ctx, seen) if rhs_value is not None else None
    if operator in ("and", "unless"):
        return of(node.lhs, ctx, seen)
    if operator in ("*", "/") and (lhs_value is None) != (rhs_value is None):
        side, factor = (node.lhs, rhs_value) if rhs_value is not None else (node.rhs, lhs_value)
        inner = of(side, ctx, seen)
        if inner is None or factor is None or factor == 0 or factor < 0:
            return None
        if operator == "/":
            if rhs_value is None:
                return None  # c / x: not the same unit
            factor = 1.0 / factor
        top = None if inner.top is None else inner.top * factor
        source = f"{inner.source}, times {factor:g}"
        return replace(inner, scale=inner.scale * factor, top=top, source=source)
    if operator == "/" and lhs_value is None and rhs_value is None:
        return _mean_of(node.lhs, node.rhs)
    return None
