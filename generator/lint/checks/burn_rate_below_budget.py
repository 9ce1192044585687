"""``burn-rate-below-budget``: a burn-rate alert threshold below 1x the error budget."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.checks.burn_rate import _alert_tiers, _refactor_fix
from generator.lint.model import Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "burn-rate-below-budget",
    Severity.WARNING,
    "slo",
    "a burn-rate alert threshold below 1x the error budget",
)
def burn_rate_below_budget(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``error_ratio > 0.5 * (1 - 0.999)`` fires while the SLO is still being met."""
    for tier in _alert_tiers(rule, tree, ctx):
        factor = tier[0].factor
        if factor is None or not 0 < factor < 1:
            continue
        found = _refactor_fix(tree, tier, ctx)
        yield Hit(
            f"burn-rate threshold {factor:g} × budget {tier[0].budget:g} is below 1× the error "
            "budget: it fires while the SLO is still met; use a factor of at least 1"
            + (f" for this window: {found[0]}" if found else ""),
            fix=found[1] if found else None,
        )


CHECK = burn_rate_below_budget
