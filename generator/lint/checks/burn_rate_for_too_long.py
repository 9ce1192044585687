"""``burn-rate-for-too-long``: a burn-rate alert whose `for` outlasts its short window."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.checks.burn_rate import _alert_tiers, _fmt, _for_seconds
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "burn-rate-for-too-long",
    Severity.WARNING,
    "slo",
    "a burn-rate alert whose `for` outlasts its short window",
)
def burn_rate_for_too_long(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``for: 1h`` on a 1h/5m pair: a 5-minute lull restarts the wait, and pages come 1h late."""
    wait = _for_seconds(rule)
    if not wait:
        return
    for tier in _alert_tiers(rule, tree, ctx):
        short = tier[-1]
        if len(tier) > 1 and tier[0].window > short.window and wait > short.window:
            long = tier[0]
            spent = ""
            if long.factor is not None:
                extra = long.factor * wait / ctx.config.slo_window
                spent = f" (at {long.factor:g}× that is another {extra:.1%} of the budget)"
            yield Hit(
                f"`for: {rule.for_}` is longer than the {_fmt(short.window)} short window: any "
                f"lull of a few minutes drops the short window below the threshold and "
                f"restarts the wait, and pages come {_fmt(wait)} late{spent}; drop `for` or "
                f"keep it under {_fmt(short.window)}",
                line=rule.line_of("for"),
                fix=Fix(fields=(("for", None),)),
            )
            return


CHECK = burn_rate_for_too_long
