"""Helpers of the burn-rate checks: alerts judged as a whole, as the SRE Workbook ch. 5 does.

The SRE Workbook reading and its formulas: docs/lint.md, "Burn-rate alerts read as tiers".
"""

from __future__ import annotations

from dataclasses import dataclass

import promql_parser as P

from generator import slo
from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.slo import _budget_product, _error_series, _threshold, _windows
from generator.lint.model import Fix, Rule
from generator.lint.printer import Path, walk_paths
from generator.lint.registry import Context

# The Workbook pairs each long window with a short one of 1/12 of it; a short window beyond
# twice that ratio resets the alert much later than the Workbook's tiers do.
SHORT_WINDOW_MAX_RATIO = 1 / 6
# A single-window condition resetting later than this after recovery is reported.
SLOW_RESET = 15 * 60.0
# Budget spent at the threshold burn before the alert fires: the Workbook's tiers spend 2–10%.
MIN_SPEND, MAX_SPEND = 0.01, 1.0


@dataclass(frozen=True)
class Condition:
    """One ``error_ratio[window] > threshold`` of a burn-rate alert.

    Attributes:
        window: seconds of the error ratio.
        threshold: the error ratio it must exceed (0–1).
        budget: the error budget (0–1) when known.
        path: where the comparison is in the alert's tree.
        side: path of its error-ratio side.
    """

    window: float
    threshold: float
    budget: float | None
    path: Path = ()
    side: Path = ()

    @property
    def factor(self) -> float | None:
        """The burn-rate factor ``threshold / budget``, when the budget is known."""
        return None if not self.budget else self.threshold / self.budget

    def reset_after(self) -> float:
        """Seconds the condition stays true after a total outage ends (see module doc)."""
        return self.window * max(0.0, 1.0 - self.threshold)


def _flatten(node: q.Expr, op: str, path: Path = ()) -> list[tuple[Path, q.Expr]]:
    while isinstance(node, P.ParenExpr):
        node, path = node.expr, (*path, 0)
    binary = q.as_binary(node, op)
    if binary is None:
        return [(path, node)]
    return _flatten(binary.lhs, op, (*path, 0)) + _flatten(binary.rhs, op, (*path, 1))


def _ratio_expression(node: q.Expr) -> bool:
    """True for ``sum(rate(bad[w])) / sum(rate(all[w]))``: a ratio of rates over one window.

    Not a mean (``rate(x_sum[w]) / rate(x_count[w])``: seconds, not a ratio) nor a growth
    ratio (the same rate against itself at another offset)."""
    division = q.as_binary(q.unwrap(node), "/")
    if division is None:
        return False
    names = [
        {q.selector_name(n) for n, _ in q.walk(side) if q.selector_name(n)}
        for side in (division.lhs, division.rhs)
    ]
    if any(n.endswith("_sum") for n in names[0]) and any(n.endswith("_count") for n in names[1]):
        return False
    offsets = [
        {q.seconds(n.offset) for n, _ in q.walk(side) if isinstance(n, P.VectorSelector)}
        for side in (division.lhs, division.rhs)
    ]
    if offsets[0] != offsets[1]:
        return False
    sides = []
    for side in (division.lhs, division.rhs):
        calls = [n for n, _ in q.walk(side) if q.func_name(n) in q.RATE_FUNCS]
        windows = {q.seconds(n.range) for n, _ in q.walk(side) if isinstance(n, P.MatrixSelector)}
        sides.append((bool(calls), windows))
    return all(has_rate for has_rate, _ in sides) and len(sides[0][1] | sides[1][1]) == 1


def _matchers_key(node: q.Expr, ctx: Context) -> tuple[str, frozenset[tuple[str, str]]] | None:
    """``(metric part, equality matchers)`` of the recorded ratio a condition reads."""
    for sub, _ in q.walk(node):
        name = q.selector_name(sub)
        parts = ctx.names.split(name) if name else None
        if parts is not None:
            pairs = frozenset(
                (str(m.name), str(m.value))
                for m in q.matchers(sub)
                if m.op == P.MatchOp.Equal and m.name != "__name__"
            )
            return parts[1], pairs
    return None


def _recorded_budget(node: q.Expr, ctx: Context) -> float | None:
    """The budget a recording rule divides the same recorded ratio by (``ratio / 0.001``)."""
    key = _matchers_key(node, ctx)
    if key is None:
        return None
    return q.memo("burn-rate recorded budgets", id(ctx), lambda: _recorded_budgets(ctx)).get(key)


def _recorded_budgets(ctx: Context) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Per recorded ratio (:func:`_matchers_key`), the first budget (``0 < c < 1``) a
    recording rule of the run divides it by, in record order: read once per run, not once per
    alert condition (every condition would scan every record again)."""
    budgets: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for rules in ctx.records.values():
        for _, tree in rules:
            for sub, _ in q.walk(tree) if tree is not None else ():
                division = q.as_binary(sub, "/")
                if division is None:
                    continue
                divisor = q.constant(division.rhs)
                if divisor is None or not 0 < divisor < 1:
                    continue
                key = _matchers_key(division.lhs, ctx)
                if key is not None:
                    budgets.setdefault(key, divisor)
    return budgets


def _scale(node: q.Expr) -> float:
    """The constant a ratio is multiplied by (``100 * bad / all`` is in percent: 100)."""
    node = q.unwrap(node)
    binary = q.as_binary(node, "*", "/")
    if binary is None:
        return 1.0
    lhs, rhs = q.constant(binary.lhs), q.constant(binary.rhs)
    if q.op(binary) == "*":
        if lhs is not None:
            return lhs * _scale(binary.rhs)
        if rhs is not None:
            return rhs * _scale(binary.lhs)
        return 1.0
    if rhs is not None and rhs != 0:
        return _scale(binary.lhs) / rhs
    return _scale(binary.lhs)


def _condition(node: q.Expr, path: Path, ctx: Context) -> Condition | None:
    """The first burn condition inside ``node`` (an operand of ``and``, at ``path``)."""
    for sub_path, sub in walk_paths(node, path):
        found = _threshold(sub)
        if found is None or q.op(sub) not in (">", ">="):
            continue
        side, threshold = found
        if not (_error_series(side, ctx) or _ratio_expression(side)):
            continue
        windows = _windows(side, ctx)
        if len(windows) != 1:
            return None
        product = _budget_product(sub)  # type: ignore[arg-type]
        budget = product[1] if product is not None else _recorded_budget(side, ctx)
        side_path = (*sub_path, 0) if q.constant(q.children(sub)[1]) is not None else (*sub_path, 1)
        scale = _scale(side)
        if scale <= 0:
            return None
        return Condition(windows.pop(), threshold / scale, budget, sub_path, side_path)
    return None


def tiers(tree: q.Expr, ctx: Context) -> list[list[Condition]]:
    """The alert's tiers (``or`` alternatives), each its burn conditions (``and``-ed), the
    longest window first."""
    out: list[list[Condition]] = []
    for alt_path, alternative in _flatten(tree, "or"):
        parts = _flatten(alternative, "and", alt_path)
        found = [c for c in (_condition(part, at, ctx) for at, part in parts) if c is not None]
        if found:
            out.append(sorted(found, key=lambda c: -c.window))
    return out


_NICE_WINDOWS = tuple(
    q.parse_duration(text)
    for text in ("1m", "2m", "5m", "10m", "15m", "30m", "1h", "2h", "3h", "6h", "12h", "1d")
)


def _short_window_for(long: float) -> float:
    """The Workbook's short window for ``long``: 1/12 of it, rounded to a usual duration."""
    return min(_NICE_WINDOWS, key=lambda w: abs(w - long / 12))


def _node_at(tree: q.Expr, path: Path) -> q.Expr:
    node = tree
    for index in path:
        node = q.children(node)[index]
    return node


def _rewindowed(tree: q.Expr, side: Path, window: float, ctx: Context) -> str | None:
    """The error-ratio side at ``side`` read over ``window`` instead, or ``None`` when no
    such series is known (a recorded ratio whose sibling is not recorded in this run)."""
    node = _node_at(tree, side)
    ranges: dict[Path, str] = {}
    names: dict[Path, str] = {}
    for sub_path, sub in walk_paths(node, side):
        if isinstance(sub, P.MatrixSelector):
            ranges[sub_path] = printer.with_range(sub, window, sub_path)
        elif isinstance(sub, P.VectorSelector) and sub_path[:-1] not in ranges:
            name = q.selector_name(sub)
            window_now = ctx.names.window(name)
            if window_now is None:
                continue
            sibling = _sibling(name, window, ctx)
            if sibling is None:
                return None
            names[sub_path] = printer.renamed_selector(sub, sibling)
    if not ranges and not names:
        return None
    return printer.render(node, ranges, names, path=side)


def _sibling(name: str, window: float, ctx: Context) -> str | None:
    """The recorded name like ``name`` but for ``window`` (``…rate1h`` -> ``…rate5m``)."""
    head, _, ops = name.rpartition(":")
    for candidate in ctx.records:
        c_head, _, c_ops = candidate.rpartition(":")
        if c_head != head or ctx.names.window(candidate) != window:
            continue
        if c_ops.rstrip("0123456789smhdwy") == ops.rstrip("0123456789smhdwy"):
            return candidate
    return None


def _fmt(seconds: float) -> str:
    """A duration rounded for prose: ``59m``, ``2d2h``."""
    step = 60.0 if seconds < 86400 else 3600.0
    return q.fmt_seconds(max(step, round(seconds / step) * step)) if seconds >= 60 else "<1m"


def _alert_tiers(rule: Rule, tree: q.Expr, ctx: Context) -> list[list[Condition]]:
    """:func:`tiers` of an alert (remembered for the run: every burn-rate check reads them)."""
    if rule.kind != "alert":
        return []
    return q.memo("burn-rate tiers", tree, lambda: tiers(tree, ctx))


# The Workbook's factor for each long window at its 30-day SLO window (ch. 5, "Multiwindow,
# multi-burn-rate alerts"), from obsgen's own default tiers: 14.4 over 1h … 1 over 3d.
WORKBOOK_FACTORS = {
    tier.long_window_ms / 1000: float(
        slo.burn_rate_factor(tier.budget, 30 * slo.DAY_MS, tier.long_window_ms)
    )
    for tier in slo.DEFAULT_TIERS
}


def suggest_factor(window: float, budget: float, period: float) -> float | None:
    """A burn factor for a long ``window`` that passes every check here: at least 1, a
    threshold below 100% errors, and 1–100% of the budget spent before firing. The
    Workbook's factor when it fits, else the one spending 5%; ``None`` when none fits."""
    low = max(1.0, MIN_SPEND * period / window)
    high = min(1.0 / budget, MAX_SPEND * period / window)

    def fits(factor: float) -> bool:
        return low <= factor < high

    workbook = WORKBOOK_FACTORS.get(window)
    if workbook is not None and fits(workbook):
        return workbook
    target = min(max(0.05 * period / window, low), high * 0.95)
    rounded = float(f"{target:.3g}")
    return rounded if fits(rounded) else None


def _factor_path(tree: q.Expr, condition: Condition) -> tuple[Path, bool] | None:
    """Where the condition's factor is written: ``(path, True)`` for the ``F`` of
    ``F * (1 - objective)``, ``(path, False)`` for a threshold written as one number."""
    comparison = printer.node_at(tree, condition.path)
    constant_index = 1 if condition.side[-1] == 0 else 0
    at = (*condition.path, constant_index)
    node = q.children(comparison)[constant_index]
    while isinstance(node, P.ParenExpr):
        node, at = node.expr, (*at, 0)
    product = q.as_binary(node, "*")
    if product is None:
        return (at, False) if q.constant(node) is not None else None
    operands = [q.unwrap(product.lhs), q.unwrap(product.rhs)]
    values = [q.constant(o) for o in operands]
    if values[0] is None or values[1] is None:
        return None
    if q.op(operands[0]) == "-":
        index = 1
    elif q.op(operands[1]) == "-":
        index = 0
    else:
        index = 0 if values[0] >= values[1] else 1
    target = (*at, index)
    while isinstance(printer.node_at(tree, target), P.ParenExpr):
        target = (*target, 0)
    return target, True


def with_factor(tree: q.Expr, tier: list[Condition], factor: float) -> str | None:
    """The alert with every condition of ``tier`` at burn ``factor`` (same budget)."""
    replace: dict[Path, str] = {}
    for condition in tier:
        found = _factor_path(tree, condition)
        if found is None or condition.budget is None:
            return None
        at, is_factor = found
        replace[at] = f"{factor:g}" if is_factor else f"{factor * condition.budget:.6g}"
    return printer.render(tree, replace)


def _refactor_fix(tree: q.Expr, tier: list[Condition], ctx: Context) -> tuple[str, Fix] | None:
    """``(words, fix)`` moving the tier to :func:`suggest_factor`'s factor."""
    long = tier[0]
    if long.budget is None:
        return None
    factor = suggest_factor(long.window, long.budget, ctx.config.slo_window)
    fixed = with_factor(tree, tier, factor) if factor is not None else None
    if factor is None or fixed is None:
        return None
    return f"{factor:g}× over {_fmt(long.window)}", Fix(expr=fixed)


def _for_seconds(rule: Rule) -> float:
    try:
        return q.parse_duration(rule.for_) if rule.for_ else 0.0
    except ValueError:
        return 0.0
