"""``burn-rate-never-fires``: a burn-rate threshold at or above a 100% error ratio: the alert can
never fire."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.checks.burn_rate import _alert_tiers, _fmt, _refactor_fix
from generator.lint.model import Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "burn-rate-never-fires",
    Severity.ERROR,
    "slo",
    "a burn-rate threshold at or above a 100% error ratio: the alert can never fire",
)
def burn_rate_never_fires(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``ratio > 14.4 * (1 - 0.9)`` asks for 144% errors: not even a total outage fires it."""
    for tier in _alert_tiers(rule, tree, ctx):
        for condition in tier:
            if condition.threshold >= 1:
                factor = condition.factor
                most = (
                    f"; with this budget every factor must stay below {1 / condition.budget:.4g}"
                    if condition.budget
                    else ""
                )
                found = _refactor_fix(tree, tier, ctx)
                yield Hit(
                    f"the {_fmt(condition.window)} error ratio must exceed "
                    f"{condition.threshold:g}"
                    + (f" ({factor:g} × budget {condition.budget:g})" if factor else "")
                    + f", above a 100% error ratio: this alert can never fire, not even during "
                    f"a total outage{most}" + (f"; for this window: {found[0]}" if found else ""),
                    fix=found[1] if found else None,
                )
                break


CHECK = burn_rate_never_fires
