"""``threshold-unit``: a threshold in another unit than the value it is compared with.

The value's unit and range come from :mod:`generator.lint.quantities`. A threshold beyond the
largest value the expression can take makes ``>``/``>=``/``==`` never hold and ``<``/``<=``/
``!=`` always hold: ``> 90`` on a 0–1 ratio (percent written for a ratio), ``> 500`` on a
latency quantile whose largest bucket bound is 80 s (milliseconds written for seconds). A
fraction of a byte compared with a bytes value is a ratio written for bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from generator.lint import printer, quantities
from generator.lint import promql as q
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import walk_paths
from generator.lint.quantities import Quantity
from generator.lint.registry import Context, Hit, rule_check

_ORDERED = frozenset({">", ">=", "<", "<=", "==", "!="})
# What a comparison whose threshold lies above every possible value does.
_ABOVE = {
    ">": "never holds",
    ">=": "never holds",
    "==": "never holds",
    "<": "always holds",
    "<=": "always holds",
    "!=": "always holds",
}
# The same for a threshold written on the left (`90 < x`): the operator is mirrored.
_MIRROR = {">": "<", "<": ">", ">=": "<=", "<=": ">=", "==": "==", "!=": "!="}


def _decimal(value: float) -> str:
    text = format(Decimal(repr(value)).normalize(), "f")
    return text


def _reading(found: Quantity, threshold: float) -> tuple[str, float] | None:
    """The unit the threshold was probably written in, and its value in the right unit."""
    if found.dimension == "fraction" and found.scale == 1.0 and 1 < threshold <= 100:
        return "percent", threshold / 100
    if found.dimension == "time" and found.top is not None:
        converted = threshold * found.scale / 1000.0  # the threshold read as milliseconds
        if converted <= found.top and found.scale == 1.0:
            return "milliseconds", converted
    return None


@rule_check(
    "threshold-unit",
    Severity.ERROR,
    "units",
    "a threshold in another unit than its value (> 90 on a 0–1 ratio, milliseconds on a "
    "seconds quantile, a fraction of a byte): the comparison never or always holds",
)
def threshold_unit(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``vllm:kv_cache_usage_perc > 90`` never fires: the gauge is a 0–1 ratio."""
    for path, node in walk_paths(tree):
        binary = q.as_binary(node, *_ORDERED)
        if binary is None:
            continue
        rhs, lhs = q.constant(binary.rhs), q.constant(binary.lhs)
        if (rhs is None) == (lhs is None):
            continue
        if rhs is not None:
            side, threshold, operator, const_at = binary.lhs, rhs, q.op(binary), (*path, 1)
        else:
            assert lhs is not None
            side, threshold, operator = binary.rhs, lhs, _MIRROR[q.op(binary)]
            const_at = (*path, 0)
        found = quantities.of(side, ctx)
        if found is None:
            continue
        hit = _judge(
            tree,
            found,
            threshold,
            operator,
            const_at,
            bool(binary.modifier and binary.modifier.return_bool),
        )
        if hit is not None:
            yield hit


def _judge(
    tree: q.Expr,
    found: Quantity,
    threshold: float,
    operator: str,
    const_at: tuple[int, ...],
    as_bool: bool,
) -> Hit | None:
    if found.dimension == "bytes" and 0 < threshold < 1:
        return Hit(
            f"`{_decimal(threshold)}` is a fraction of a byte, compared with bytes "
            f"({found.source}): it reads as a ratio; divide by the total or limit to compare "
            "a ratio, or write the threshold in bytes"
        )
    top = found.top
    if top is None or threshold < top or (threshold == top and operator not in (">", "==")):
        return None
    outcome = _ABOVE[operator]
    if as_bool:
        outcome = "is always 0" if outcome == "never holds" else "is always 1"
    reading = _reading(found, threshold)
    fix = None
    advice = "compare with a threshold in the value's unit"
    if reading is not None:
        written_in, value = reading
        text = _decimal(value)
        fix = Fix(expr=printer.render(tree, {const_at: text}))
        advice = f"the threshold looks written in {written_in}: write `{text}`"
    return Hit(
        f"`{_decimal(threshold)}` is above every value the compared expression can take: it "
        f"is {found.unit()} ({found.source}), at most {_decimal(top)}, so the comparison "
        f"{outcome}; {advice}",
        fix=fix,
    )


CHECK = threshold_unit
