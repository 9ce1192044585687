"""The panels of a service dashboard, row by row, as :class:`PanelDef` data.

Every panel reads a recording rule from the rules builder where one exists, so a panel shows
the very number its alert compares (``service:model_request_errors:ratio_rate5m`` for
``ModelErrorRatioHigh``); raw series are read only where no rule exists (heatmap buckets,
tokens, GPU gauges), always with ``rate(…[$__rate_interval])`` on a panel whose minimum
interval is 4 × ``spec.prometheus.scrapeInterval`` (:func:`rate_floor`). Thresholds drawn are the alert thresholds of the plan. Rows a server cannot fill (no histogram, no KV cache, no GPU
exporter) are left out rather than shown empty.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from generator import naming
from generator.builders.efficiency_panels import efficiency_row
from generator.builders.goodput_panels import goodput_panels
from generator.builders.model_panels import models_row
from generator.builders.slo_rules import error_ratio_record, exhaustion_record
from generator.families import FAMILIES, gpu, latency_p99
from generator.families.gpu import GPU_BY, GPU_LEGEND
from generator.parts.common import identity_matchers
from generator.parts.grafana_json import PanelDef, Query, RowDef, Step
from generator.parts.panel_parts import (
    GREEN,
    ORANGE,
    RED,
    SEVERITY_COLOR,
    YELLOW,
    as_ratio,
    cluster_filter,
    kept_by,
    legend,
    model_filter,
    named,
    panel_runbook,
    pod_filter,
    rec,
    scope,
)
from generator.parts.pods import owned, replica_metrics
from generator.plan import SIGNAL_MISSING_MIN_SCRAPES, HistogramPlan, ServicePlan
from generator.promql import Matcher, selector
from generator.units import decimal_str, format_duration_ms

RATE = "$__rate_interval"
# Grafana unit ids for a histogram's own unit (seconds_per_unit → unit).
_TIME_UNITS = {1.0: "s", 0.001: "ms", 1e-6: "µs"}


def _total(plan: ServicePlan, op: str, expr: str) -> str:
    """``op(expr)`` over everything the variables select, one per cluster with a cluster label."""
    grouping = kept_by(plan)
    return f"{op}{grouping} ({expr})" if grouping else f"{op}({expr})"


def _exhaustion(plan: ServicePlan, fastest_ms: int, slo: Matcher) -> str:
    """The budget's time to exhaustion (seconds), +Inf where the SLO's budget-left record
    exists but nothing burns (the record has no value then: it divides by the burn rate)."""
    left = rec(plan, naming.record(plan.group_by, naming.SLO_BUDGET_REMAINING, "ratio"), slo)
    on = ", ".join(plan.keeping("namespace", naming.SERVICE, naming.SLO, *plan.group_by))
    return f"{rec(plan, exhaustion_record(plan, fastest_ms), slo)} or on ({on}) ({left} * 0 + Inf)"


def _raw(metric: str, matchers: tuple[Matcher, ...], plan: ServicePlan, pod: bool = False) -> str:
    return selector(
        metric, (*matchers, *scope(plan), *model_filter(plan), *((pod_filter(),) if pod else ()))
    )


def _family_panels(plan: ServicePlan, row: str) -> list[PanelDef]:
    """The panels of the alert families (:data:`generator.families.FAMILIES`) in ``row``, by rank."""
    return [
        p for f in sorted(FAMILIES, key=lambda f: f.rank) if f.row == row for p in f.panels(plan)
    ]


# --- SLO ---------------------------------------------------------------------------------


def slo_row(plan: ServicePlan) -> RowDef:
    """Per SLO: SLI over the window vs objective, budget remaining, burn rate per tier;
    then the firing alerts of the service."""
    g = plan.group_by
    panels: list[PanelDef] = []
    for s in plan.slos:
        slo = Matcher(naming.SLO, "=", s.name)
        w = naming.window(s.window_ms)
        objective = as_ratio(Fraction(str(s.objective)) / 100)
        what = (
            f"requests answered within {decimal_str(s.threshold_seconds or 0)}s"
            if s.kind == "latency"
            else "requests that did not fail"
        )
        panels.append(
            PanelDef(
                title=f"SLO {s.name}: SLI over {w} (objective {decimal_str(s.objective)}%)",
                key=f"slo/{s.name}/sli",
                description=f"Share of {what} over the last {w}, from the recording rule "
                f"{naming.record(g, naming.SLO_SLI, f'ratio_rate{w}')} (traffic-weighted sums of 5m rates). "
                f"Green at or above the objective {decimal_str(s.objective)}%.",
                kind="stat",
                queries=(
                    Query(
                        rec(plan, naming.record(g, naming.SLO_SLI, f"ratio_rate{w}"), slo),
                        legend(plan, s.name),
                    ),
                ),
                unit="percentunit",
                decimals=3,
                steps=(Step(None, RED), Step(objective, GREEN)),
                runbook=panel_runbook(plan, naming.ALERT_ERROR_BUDGET_BURN),
                width=6,
            )
        )
        levels = sorted(s.budget_levels)
        tickets = (
            f" {naming.ALERT_ERROR_BUDGET_LOW} tickets below "
            + ", ".join(f"{decimal_str(x * 100)}%" for x in s.budget_levels)
            + " (the colour steps)."
            if levels
            else ""
        )
        panels.append(
            PanelDef(
                title=f"SLO {s.name}: error budget remaining ({w})",
                key=f"slo/{s.name}/budget",
                description="Share (0–1) of the error budget left in the SLO window: "
                f"1 − error ratio / {decimal_str(s.error_budget)}, from "
                f"{naming.record(g, naming.SLO_BUDGET_REMAINING, 'ratio')}. Below 0 the budget "
                f"is spent.{tickets}",
                kind="stat",
                queries=(
                    Query(
                        rec(plan, naming.record(g, naming.SLO_BUDGET_REMAINING, "ratio"), slo),
                        legend(plan, s.name),
                    ),
                ),
                unit="percentunit",
                decimals=1,
                steps=_budget_steps(levels),
                runbook=panel_runbook(
                    plan,
                    naming.ALERT_ERROR_BUDGET_LOW if levels else naming.ALERT_ERROR_BUDGET_BURN,
                ),
                width=3 if s.tiers else 6,
            )
        )
        if s.tiers:
            fastest = min(t.long_window_ms for t in s.tiers)
            panels.append(
                PanelDef(
                    title=f"SLO {s.name}: budget left lasts",
                    key=f"slo/{s.name}/exhaustion",
                    description="Time until the error budget left is spent at the burn rate of "
                    f"the last {naming.window(fastest)}: budget left × {w} / burn rate, from "
                    f"{exhaustion_record(plan, fastest)}. ∞ while nothing burns.",
                    kind="stat",
                    queries=(Query(_exhaustion(plan, fastest, slo), legend(plan, s.name)),),
                    unit="s",
                    decimals=0,
                    steps=(Step(None, RED), Step(s.window_ms / 1000, GREEN)),
                    runbook=panel_runbook(
                        plan,
                        naming.ALERT_ERROR_BUDGET_LOW if levels else naming.ALERT_ERROR_BUDGET_BURN,
                    ),
                    width=3,
                )
            )
        if s.tiers:
            budget = decimal_str(s.error_budget)
            queries = []
            steps = [Step(None, GREEN)]
            for tier in sorted(s.tiers, key=lambda t: t.long_window_ms):
                long_w = naming.window(tier.long_window_ms)
                short_w = naming.window(tier.short_window_ms)
                queries.append(
                    Query(
                        f"{rec(plan, error_ratio_record(plan, tier.long_window_ms), slo)} / {budget}",
                        f"{long_w}/{short_w} tier: {long_w} burn rate ({tier.severity} at {decimal_str(tier.factor)}×)",
                    )
                )
            for tier in sorted(s.tiers, key=lambda t: t.factor):
                steps.append(Step(float(tier.factor), SEVERITY_COLOR.get(tier.severity, RED)))
            panels.append(
                PanelDef(
                    title=f"SLO {s.name}: burn rate per tier",
                    key=f"slo/{s.name}/burn-rate",
                    description="Error ratio over each tier's long window divided by the error "
                    f"budget {budget} (1× spends the budget exactly over {w}), from "
                    f"{naming.record(g, naming.SLI_ERROR, 'ratio_rate<window>')}. Threshold lines are the tier "
                    "factors; ErrorBudgetBurn fires when both the long and the short window exceed "
                    "their tier's factor.",
                    kind="timeseries",
                    queries=tuple(queries),
                    unit="suffix:×",
                    decimals=2,
                    min_value=0,
                    steps=tuple(_dedupe(steps)),
                    runbook=panel_runbook(plan, naming.ALERT_ERROR_BUDGET_BURN),
                    width=12,
                )
            )
    panels += goodput_panels(plan)
    alerts = selector(
        naming.ALERTS_SERIES,
        (
            Matcher("alertstate", "=", "firing"),
            *identity_matchers(plan),
            *cluster_filter(plan),
        ),
    )
    shown: tuple[str, ...] = (
        "alertname",
        "severity",
        "slo",
        "indicator",
        "signal",
        "metric",
        "pod",
        "uuid",
    )
    shown += (plan.cluster_label,) if plan.cluster_label else ()
    panels.append(
        PanelDef(
            title="Firing alerts",
            key="firing-alerts",
            description=f"Alerts of service {plan.name} firing now, from the ALERTS series "
            "Prometheus writes for every active alert.",
            kind="table",
            queries=(
                Query(
                    f"sum by ({', '.join(shown)}) ({alerts})",
                    instant=True,
                ),
            ),
            unit="none",
            runbook=panel_runbook(plan, naming.ALERT_TARGET_DOWN),
            width=24 if len(panels) % 3 == 0 else 12,
            height=6,
        )
    )
    return RowDef("SLO", tuple(panels))


def _budget_steps(levels: list[float]) -> tuple[Step, ...]:
    """Colour steps of an SLO's budget-left panel (share 0–1): red once spent (below 0), orange
    below the lowest ``ErrorBudgetLow`` level, yellow between levels, green above the highest;
    without levels, green from 25 % left. ``levels`` ascending."""
    if not levels:
        return (Step(None, RED), Step(0, ORANGE), Step(0.25, GREEN))
    return tuple(
        _dedupe(
            [Step(None, RED), Step(0, ORANGE)]
            + [Step(x, YELLOW) for x in levels[:-1]]
            + [Step(levels[-1], GREEN)]
        )
    )


def _dedupe(steps: list[Step]) -> list[Step]:
    seen: dict[float | None, Step] = {}
    for step in steps:
        if step.value not in seen or step.color == RED:
            seen[step.value] = step
    return list(seen.values())


# --- Traffic & errors --------------------------------------------------------------------


def traffic_row(plan: ServicePlan) -> RowDef:
    """Requests/s by outcome, error ratio against the alert threshold, targets up."""
    g = plan.group_by
    requests = rec(plan, naming.record(g, naming.REQUESTS, "rate5m"))
    errors = rec(plan, naming.record(g, naming.REQUEST_ERRORS, "rate5m"))
    queries = [
        Query(f"{requests} - {errors}", legend(plan, "ok")),
        Query(errors, legend(plan, "failed")),
    ]
    req = plan.requests
    if req.failure_name is None and req.error_matchers:
        labels = sorted({m.label for m in req.error_matchers})
        queries.append(
            Query(
                f"sum{kept_by(plan, *labels)} (rate({_raw(req.name, req.matchers, plan)}[{RATE}]))",
                named(plan, " ".join(f"{label}={{{{{label}}}}}" for label in labels)),
            )
        )
    panels = [
        PanelDef(
            title="Requests/s by outcome",
            key="requests",
            description=f"Finished requests per second, ok and failed, from "
            f"{naming.record(g, naming.REQUESTS, 'rate5m')} and {naming.record(g, naming.REQUEST_ERRORS, 'rate5m')}"
            + (
                f"; the breakdown reads {req.name} directly."
                if len(queries) > 2
                else f" (counters {req.name} and {req.failure_name})."
            ),
            kind="timeseries",
            queries=tuple(queries),
            unit="reqps",
            runbook=panel_runbook(plan, naming.ALERT_ERROR_RATIO),
            width=10,
        )
    ]
    panels += _family_panels(plan, "traffic")
    up = selector("up", (*plan.matchers, *scope(plan)))
    desired, available, label = replica_metrics(plan)
    workload = (*scope(plan), Matcher(label, "=", plan.deployment_name))
    panels.append(
        PanelDef(
            title="Scrape targets up",
            key="targets-up",
            description=f"Scrape targets of the service that are up (the up series for "
            f"{', '.join(m.render() for m in plan.matchers)}), and the replicas of "
            f"{plan.workload_kind}/{plan.deployment_name} kube-state-metrics reports available "
            f"({available}) and desired ({desired}); green at {plan.replicas} replicas.",
            kind="stat",
            queries=(
                Query(_total(plan, "sum", up), named(plan, "up")),
                Query(_total(plan, "sum", selector(available, workload)), named(plan, "available")),
                Query(_total(plan, "sum", selector(desired, workload)), named(plan, "desired")),
            ),
            unit="none",
            steps=(Step(None, RED), Step(plan.replicas, GREEN)),
            runbook=panel_runbook(
                plan,
                naming.ALERT_REPLICAS_UNAVAILABLE
                if "replicas_unavailable" in plan.alerts
                else naming.ALERT_TARGET_DOWN,
            ),
            width=4,
        )
    )
    return RowDef("Traffic & errors", tuple(panels))


# --- Latency -----------------------------------------------------------------------------

_INDICATOR_TITLE = {"e2e": "End-to-end", "ttft": "Time to first token", "itl": "Inter-token"}
_INDICATOR_ORDER = {
    "requestDuration": 0,
    "timeToFirstToken": 1,
    "interTokenLatency": 2,
    "timePerOutputToken": 3,
    "requestQueueTime": 4,
}


def _heatmap_expr(plan: ServicePlan, h: HistogramPlan) -> str:
    if h.native:
        return f"sum(rate({_raw(h.metric, h.matchers, plan)}[{RATE}]))"
    return f"sum by (le) (rate({_raw(h.metric + '_bucket', h.matchers, plan)}[{RATE}]))"


def latency_row(plan: ServicePlan) -> RowDef:
    """Per histogram: p50/p90/p99 with SLO and ``latencyP99`` thresholds, a heatmap; then the
    slow-request ratio against its alert threshold."""
    g = plan.group_by
    panels: list[PanelDef] = []
    p99_alert = plan.alerts.get("latency_p99")
    for key in sorted(plan.histograms, key=lambda k: _INDICATOR_ORDER.get(k, 9)):
        h = plan.histograms[key]
        name = _INDICATOR_TITLE.get(h.indicator, h.indicator)
        steps = [Step(None, GREEN)]
        notes = []
        for s in plan.slos:
            if s.histogram is not None and s.histogram.key == key and s.threshold_seconds:
                steps.append(Step(s.threshold_seconds, ORANGE))
                notes.append(f"SLO {s.name} threshold {decimal_str(s.threshold_seconds)}s")
        if p99_alert is not None and latency_p99.params(p99_alert).indicator == key:
            threshold = latency_p99.params(p99_alert).threshold_seconds
            steps.append(Step(threshold, SEVERITY_COLOR[p99_alert.severity]))
            notes.append(f"{naming.ALERT_LATENCY_P99} threshold {decimal_str(threshold)}s")
        record = naming.record(g, naming.LATENCY, "quantile_rate5m")
        queries = tuple(
            Query(
                rec(
                    plan,
                    record,
                    Matcher(naming.INDICATOR, "=", h.indicator),
                    Matcher(naming.QUANTILE, "=", q),
                ),
                legend(plan, f"p{q[2:].ljust(2, '0')}"),
            )
            for q in ("0.5", "0.9", "0.99")
        )
        panels.append(
            PanelDef(
                title=f"{name} latency p50 / p90 / p99",
                key=f"latency/{h.indicator}/quantiles",
                description=f'Quantiles of {h.metric} over 5m in seconds, from {record}{{indicator="{h.indicator}"}}. '
                + (
                    "Lines: " + "; ".join(notes) + "."
                    if notes
                    else "No alert or SLO threshold on this indicator."
                ),
                kind="timeseries",
                queries=queries,
                unit="s",
                min_value=0,
                steps=tuple(_dedupe([steps[0], *sorted(steps[1:], key=lambda s: s.value or 0)])),
                runbook=panel_runbook(plan, naming.ALERT_LATENCY_P99),
                width=12,
            )
        )
        panels.append(
            PanelDef(
                title=f"{name} latency distribution",
                key=f"latency/{h.indicator}/heatmap",
                description=f"Requests per second in each latency bucket of {h.metric}"
                + ("" if h.native else "_bucket")
                + ", rate over $__rate_interval (buckets are cumulative counters: rate first, then sum by le).",
                kind="heatmap",
                queries=(Query(_heatmap_expr(plan, h), "{{le}}", fmt="heatmap"),),
                unit=_TIME_UNITS.get(h.seconds_per_unit, "s"),
                runbook=panel_runbook(plan, naming.ALERT_SLOW_REQUESTS),
                width=12,
            )
        )
    panels += _family_panels(plan, "latency")
    return RowDef("Latency", tuple(panels))


# --- Throughput & saturation -------------------------------------------------------------


def saturation_row(plan: ServicePlan) -> RowDef:
    """Tokens/s, running vs waiting requests, KV-cache usage, queue depth."""
    g = plan.group_by
    panels: list[PanelDef] = []
    tokens = [
        (label, counter)
        for label, counter in (
            ("prompt", plan.prompt_tokens),
            ("generation", plan.generation_tokens),
        )
        if counter is not None
    ]
    if tokens:
        panels.append(
            PanelDef(
                title="Tokens/s",
                key="tokens",
                description="Tokens processed per second, rate over $__rate_interval of "
                + " and ".join(c.name for _, c in tokens)
                + ".",
                kind="timeseries",
                queries=tuple(
                    Query(
                        _total(plan, "sum", f"rate({_raw(c.name, c.matchers, plan)}[{RATE}])"),
                        named(plan, label),
                    )
                    for label, c in tokens
                ),
                unit="suffix: tok/s",
                min_value=0,
                runbook=panel_runbook(plan, naming.ALERT_LATENCY_P99),
                width=12,
            )
        )
    running_queries = []
    if plan.running_requests is not None:
        running_queries.append(
            Query(
                rec(plan, naming.record(g, naming.RUNNING_REQUESTS, "sum")),
                legend(plan, "running"),
            )
        )
    if plan.queue_depth is not None:
        running_queries.append(
            Query(rec(plan, naming.record(g, naming.QUEUE_DEPTH, "sum")), legend(plan, "waiting"))
        )
    if running_queries:
        names = [gp.name for gp in (plan.running_requests, plan.queue_depth) if gp is not None]
        panels.append(
            PanelDef(
                title="Running vs waiting requests",
                key="running-waiting",
                description="Requests being served and requests queued, summed over pods, from "
                f"{naming.record(g, naming.RUNNING_REQUESTS, 'sum')} / {naming.record(g, naming.QUEUE_DEPTH, 'sum')} "
                f"(gauges {' and '.join(names)}).",
                kind="timeseries",
                queries=tuple(running_queries),
                unit="short",
                min_value=0,
                runbook=panel_runbook(plan, naming.ALERT_QUEUE_DEPTH),
                width=12,
            )
        )
    panels += _family_panels(plan, "saturation")
    return RowDef("Throughput & saturation", tuple(panels))


# --- Memory ------------------------------------------------------------------------------


def memory_row(plan: ServicePlan) -> RowDef:
    """Working set vs limit per pod, headroom against the alert, OOM kills and restarts, and
    CPU use and throttling (the reference dashboards show CPU; a throttled pod is slow)."""

    cpu, throttled, periods = (
        selector(metric, (*plan.container_matchers, *scope(plan), pod_filter()))
        for metric in (
            naming.CADVISOR_CPU,
            naming.CADVISOR_CFS_THROTTLED,
            naming.CADVISOR_CFS_PERIODS,
        )
    )

    def rate_by_pod(series: str) -> str:
        return f"sum{kept_by(plan, 'pod')} {owned(plan, f'rate({series}[{RATE}])', *cluster_filter(plan))}"

    return RowDef(
        "Memory",
        (
            *_family_panels(plan, "memory"),
            PanelDef(
                title="CPU per pod",
                key="cpu",
                description=f"CPU cores used per pod (rate of {naming.CADVISOR_CPU}) and the share "
                f"of CFS periods in which the container was throttled ({naming.CADVISOR_CFS_THROTTLED} / "
                f"{naming.CADVISOR_CFS_PERIODS}, right axis): a throttled server tokenises and schedules late.",
                kind="timeseries",
                queries=(
                    Query(rate_by_pod(cpu), named(plan, "{{pod}} cores")),
                    Query(
                        f"{rate_by_pod(throttled)} / ({rate_by_pod(periods)} > 0)",
                        named(plan, "{{pod}} throttled share"),
                    ),
                ),
                unit="short",
                min_value=0,
                runbook=panel_runbook(plan, naming.ALERT_LATENCY_P99),
                width=24,
                height=7,
                overrides=(
                    {
                        "matcher": {"id": "byRegexp", "options": ".*throttled share"},
                        "properties": [
                            {"id": "unit", "value": "percentunit"},
                            {"id": "custom.axisPlacement", "value": "right"},
                            {"id": "max", "value": 1},
                        ],
                    },
                ),
            ),
        ),
    )


def rate_floor(plan: ServicePlan, row: RowDef) -> RowDef:
    """``row`` with a minimum interval of 4 × ``spec.prometheus.scrapeInterval`` on every
    panel that reads ``$__rate_interval``. Grafana makes that ``max($__interval + scrape,
    4 × scrape)`` with *the data source's* scrape interval (15s unless set), so a 30s scrape
    would get a 1m window of two samples; with ``$__interval`` at least 4 spec scrape
    intervals the window always holds four, as every rule window does."""
    floor = format_duration_ms(SIGNAL_MISSING_MIN_SCRAPES * plan.scrape_interval_ms)
    panels = tuple(
        replace(p, extra={**p.extra, "interval": floor})
        if any(RATE in q.expr for q in p.queries)
        else p
        for p in row.panels
    )
    return replace(row, panels=panels)


# --- GPU ---------------------------------------------------------------------------------


def gpu_row(plan: ServicePlan) -> RowDef:
    """NVML sidecar exporter panels (metric names: nvml_exporter/README.md); empty unless ``gpu.exporter`` is set."""
    if not plan.gpu_exporter:
        return RowDef("GPU", ())

    def gauge(
        metric: str, extra: tuple[Matcher, ...] = (), labels: tuple[str, ...] = GPU_BY
    ) -> str:
        return f"max{kept_by(plan, *labels)} ({gpu.read(plan, metric, *scope(plan), pod_filter(), *extra)})"

    def runbook(alert: str) -> tuple[str, str]:
        return panel_runbook(plan, alert)

    gpu_legend = named(plan, GPU_LEGEND)

    panels = (
        PanelDef(
            title="GPU utilisation",
            key="gpu/utilisation",
            description=f"Share (0–1) of time a kernel ran on each GPU ({naming.GPU_UTILIZATION}).",
            kind="timeseries",
            queries=(Query(gauge(naming.GPU_UTILIZATION), gpu_legend),),
            unit="percentunit",
            min_value=0,
            max_value=1,
            runbook=runbook(naming.ALERT_GPU_TEMPERATURE),
        ),
        *_family_panels(plan, "gpu"),
    )
    return RowDef("GPU", panels)


def service_rows(plan: ServicePlan) -> list[RowDef]:
    """All rows of a service dashboard, in reading order for an incident; panels reading
    ``$__rate_interval`` get their minimum interval (:func:`rate_floor`)."""
    rows = [
        slo_row(plan),
        models_row(plan),
        traffic_row(plan),
        latency_row(plan),
        saturation_row(plan),
        memory_row(plan),
        gpu_row(plan),
        efficiency_row(plan),
    ]
    return [rate_floor(plan, row) for row in rows]
