"""``obsgen verify``'s checks of ``spec.models`` (a row per named model, the unwatched share) and
of the LoRA pool and KV-transfer series; docs/verify.md, "The checks"."""

from __future__ import annotations

from generator import naming
from generator.builders import model_slo_rules
from generator.families import FAMILIES
from generator.models import requests_by_model
from generator.plan import ServicePlan
from generator.promql import Matcher, selector
from generator.signals import SIGNALS
from generator.units import decimal_str, format_duration_ms
from generator.verify_report import Status, _Report

SEEN_MODELS = 5  # model label values a missing named model's row quotes


def _model_series(plan: ServicePlan) -> tuple[str, tuple[Matcher, ...]] | None:
    """The series a per-model SLI counts requests from (:func:`generator.models.requests_by_model`,
    else the first latency histogram's count), or None where neither carries the model label."""
    assert plan.models is not None
    req = requests_by_model(plan.requests, plan.models.label)
    if req is not None:
        return req.name, req.matchers
    h = plan.histograms.get("requestDuration") or next(iter(plan.histograms.values()), None)
    if h is None:
        return None
    return (h.metric if h.native else h.metric + "_count"), h.matchers


def model_rows(r: _Report) -> None:
    """With ``spec.models``: one ``model`` row per named model (its request series exist under
    its model label value; missing: its SLIs stay empty), then ``models`` the unwatched share
    over 1h as ``ModelTrafficUnwatched`` computes it, a warning above ``maxUnwatchedShare``."""
    plan, models = r.plan, r.plan.models
    if models is None:
        return
    found = _model_series(plan)
    if found is None:
        return
    metric, matchers = found
    label = models.label
    per_model = r.api.query(f"count by ({label}) ({selector(metric, [*matchers, models.any()])})")
    seen = {s["metric"].get(label, ""): int(float(s["value"][1])) for s in per_model}
    for name in models.names:
        subject = selector(metric, [*matchers, Matcher(label, "=", name)])
        if seen.get(name):
            r.add("model", subject, Status.OK, f"{seen[name]} series")
            continue
        others = sorted(v for v in seen if v not in models.names)
        quoted = ", ".join(others[:SEEN_MODELS]) + (", …" if len(others) > SEEN_MODELS else "")
        r.add(
            "model",
            subject,
            Status.MISSING,
            f"no series of model {name!r}: its per-model SLIs stay empty and "
            f"{naming.ALERT_BURN_BY_MODEL} cannot fire for it; the server has {label} "
            f"{quoted or 'values for no other model'}; fix spec.models.names",
        )
    rules = model_slo_rules.unwatched_rules(plan)
    if not rules:
        return
    limit = models.max_unwatched_share
    shares = [float(s["value"][1]) for s in r.api.query(rules[0]["expr"])]
    subject = f"{label} not in {models.pattern}"
    if not shares:
        window = naming.window(model_slo_rules.UNWATCHED_WINDOW_MS)
        every = f"sum(rate({selector(metric, [*matchers, models.any()])}[{window}])) > 0"
        detail = (
            "unwatched share 0%: every request over 1h went to a named model"
            if r.api.query(every)
            else "unwatched share: no requests in the last hour"
        )
        r.add("models", subject, Status.OK, detail)
        return
    share = max(shares)
    detail = (
        f"unwatched share {decimal_str(round(share * 100, 1))}% of the requests over 1h "
        f"(limit {decimal_str(limit * 100)}%, spec.models.maxUnwatchedShare)"
    )
    if share > limit:
        r.add(
            "models",
            subject,
            Status.WARNING,
            f"{detail}: {naming.ALERT_MODELS_UNWATCHED} tickets after "
            f"{format_duration_ms(model_slo_rules.UNWATCHED_FOR_MS)}; name the busy models",
        )
    else:
        r.add("models", subject, Status.OK, detail)


def adapters_and_transfers(r: _Report) -> None:
    """The series of the signals a server may run without that an enabled family reads
    (:attr:`generator.signals.base.Signal.verify`: the LoRA pool, the KV transfers): a warning
    when absent (the server runs without LoRA or without NIXL, and the family stays silent)."""
    plan = r.plan
    for signal in SIGNALS:
        readers = tuple(
            alert
            for f in FAMILIES
            if signal.key in f.signals and f.key in plan.alerts
            for alert in f.alerts
        )
        if signal.verify is None or not readers:
            continue
        for p in signal.verify(plan, readers):
            r.series(p.what, p.metric, p.matchers, Status.WARNING, p.why)
