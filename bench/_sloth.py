"""Sloth's ``prometheus/v1`` SLO specs written from obsgen's plans, and its generated rules.

Each obsgen SLO becomes one Sloth SLO with the same objective and the same events, on obsgen's
selectors (``failures_sum`` / ``requests_sum`` of generator.signals.requests; for latency
the histogram's ``_count`` minus its threshold bucket), each counter summed as ``sum by
(<obsgen's aggregation labels>) (rate(<selector>[{{.window}}]))``, the form Sloth's docs use.
The SLO period is Sloth's default (30d) and must equal obsgen's window; page and ticket alerts
carry ``severity: critical`` / ``warning`` as obsgen's tiers do. Sloth's rule groups per SLO
are named ``sloth-slo-<kind>-<service>-<slo>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from generator.plan import ServicePlan, SLOPlan
from generator.promql import by, le_matcher, sum_rate_any
from generator.signals.requests import failures_sum, requests_sum

ALERT = "SlothErrorBudgetBurn"
"""The alert name of every Sloth SLO here (page and ticket: told apart by ``severity``)."""
WINDOW = "{{.window}}"
PERIOD_MS = 30 * 86_400_000  # Sloth's default SLO period
GROUP_KINDS = ("sli-recordings", "meta-recordings", "alerts")
"""Sloth's three groups per SLO: SLI error ratios per window, metadata, the two alerts."""


def queries(plan: ServicePlan, s: SLOPlan) -> tuple[str, str]:
    """``(error_query, total_query)`` of ``s`` for Sloth, on obsgen's selectors.

    Raises:
        ValueError: an SLO Sloth's events SLI cannot state the same way (native histogram,
            no threshold bucket) or a window other than Sloth's period.
    """
    if s.window_ms != PERIOD_MS:
        raise ValueError(f"{plan.name}/{s.name}: window {s.window_ms} ms, Sloth's period is 30d")
    group = plan.agg_labels

    def rate(series: str) -> str:
        return f"sum{by(group)} (rate({series}[{WINDOW}]))"

    if s.histogram is None:
        # The failures alone, as a Sloth user writes them: obsgen's errors_sum adds
        # `or 0 * <requests>` (a 0 ratio before the first failure), one more read of the
        # request counters per window that Sloth specs do not carry.
        return failures_sum(plan, rate), requests_sum(plan, rate)
    h = s.histogram
    if h.native or s.threshold_bound is None:
        raise ValueError(f"{plan.name}/{s.name}: not a classic histogram with a threshold bucket")
    total = sum_rate_any([n + "_count" for n in h.names], h.matchers, WINDOW, group)
    le = le_matcher(s.threshold_bound, plan.le_version)
    good = sum_rate_any([n + "_bucket" for n in h.names], (*h.matchers, le), WINDOW, group)
    return f"({total}) - ({good})", total


def spec(plan: ServicePlan) -> dict[str, Any]:
    """The Sloth ``prometheus/v1`` spec of every SLO of ``plan``."""
    slos = []
    for s in plan.slos:
        error, total = queries(plan, s)
        slos.append(
            {
                "name": s.name,
                "objective": float(s.objective),
                "description": f"{s.name} of {plan.name}, as obsgen's spec states it",
                "sli": {"events": {"error_query": error, "total_query": total}},
                "alerting": {
                    "name": ALERT,
                    "page_alert": {"labels": {"severity": "critical"}},
                    "ticket_alert": {"labels": {"severity": "warning"}},
                },
            }
        )
    return {"version": "prometheus/v1", "service": plan.name, "slos": slos}


def write_specs(plans: list[ServicePlan], folder: Path) -> list[Path]:
    """One ``<service>.yaml`` Sloth spec per plan in ``folder`` (created); their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for plan in plans:
        path = folder / f"{plan.name}.yaml"
        path.write_text(yaml.safe_dump(spec(plan), sort_keys=False, width=1_000_000))
        paths.append(path)
    return paths


def group_name(kind: str, service: str, slo: str) -> str:
    """Sloth's name for one of an SLO's groups (``kind``: one of :data:`GROUP_KINDS`)."""
    return f"sloth-slo-{kind}-{service}-{slo}"


def generate_command(sloth: str, specs: Path, out: Path) -> list[str]:
    """``sloth generate`` over a folder of specs into a folder (one rules file per spec)."""
    return [sloth, "generate", "--input", str(specs), "--out", str(out)]
