"""``burn-rate-window-mismatch``: a multiwindow burn-rate pair with equal windows or different
thresholds."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.burn_rate import _alert_tiers, _fmt, _rewindowed, _short_window_for
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "burn-rate-window-mismatch",
    Severity.WARNING,
    "slo",
    "a multiwindow burn-rate pair with equal windows or different thresholds",
)
def burn_rate_window_mismatch(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``ratio_rate1h > 14.4*b and ratio_rate1h > 6*b``: the pair must share a threshold and
    use a short window below the long one."""
    for tier in _alert_tiers(rule, tree, ctx):
        if len(tier) < 2:
            continue
        long, short = tier[0], tier[-1]
        if long.window == short.window:
            wanted = _short_window_for(long.window)
            shorter = _rewindowed(tree, short.side, wanted, ctx)
            yield Hit(
                f"both halves of the multiwindow condition use the {_fmt(long.window)} window; "
                f"the short window (about 1/12 of the long one, {_fmt(wanted)}) is what lets "
                "the alert reset" + (f": `{shorter}`" if shorter else ""),
                fix=Fix(expr=printer.render(tree, {short.side: shorter})) if shorter else None,
            )
        elif abs(long.threshold - short.threshold) > 1e-9 * max(long.threshold, short.threshold):
            constant_index = 1 if long.side[-1] == 0 else 0
            long_constant = (*long.path, constant_index)
            text = printer.render(printer.node_at(tree, long_constant), path=long_constant)
            short_constant = (*short.path, 1 if short.side[-1] == 0 else 0)
            yield Hit(
                f"the {_fmt(long.window)} and {_fmt(short.window)} windows compare against "
                f"different thresholds ({long.threshold:g} vs {short.threshold:g}); both windows "
                f"of a pair use the same burn-rate factor: `{text}`",
                fix=Fix(expr=printer.render(tree, {short_constant: text})),
            )


CHECK = burn_rate_window_mismatch
