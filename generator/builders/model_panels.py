"""The ``Models`` row of a service dashboard with ``spec.models``: per SLO each model's SLI and
error ratio (the named models and the ``other`` rollup), each model's share of requests, and
the rollup's share against ``maxUnwatchedShare``; all read the records of
:mod:`generator.builders.model_slo_rules`. No row without ``spec.models``.
"""

from __future__ import annotations

from fractions import Fraction

from generator import naming
from generator.builders import model_slo_rules
from generator.models import OTHER
from generator.parts.grafana_json import PanelDef, Query, RowDef, Step
from generator.parts.panel_parts import GREEN, RED, SEVERITY_COLOR, legend, panel_runbook, rec
from generator.plan import ServicePlan, SLOPlan
from generator.promql import Matcher
from generator.units import decimal_str


def _slo(s: SLOPlan) -> Matcher:
    return Matcher(naming.SLO, "=", s.name)


def _fastest(s: SLOPlan) -> tuple[int, float, str]:
    """The fastest tier's long window (ms), threshold (0–1) and severity; the SLO window and its
    error budget when burn alerting is off."""
    if not s.tiers:
        return s.window_ms, float(s.error_budget), "critical"
    t = min(s.tiers, key=lambda t: t.long_window_ms)
    return t.long_window_ms, float(t.threshold), t.severity


def share_query(plan: ServicePlan, s: SLOPlan) -> str:
    """Each model's share (0–1) of the requests of each ``$__rate_interval``, ``other``
    included: the ``events="total"`` increments of SLO ``s`` per model over their sum."""
    label = plan.models.label if plan.models else ""
    total = rec(
        plan,
        model_slo_rules.events_record(plan),
        _slo(s),
        Matcher(naming.EVENTS, "=", naming.EVENTS_TOTAL),
    )
    window = f"sum_over_time({total}[$__rate_interval])"
    per_model = f"sum without ({naming.EVENTS}) ({window})"
    whole = f"sum without ({naming.EVENTS}, {label}) ({window})"
    return f"{per_model}\n/ ignoring ({label}) group_left ()\n({whole} > 0)"


def _slo_panels(plan: ServicePlan, s: SLOPlan, label: str) -> list[PanelDef]:
    """The SLI over the SLO window (stat) and the error ratio over the fastest tier's long
    window (time series), one series per named model and ``other``."""
    objective = float(Fraction(str(s.objective)) / 100)
    w = naming.window(s.window_ms)
    runbook = panel_runbook(plan, naming.ALERT_BURN_BY_MODEL)
    sli = naming.record(plan.group_by, model_slo_rules.SLI, naming.ratio_rate(s.window_ms))
    long_ms, threshold, severity = _fastest(s)
    error = model_slo_rules.error_record(plan, long_ms)
    lw = naming.window(long_ms)
    return [
        PanelDef(
            title=f"SLO {s.name} by model: SLI over {w} (objective {decimal_str(s.objective)}%)",
            key=f"models/{s.name}/sli",
            description=f"Per model ({label}; {OTHER!r}: every model spec.models does not "
            f"name): share of good events of SLO {s.name} over {w}, from {sli}. Green at or "
            "above the objective.",
            kind="stat",
            queries=(Query(rec(plan, sli, _slo(s)), legend(plan, f"{{{{{label}}}}}")),),
            unit="percentunit",
            decimals=3,
            steps=(Step(None, RED), Step(objective, GREEN)),
            runbook=runbook,
            width=12,
        ),
        PanelDef(
            title=f"SLO {s.name} by model: error ratio ({lw})",
            key=f"models/{s.name}/error-ratio",
            description=f"Per model ({label}, {OTHER!r} the rollup): bad share (0–1) of SLO "
            f"{s.name}'s events over {lw}, from {error}. The line is the fastest tier's "
            f"threshold; {naming.ALERT_BURN_BY_MODEL} fires for a model when both windows of a "
            "tier exceed it.",
            kind="timeseries",
            queries=(Query(rec(plan, error, _slo(s)), legend(plan, f"{{{{{label}}}}}")),),
            unit="percentunit",
            min_value=0,
            steps=(Step(None, GREEN), Step(threshold, SEVERITY_COLOR.get(severity, RED))),
            runbook=runbook,
            width=12,
        ),
    ]


def models_row(plan: ServicePlan) -> RowDef:
    """The ``Models`` row (module docstring); empty without ``spec.models`` or where no SLO's
    series carry the model label (no per-model records)."""
    models = plan.models
    if models is None:
        return RowDef("Models", ())
    broken = [s for s in plan.slos if model_slo_rules.events_expr(plan, s) is not None]
    panels: list[PanelDef] = []
    for s in broken:
        panels += _slo_panels(plan, s, models.label)
    if broken:
        s = broken[0]
        panels.append(
            PanelDef(
                title="Share of requests by model",
                key="models/request-share",
                description=f"Per model ({models.label}, {OTHER!r} the rollup of every model "
                "spec.models does not name): share (0–1) of the service's requests in each "
                f"interval, counted as SLO {s.name}'s events "
                f'({model_slo_rules.events_record(plan)}, events="total").',
                kind="timeseries",
                queries=(Query(share_query(plan, s), legend(plan, f"{{{{{models.label}}}}}")),),
                unit="percentunit",
                min_value=0,
                max_value=1,
                runbook=panel_runbook(plan, naming.ALERT_MODELS_UNWATCHED),
                width=12,
            )
        )
    if model_slo_rules.unwatched_rules(plan):
        limit = models.max_unwatched_share
        record = model_slo_rules.unwatched_record(plan)
        panels.append(
            PanelDef(
                title=f"Unwatched share of requests (limit {decimal_str(limit * 100)}%)",
                key="models/unwatched-share",
                description=f"Share (0–1) of the service's requests over 1h served by models "
                f"spec.models does not name ({record}). {naming.ALERT_MODELS_UNWATCHED} tickets "
                f"while it stays above the line (maxUnwatchedShare) for "
                f"{naming.window(model_slo_rules.UNWATCHED_FOR_MS)} with at least "
                f"{model_slo_rules.UNWATCHED_MIN_REQUESTS} requests in the hour.",
                kind="timeseries",
                queries=(Query(rec(plan, record), legend(plan, OTHER)),),
                unit="percentunit",
                min_value=0,
                max_value=1,
                steps=(Step(None, GREEN), Step(limit, SEVERITY_COLOR["warning"])),
                runbook=panel_runbook(plan, naming.ALERT_MODELS_UNWATCHED),
                width=12,
            )
        )
    return RowDef("Models", tuple(panels))
