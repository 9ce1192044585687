"""Dashboard panels of the goodput SLOs (:mod:`generator.builders.goodput_rules`), drawn in
the SLO row: the lower bound (union bound) over the SLO window against the objective, and
each target's violation share over the fastest tier's long window."""

from __future__ import annotations

from fractions import Fraction

from generator import naming
from generator.builders import goodput_rules
from generator.parts.grafana_json import PanelDef, Query, Step
from generator.parts.panel_parts import GREEN, RED, legend, panel_runbook, rec
from generator.plan import ServicePlan
from generator.promql import Matcher
from generator.units import decimal_str


def goodput_panels(plan: ServicePlan) -> list[PanelDef]:
    """Two panels per goodput SLO: the bound (stat) and the per-target shares (timeseries)."""
    panels: list[PanelDef] = []
    for s in plan.goodput:
        slo = Matcher(naming.SLO, "=", s.name)
        w = naming.window(s.window_ms)
        objective = float(Fraction(str(s.objective)) / 100)
        lower = goodput_rules.lower_bound_record(plan, s.window_ms)
        panels.append(
            PanelDef(
                title=f"Goodput {s.name}: lower bound over {w} (objective {decimal_str(s.objective)}%)",
                key=f"slo/{s.name}/goodput",
                description="Lower bound (union bound) of the share of requests meeting every "
                "target: 1 − the sum of each target's share over it, each from its own "
                f"histogram ({lower}). The true goodput is at least this. Green at or above "
                "the objective.",
                kind="stat",
                queries=(Query(rec(plan, lower, slo), legend(plan, s.name)),),
                unit="percentunit",
                decimals=3,
                steps=(Step(None, RED), Step(objective, GREEN)),
                runbook=panel_runbook(plan, naming.ALERT_GOODPUT_BURN),
                width=6,
            )
        )
        fastest = min((t.long_window_ms for t in s.tiers), default=3_600_000)
        shares = goodput_rules.violations_record(plan, fastest)
        panels.append(
            PanelDef(
                title=f"Goodput {s.name}: share over each target ({naming.window(fastest)})",
                key=f"slo/{s.name}/goodput-shares",
                description="Per target (label indicator): share (0–1) of requests over its "
                f"threshold in the last {naming.window(fastest)}, from {shares}; their sum "
                f"bounds the bad share ({goodput_rules.bound_record(plan, fastest)}).",
                kind="timeseries",
                queries=(
                    Query(
                        rec(plan, shares, slo),
                        legend(plan, "{{" + naming.INDICATOR + "}}"),
                    ),
                    Query(
                        rec(plan, goodput_rules.bound_record(plan, fastest), slo),
                        legend(plan, "sum (bound)"),
                    ),
                ),
                unit="percentunit",
                min_value=0,
                runbook=panel_runbook(plan, naming.ALERT_GOODPUT_BURN),
                width=18,
            )
        )
    return panels
