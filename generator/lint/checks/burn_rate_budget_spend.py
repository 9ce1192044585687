"""``burn-rate-budget-spend``: a burn-rate factor that, over its window, spends nearly nothing or
the whole budget."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.checks.burn_rate import MAX_SPEND, MIN_SPEND, _alert_tiers, _fmt, _refactor_fix
from generator.lint.model import Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "burn-rate-budget-spend",
    Severity.WARNING,
    "slo",
    "a burn-rate factor that, over its window, spends nearly nothing or the whole budget",
)
def burn_rate_budget_spend(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """At the threshold burn, the long window spends ``F·w/P`` of the budget before firing."""
    period = ctx.config.slo_window
    for tier in _alert_tiers(rule, tree, ctx):
        long = tier[0]
        factor = long.factor
        if factor is None or factor < 1 or long.threshold >= 1:
            continue  # unknown budget, burn-rate-below-budget, burn-rate-never-fires
        # Rounded: a factor read back from a decimal threshold (0.72 / 0.05 = 14.399…) lands
        # a hair below a boundary it was written on (14.4× over 30m spends exactly 1%).
        spend = round(factor * long.window / period, 9)
        lasts = _fmt(period / factor)
        where = f"{factor:g}× over {_fmt(long.window)}"
        if MIN_SPEND <= spend < MAX_SPEND:
            continue
        found = _refactor_fix(tree, tier, ctx)
        advice = f"; for this window: {found[0]}" if found else ""
        if spend >= MAX_SPEND:
            yield Hit(
                f"{where} fires only after {spend:.0%} of the {_fmt(period)} error budget is "
                f"spent (at {factor:g}× the budget lasts {lasts}, less than the "
                f"{_fmt(long.window)} the window needs){advice} (Workbook: 14.4× over 1h, 6× "
                "over 6h, 1× over 3d)",
                fix=found[1] if found else None,
            )
        else:
            yield Hit(
                f"{where} fires when only {spend:.2%} of the {_fmt(period)} error budget is "
                f"at stake: a short blip of errors pages (the Workbook's fastest tier, 14.4× "
                f"over 1h, waits for 2%){advice}",
                fix=found[1] if found else None,
            )


CHECK = burn_rate_budget_spend
