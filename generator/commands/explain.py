"""``obsgen explain SPEC``: the burn-rate tier table of a spec, the SRE Workbook math made visible.

Per SLO and tier it prints the windows, the burn-rate factor, the error-ratio threshold both
windows must exceed, the share of the SLO window's budget spent when the tier fires at exactly
its factor, and three times, each beside the Workbook's ideal figure: how long a total outage
(every event bad) and a partial one at twice the tier's factor take to fire our rules, and how
long the alert takes to resolve after full recovery — at the spec's evaluation and scrape
intervals. Formulas: :mod:`generator.slo` (SRE Workbook ch. 5).
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from pathlib import Path

from generator import naming, slo, slow_page
from generator.builders import model_slo_rules
from generator.builders.goodput_rules import BOUND_NAME
from generator.models import OTHER
from generator.plan import ServicePlan
from generator.render import find_specs, load_plans
from generator.slo import Tier
from generator.units import decimal_str, format_duration_ms, seconds_text

COLUMNS = (
    "tier",
    "severity",
    "factor",
    "threshold",
    "budget spent",
    "fires after",
    "Workbook",
    "at 2×",
    "Workbook",
    "resets after",
    "Workbook",
)


def _ms_text(found: int | None) -> str:
    return "never" if found is None else seconds_text(Fraction(found, 1000))


def _times(tier: Tier, how: slo.Sampling) -> tuple[str, ...]:
    """Ours and the Workbook's: total outage, 2× the factor (n/a above 100 %), reset."""
    double = 2 * tier.threshold
    if double > 1:
        partial = ("n/a", "n/a")
    else:
        partial = (
            _ms_text(slo.detection_ms(tier, double, how)),
            seconds_text(tier.detection_seconds(double)),
        )
    return (
        _ms_text(slo.detection_ms(tier, Fraction(1), how)),
        seconds_text(tier.detection_seconds()),
        *partial,
        _ms_text(slo.reset_ms(tier, how)),
        seconds_text(tier.reset_seconds()),
    )


sampling = slow_page.sampling


def tier_rows(plan: ServicePlan) -> list[tuple[str, list[tuple[str, ...]]]]:
    """Per SLO a title and one row of :data:`COLUMNS` per tier."""
    out: list[tuple[str, list[tuple[str, ...]]]] = []
    how = sampling(plan)
    for s in (*plan.slos, *plan.goodput):
        sli = (
            "goodput: "
            + ", ".join(
                f"{t.histogram.indicator} ≤ {decimal_str(t.threshold_seconds)}s" for t in s.targets
            )
            + f", read from the {BOUND_NAME}"
            if s.targets
            else "availability"
            if s.histogram is None
            else f"latency ≤ {decimal_str(s.threshold_seconds or 0)}s"
        )
        title = (
            f"SLO {s.name} ({sli}): {decimal_str(s.objective)}% over {format_duration_ms(s.window_ms)}, "
            f"error budget {decimal_str(s.error_budget)}, min events {s.min_events}"
        )
        rows: list[tuple[str, ...]] = [
            (
                f"{format_duration_ms(t.long_window_ms)}/{format_duration_ms(t.short_window_ms)}",
                t.severity,
                f"{decimal_str(t.factor)}×",
                decimal_str(t.threshold),
                _budget(t),
                *_times(t, how),
            )
            for t in s.tiers
        ]
        out.append((title, rows))
    return out


def page_lines(plan: ServicePlan) -> list[str]:
    """Per SLO (in :func:`tier_rows` order) the time its fastest page needs on a total outage,
    marked when over :data:`generator.slow_page.SLOW_PAGE_MS` (the fix is in the warning)."""
    how = sampling(plan)
    out = []
    for s in (*plan.slos, *plan.goodput):
        found = slow_page.fastest_page(s, how)
        if found is None:
            out.append("  fastest page: none (no critical tier can fire on a total outage)")
            continue
        tier, ms = found
        windows = (
            f"{format_duration_ms(tier.long_window_ms)}/{format_duration_ms(tier.short_window_ms)}"
        )
        slow = (
            f" — slower than {_ms_text(slow_page.SLOW_PAGE_MS)}: see the warning"
            if ms > slow_page.SLOW_PAGE_MS
            else ""
        )
        out.append(f"  fastest page: {windows} after {_ms_text(ms)} of total outage{slow}")
    return out


def model_lines(plan: ServicePlan) -> list[str]:
    """Per SLO (in :func:`tier_rows` order) its per-model SLOs with ``spec.models``: the
    models, ``other`` and the tiers ``ErrorBudgetBurnByModel`` fires on; ``""`` without."""
    models = plan.models
    out = []
    for s in (*plan.slos, *plan.goodput):
        if models is None or s.targets:
            out.append("")
        elif not model_slo_rules.records(plan, s):
            out.append(
                f"  per model: none (its counters carry no {models.label}: service level only)"
            )
        else:
            tiers = ", ".join(
                f"{format_duration_ms(t.long_window_ms)}/{format_duration_ms(t.short_window_ms)} "
                f"{t.severity}"
                for t in s.tiers
            )
            out.append(
                f"  per model ({models.label}): {', '.join(models.names)} and {OTHER!r} (the "
                f"rest); {naming.ALERT_BURN_BY_MODEL} on {tiers or 'no tier'}"
            )
    return out


def format_plan(plan: ServicePlan) -> str:
    """The whole explanation of one service as text."""
    lines = [f"{plan.source}: service {plan.name}"]
    for (title, rows), page, per_model in zip(
        tier_rows(plan), page_lines(plan), model_lines(plan), strict=True
    ):
        lines.append("")
        lines.append(title)
        if not rows:
            lines.append("  burn-rate alerting disabled")
            lines += [per_model] if per_model else []
            continue
        widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(COLUMNS)]
        for row in (COLUMNS, *rows):
            lines.append(
                "  " + "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
            )
        lines.append(page)
        lines += [per_model] if per_model else []
    if plan.models is not None and model_slo_rules.unwatched_rules(plan):
        share = decimal_str(plan.models.max_unwatched_share * 100)
        lines += [
            "",
            f"{naming.ALERT_MODELS_UNWATCHED}: a ticket when models spec.models does not name "
            f"carry over {share}% of the requests over 1h, for "
            f"{format_duration_ms(model_slo_rules.UNWATCHED_FOR_MS)}.",
        ]
    e = format_duration_ms(plan.evaluation_interval_ms)
    s = format_duration_ms(plan.scrape_interval_ms)
    lines += [
        "",
        "threshold = factor × error budget, for both windows; budget spent = share of the SLO",
        "window's budget used when the tier fires at its factor. fires after = time from the",
        "start of a total outage (every event bad) until these rules fire; at 2× = the same for",
        "a partial outage whose bad share is twice the threshold (n/a: over 100%); resets after",
        "= time from full recovery after a long total outage until the alert resolves. Each is",
        f"at the spec's {e} evaluation and {s} scrape interval, the outage starting on a scrape",
        "that is also an evaluation (a scrape that lags the evaluation adds its lag); beside it",
        "the SRE Workbook's ideal (threshold × long window / bad share to fire, short window ×",
        "(1 − threshold) to resolve). The windows sum exact per-evaluation increments, so ours",
        "is the first evaluation after the ideal: never earlier, at most one interval later",
        "(generator.slo.detection_ms). A long window of a day or more sums hourly tiles and",
        "ends at the newest (up to an hour ago): such a tier fires at the first whole hour",
        "after that, up to an hour later (the outage here starts an evaluation past the hour:",
        "the worst case). Min events: a tier fires only once its long window has",
        "counted that many events, never extrapolating a window that holds less history (a new",
        'service, rules loaded minutes ago). See docs/spec.md, "SLO alerts".',
    ]
    return "\n".join(lines)


def _budget(tier: slo.Tier) -> str:
    """Budget share in percent (4 significant digits); notes a default tier raised to 1×."""
    spent = f"{float(tier.budget * 100):.4g}%"
    if tier.raised_from is not None:
        spent += f" (raised from {decimal_str(tier.raised_from * 100)}% to reach 1×)"
    return spent


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the explain options."""
    parser.add_argument("specs", nargs="+", help="spec files or folders")


def run(args: argparse.Namespace) -> int:
    """Print the tier table of every spec, then (stderr) a warning per SLO whose fastest page
    is slow (:mod:`generator.slow_page`); exit 2 (via ObsgenError) on a bad spec."""
    plans = load_plans(find_specs(args.specs, Path(".")), Path("."))
    print("\n\n".join(format_plan(p) for p in plans))
    for plan in plans:
        for warning in slow_page.slow_page_warnings(plan):
            print(warning, file=sys.stderr)
    return 0
