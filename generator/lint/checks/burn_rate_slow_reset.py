"""``burn-rate-slow-reset``: a burn-rate alert without a short window (or with a long one) keeps
firing after recovery."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.burn_rate import (
    SHORT_WINDOW_MAX_RATIO,
    SLOW_RESET,
    _alert_tiers,
    _fmt,
    _node_at,
    _rewindowed,
    _short_window_for,
)
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "burn-rate-slow-reset",
    Severity.WARNING,
    "slo",
    "a burn-rate alert without a short window (or with a long one) keeps firing after recovery",
)
def burn_rate_slow_reset(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``ratio_rate1h > 14.4 * b`` alone keeps firing ~59 m after a total outage ends."""
    for tier in _alert_tiers(rule, tree, ctx):
        long, short = tier[0], tier[-1]
        if long.threshold >= 1:
            continue  # burn-rate-never-fires
        if len(tier) == 1 or short.window == long.window:
            reset = long.reset_after()
            if reset <= SLOW_RESET:
                continue
            wanted = _short_window_for(long.window)
            extra = _rewindowed(tree, long.side, wanted, ctx)
            fix = None
            if extra is not None:
                condition = printer.render(_node_at(tree, long.path), path=long.path)
                again = printer.render(
                    _node_at(tree, long.path), {long.side: extra}, path=long.path
                )
                fix = Fix(expr=printer.render(tree, {long.path: f"({condition} and {again})"}))
            how = f": `and {again}`" if fix is not None else ""
            yield Hit(
                f"single-window burn condition over {_fmt(long.window)}: after a total "
                f"outage it keeps firing ~{_fmt(reset)} after recovery; add the same "
                f"threshold over a short window of ~1/12 ({_fmt(wanted)}, SRE Workbook ch. 5) "
                f"so it resets within ~{_fmt(wanted)}{how}",
                fix=fix,
            )
        elif short.window > long.window * SHORT_WINDOW_MAX_RATIO:
            wanted = _short_window_for(long.window)
            shorter = _rewindowed(tree, short.side, wanted, ctx)
            fix = Fix(expr=printer.render(tree, {short.side: shorter})) if shorter else None
            yield Hit(
                f"the short window {_fmt(short.window)} is {short.window / long.window:.0%} of "
                f"the long window {_fmt(long.window)}: the alert keeps firing ~"
                f"{_fmt(short.reset_after())} after recovery; the Workbook pairs a short window "
                f"of 1/12 ({_fmt(wanted)}), which resets within ~{_fmt(wanted)}"
                + (f": `{shorter}`" if shorter else ""),
                fix=fix,
            )


CHECK = burn_rate_slow_reset
