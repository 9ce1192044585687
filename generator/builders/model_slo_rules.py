"""Per-model SLIs (``spec.models``): every availability and latency SLO recorded once per named
model plus one ``other`` rollup, its ``ErrorBudgetBurnByModel`` tiers, and the
``ModelTrafficUnwatched`` ticket when the rollup carries most requests.

Records (``<level>`` as every record's, labels ``slo`` and the model label): increments
``<level>:slo_outcomes_by_model:increase<eval>`` (``events`` bad/total), error ratios (0–1)
``<level>:slo_sli_error_by_model:ratio_rate<w>``, the SLI ``<level>:slo_sli_by_model:ratio_rate<SLO
window>``; the rollup's share (0–1) of requests ``<level>:model_requests_unwatched:ratio_rate1h``.
Users' view: docs/spec.md, "Per-model SLOs".
"""

from __future__ import annotations

from dataclasses import replace

from generator import naming
from generator.builders import slo_rules
from generator.models import OTHER, ModelsPlan, requests_by_model
from generator.parts.common import Group, Rule, alert_rule, group, record_rule, recorded
from generator.plan import ServicePlan, SLOPlan
from generator.promql import Matcher, selector
from generator.signals.requests import requests_sum
from generator.units import decimal_str

ALERT_BURN = naming.ALERT_BURN_BY_MODEL
ALERT_UNWATCHED = naming.ALERT_MODELS_UNWATCHED
EVENTS = "slo_outcomes_by_model"
ERROR = "slo_sli_error_by_model"
SLI = "slo_sli_by_model"
UNWATCHED = "model_requests_unwatched"
UNWATCHED_WINDOW_MS = 3_600_000
UNWATCHED_FOR_MS = 900_000
# The guard waits for this many requests in its hour: a canary alone on an idle night is no
# unwatched traffic.
UNWATCHED_MIN_REQUESTS = 60


def _add(matchers: tuple[Matcher, ...], m: tuple[Matcher, ...]) -> tuple[Matcher, ...]:
    return tuple(sorted({*matchers, *m}))


def scoped(
    plan: ServicePlan, s: SLOPlan | None, m: tuple[Matcher, ...], keep: bool
) -> tuple[ServicePlan, SLOPlan | None] | None:
    """``plan`` and ``s`` reading only the series matchers ``m`` select, summed by the model label too
    when ``keep``; None where the SLO's counters do not carry the model label
    (:func:`generator.models.requests_by_model`)."""
    models = plan.models
    assert models is not None
    req = requests_by_model(plan.requests, models.label)
    if req is None and (s is None or s.histogram is None):
        return None
    if req is None:
        req = plan.requests
    req = replace(
        req,
        matchers=_add(req.matchers, m),
        sources=tuple(replace(src, matchers=_add(src.matchers, m)) for src in req.sources),
    )
    group_by = (*plan.group_by, models.label) if keep else plan.group_by
    out = replace(plan, requests=req, group_by=group_by)
    if s is not None and s.histogram is not None:
        s = replace(s, histogram=replace(s.histogram, matchers=_add(s.histogram.matchers, m)))
    return out, s


def events_record(plan: ServicePlan) -> str:
    """Record name of the per-model bad and total increments."""
    return naming.record(plan.group_by, EVENTS, naming.increase(plan.evaluation_interval_ms))


def error_record(plan: ServicePlan, window_ms: int) -> str:
    """Record name of the per-model error ratio (0–1) over ``window_ms``."""
    return naming.record(plan.group_by, ERROR, naming.ratio_rate(window_ms))


def unwatched_record(plan: ServicePlan) -> str:
    """Record name of the rollup's share (0–1) of the service's requests over 1h."""
    return naming.record(plan.group_by, UNWATCHED, naming.ratio_rate(UNWATCHED_WINDOW_MS))


def _other(models: ModelsPlan, expr: str) -> str:
    return f'label_replace(\n{expr}, "{models.label}", "{OTHER}", "", "")'


def events_expr(plan: ServicePlan, s: SLOPlan) -> str | None:
    """Bad and total increments of ``s`` per named model, then the rollup as ``other``;
    None where the SLO's counters do not carry the model label."""
    models = plan.models
    assert models is not None
    named = scoped(plan, s, models.named(), keep=True)
    rest = scoped(plan, s, models.unnamed(), keep=False)
    if named is None or rest is None:
        return None
    (np, ns), (op, os_) = named, rest
    assert ns is not None and os_ is not None
    return f"{slo_rules.events_expr(np, ns)}\nor {_other(models, slo_rules.events_expr(op, os_))}"


def _range(plan: ServicePlan, window_ms: int) -> str:
    return naming.window(window_ms - plan.evaluation_interval_ms // 2)


def _slo(s: SLOPlan) -> Matcher:
    return Matcher(naming.SLO, "=", s.name)


def _events(plan: ServicePlan, s: SLOPlan, which: str) -> str:
    return recorded(plan, events_record(plan), _slo(s), Matcher(naming.EVENTS, "=", which))


def records(plan: ServicePlan, s: SLOPlan) -> list[Rule]:
    """The per-model records of ``s`` (module docstring), in evaluation order."""
    expr = events_expr(plan, s)
    if expr is None:
        return []
    labels = {naming.SLO: s.name}
    rules = [record_rule(plan, events_record(plan), expr, labels)]
    for window_ms in slo_rules.windows(s):
        r = _range(plan, window_ms)
        bad, total = (
            f"sum without ({naming.EVENTS}) (sum_over_time({_events(plan, s, e)}[{r}]))"
            for e in (naming.EVENTS_BAD, naming.EVENTS_TOTAL)
        )
        # As the service's ratios (slo_rules.sli_records): exact, 0 of 0 a 0, capped at 1.
        ratio = f"clamp_max({bad} / ({total} + 1e-300), 1)"
        rules.append(record_rule(plan, error_record(plan, window_ms), ratio, labels))
    sli = naming.record(plan.group_by, SLI, naming.ratio_rate(s.window_ms))
    error = recorded(plan, error_record(plan, s.window_ms), _slo(s))
    rules.append(record_rule(plan, sli, f"1 - {error}", labels))
    return rules


def burn_alerts(plan: ServicePlan, s: SLOPlan) -> list[Rule]:
    """One ``ErrorBudgetBurnByModel`` per tier of ``s``: as ``ErrorBudgetBurn`` on each
    model's own ratios, with ``min_events`` of that model's events in the long window."""
    models = plan.models
    assert models is not None
    if events_expr(plan, s) is None:
        return []
    on = ", ".join(sorted({*plan.agg_labels, naming.SERVICE, naming.SLO, models.label}))
    total = _events(plan, s, naming.EVENTS_TOTAL)
    rules = []
    for tier in s.tiers:
        threshold = decimal_str(tier.threshold)
        long_r = recorded(plan, error_record(plan, tier.long_window_ms), _slo(s))
        short_r = recorded(plan, error_record(plan, tier.short_window_ms), _slo(s))
        events = f"sum_over_time({total}[{_range(plan, tier.long_window_ms)}])"
        expr = (
            f"{long_r} > {threshold}\n"
            f"and on ({on}) {short_r} > {threshold}\n"
            f"and on ({on}) {events} >= {s.min_events}"
        )
        rules.append(
            slo_rules.burn_alert(plan, ALERT_BURN, s, tier, expr, model_label=models.label)
        )
    return rules


def _requests_rate(plan: ServicePlan, ms: tuple[Matcher, ...]) -> str | None:
    """Requests a second over 1h of the series ``ms`` selects, per aggregation: the counters
    of the per-model availability SLI, else the count of the first latency histogram (one
    observation per request); None where neither carries the model label."""
    models = plan.models
    assert models is not None
    window = naming.window(UNWATCHED_WINDOW_MS)
    by = ", ".join(plan.agg_labels)

    def rate(sel: str) -> str:
        return f"sum by ({by}) (rate({sel}[{window}]))"

    req = requests_by_model(plan.requests, models.label)
    if req is not None:
        req = replace(req, matchers=_add(req.matchers, ms), sources=())
        return requests_sum(replace(plan, requests=req), rate)
    h = plan.histograms.get("requestDuration") or next(iter(plan.histograms.values()), None)
    if h is None:
        return None
    if h.native:
        sel = selector(h.metric, _add(h.matchers, ms))
        return f"sum by ({by}) (histogram_count(rate({sel}[{window}])))"
    return rate(selector(h.metric + "_count", _add(h.matchers, ms)))


def unwatched_rules(plan: ServicePlan) -> list[Rule]:
    """The rollup's share of requests over 1h and ``ModelTrafficUnwatched`` (a ticket) while
    it stays above ``maxUnwatchedShare`` with at least :data:`UNWATCHED_MIN_REQUESTS`."""
    models = plan.models
    assert models is not None
    rest = _requests_rate(plan, models.unnamed())
    every = _requests_rate(plan, (models.any(),))
    if rest is None or every is None:
        return []
    record = record_rule(plan, unwatched_record(plan), f"{rest}\n/ ({every} > 0)")
    on = ", ".join(plan.agg_labels)  # the raw counters carry no service label
    seconds = UNWATCHED_WINDOW_MS // 1000
    expr = (
        f"{recorded(plan, unwatched_record(plan))} > {decimal_str(models.max_unwatched_share)}\n"
        f"and on ({on}) ({every}) * {seconds} >= {UNWATCHED_MIN_REQUESTS}"
    )
    alert = alert_rule(
        plan,
        ALERT_UNWATCHED,
        expr,
        UNWATCHED_FOR_MS,
        "warning",
        share=decimal_str(models.max_unwatched_share * 100),
        names=", ".join(models.names),
        model_label=models.label,
        least=str(UNWATCHED_MIN_REQUESTS),
    )
    return [record, alert]


def model_groups(plan: ServicePlan) -> list[Group]:
    """``slo.<name>.models`` per availability/latency SLO (records, then burn tiers, at the
    SLO groups' interval) and ``models`` (the guard); nothing without ``spec.models``."""
    if plan.models is None:
        return []
    out = [
        group(
            plan,
            f"slo.{s.name}.models",
            [*records(plan, s), *burn_alerts(plan, s)],
            interval_ms=plan.evaluation_interval_ms,
        )
        for s in plan.slos
    ]
    out.append(group(plan, "models", unwatched_rules(plan)))
    return [g for g in out if g["rules"]]


def per_model_query(plan: ServicePlan) -> str | None:
    """Requests a second over 1h per value of the model label, named or not (runbooks):
    which models the server serves now; None without ``spec.models``."""
    models = plan.models
    if models is None:
        return None
    req = requests_by_model(plan.requests, models.label)
    if req is not None:
        series = selector(req.name, req.matchers)
    else:
        h = plan.histograms.get("requestDuration") or next(iter(plan.histograms.values()), None)
        if h is None:
            return None
        series = selector(h.metric if h.native else h.metric + "_count", h.matchers)
    return f"sum by ({models.label}) (rate({series}[{naming.window(UNWATCHED_WINDOW_MS)}]))"
