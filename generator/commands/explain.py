"""``obsgen explain SPEC``: the burn-rate tier table of a spec, the SRE Workbook math made visible.

Per SLO and tier it prints the windows, the burn-rate factor, the error-ratio threshold both
windows must exceed, the share of the SLO window's budget spent when the tier fires at exactly
its factor, the time a total outage (100 % bad events) takes to fire our rules (and the
Workbook's ideal figure beside it), and the time the alert takes to resolve after full
recovery. Formulas: :mod:`generator.slo` (SRE Workbook ch. 5).
"""

from __future__ import annotations

import argparse
from fractions import Fraction
from pathlib import Path

from generator import slo
from generator.plan import ServicePlan
from generator.render import find_specs, load_plans
from generator.slo import Tier
from generator.units import decimal_str, format_duration_ms

COLUMNS = (
    "tier",
    "severity",
    "factor",
    "threshold",
    "budget spent",
    "fires after",
    "Workbook",
    "resets after",
)


def seconds_text(seconds: Fraction) -> str:
    """A duration for people: ``51.84s``, ``8m38.4s``, ``1h``, with at most 2 decimals."""
    total = round(float(seconds), 2)
    whole = int(total)
    rest = round(total - whole, 2)
    text = format_duration_ms(whole * 1000) if whole else ""
    if rest:
        if text.endswith("s") and not text.endswith("ms"):
            head, _, secs = text.rpartition("m") if "m" in text else ("", "", text)
            secs_value = float(secs.rstrip("s")) + rest
            text = (f"{head}m" if head else "") + f"{decimal_str(secs_value)}s"
        else:
            text += f"{decimal_str(rest)}s"
    return text or "0s"


def _fires_after(tier: Tier) -> str:
    found = slo.recorded_detection_ms(tier)
    return "never" if found is None else seconds_text(Fraction(found, 1000))


def tier_rows(plan: ServicePlan) -> list[tuple[str, list[tuple[str, ...]]]]:
    """Per SLO a title and one row of :data:`COLUMNS` per tier."""
    out: list[tuple[str, list[tuple[str, ...]]]] = []
    for s in plan.slos:
        sli = (
            "availability"
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
                _fires_after(t),
                seconds_text(t.detection_seconds()),
                seconds_text(t.reset_seconds()),
            )
            for t in s.tiers
        ]
        out.append((title, rows))
    return out


def format_plan(plan: ServicePlan) -> str:
    """The whole explanation of one service as text."""
    lines = [f"{plan.source}: service {plan.name}"]
    for title, rows in tier_rows(plan):
        lines.append("")
        lines.append(title)
        if not rows:
            lines.append("  burn-rate alerting disabled")
            continue
        widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(COLUMNS)]
        for row in (COLUMNS, *rows):
            lines.append(
                "  " + "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
            )
    lines += [
        "",
        "threshold = factor × error budget, for both windows; budget spent = share of the SLO",
        "window's budget used when the tier fires at its factor; fires after = time from the start",
        "of a total outage until these rules fire, evaluated every 1m (the recorded 5m rates ramp",
        "up over 5 minutes and the long window sums them: generator.slo.recorded_detection_ms);",
        "Workbook = the ideal instant figure, threshold × long window; resets after = time after",
        "full recovery until the short window clears. Min events: a tier fires only once its",
        "long window has recorded that many events, counted from the recorded rates without",
        "extrapolating a window that holds less history (a new service, rules loaded minutes",
        "ago); under Prometheus 2 the count is 5m/(5m + evaluation interval) of the events",
        '(83% at 1m). See docs/spec.md, "SLO alerts".',
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
    """Print the tier table of every spec; exit 2 (via ObsgenError) on a bad spec."""
    plans = load_plans(find_specs(args.specs, Path(".")), Path("."))
    print("\n\n".join(format_plan(p) for p in plans))
    return 0
