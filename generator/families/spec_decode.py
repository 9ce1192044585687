"""``spec.alerts.specDecode``: ``ModelSpecDecodeAcceptanceLow``, speculative decoding's
acceptance rate (accepted / draft tokens, 0–1) over 1h more than ``maxDrop`` below its own
acceptance over the last day (traffic-weighted: rate over 1d), once the 1h ratio existed 6h
earlier.

Counters from the preset's ``spec_decode`` (vLLM V1: ``vllm/v1/spec_decode/metrics.py``,
``SpecDecodingProm``). They exist only while speculative decoding is on, so off means no
ratio, no alert and no ``ModelSignalMissing`` guard. docs/spec.md, "Speculative decoding";
page text in ``templates/runbooks/ModelSpecDecodeAcceptanceLow.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families.base import Family, Role
from generator.parts.common import alert_rule, record_rule, recorded
from generator.parts.grafana_json import PanelDef, Query
from generator.parts.panel_parts import legend, panel_runbook, rec
from generator.parts.promtool_series import (
    alert_test,
    expected_alert,
    promtool_group,
    series_text,
)
from generator.parts.series_parts import labels_of, up_labels
from generator.promql import selector
from generator.units import decimal_str, format_duration_ms

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, CounterPlan, ServicePlan

KEY = "spec_decode"
ALERT = naming.ALERT_SPEC_DECODE
ACCEPTANCE = "model_spec_decode_acceptance"  # share (0–1) of draft tokens accepted
BASELINE = "1d"  # the trailing baseline: accepted / draft tokens over the last day
HISTORY_MS = 6 * 3_600_000  # the 1h ratio must have existed this long ago


@dataclass(frozen=True)
class Params:
    """``max_drop``: relative drop (0–1) below the trailing day's acceptance that alerts (0.3:
    a day at 0.8 alerts below 0.56)."""

    max_drop: float


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``spec_decode`` alert."""
    return Params(max_drop=float(alert.params["max_drop"]))


def labels(plan: ServicePlan) -> tuple[str, ...]:
    """What the ratio is kept by: the aggregation labels and the server's model label."""
    return plan.keeping(*plan.agg_labels, *([plan.model_label] if plan.model_label else []))


def record_name(plan: ServicePlan, window: str) -> str:
    """Record of the acceptance ratio over ``window`` (``5m``, ``1h``)."""
    return naming.record(plan.group_by, ACCEPTANCE, f"ratio_rate{window}")


def _ratio(plan: ServicePlan, window: str) -> str:
    """accepted / draft tokens over ``window``, per :func:`labels`; nothing without drafts."""
    assert plan.spec_decode is not None
    draft, accepted = plan.spec_decode
    by = ", ".join(labels(plan))

    def rate(c: CounterPlan) -> str:
        return f"sum by ({by}) (rate({selector(c.name, c.matchers)}[{window}]))"

    return f"{rate(accepted)} / ({rate(draft)} > 0)"


def records(plan: ServicePlan) -> list[Rule]:
    """The 5m (dashboard), 1h (alert) and 1d (its baseline: traffic-weighted, never an average
    of ratios) acceptance ratios, where the preset has the counters."""
    if plan.spec_decode is None:
        return []
    windows = ("5m", "1h", BASELINE)
    return [record_rule(plan, record_name(plan, w), _ratio(plan, w)) for w in windows]


def rules(plan: ServicePlan) -> list[Rule]:
    """The ratio records, then ``ModelSpecDecodeAcceptanceLow`` (module docstring)."""
    alert = plan.alerts.get(KEY)
    if plan.spec_decode is None:
        return []
    out = records(plan)
    if alert is None:
        return out
    hour = recorded(plan, record_name(plan, "1h"))
    keep = decimal_str(1 - params(alert).max_drop)
    baseline = recorded(plan, record_name(plan, BASELINE))
    on = ", ".join(sorted({*labels(plan), naming.SERVICE}))
    expr = (
        f"{hour} < {keep} * {baseline}\nand on ({on}) ({hour} offset {naming.window(HISTORY_MS)})"
    )
    draft, accepted = plan.spec_decode
    out.append(
        alert_rule(
            plan,
            ALERT,
            expr,
            alert.for_ms,
            alert.severity,
            drop=decimal_str(params(alert).max_drop * 100),
            metric=f"{accepted.name} / {draft.name}",
            history=format_duration_ms(HISTORY_MS),
        )
    )
    return out


def _model(plan: ServicePlan, name: str) -> dict[str, str]:
    return {plan.model_label: name} if plan.model_label else {}


def _counters(
    plan: ServicePlan, model: str, draft_per_min: int, accepted: list[tuple[int, int]]
) -> list[dict[str, str]]:
    """One model's input series: the draft counter at ``draft_per_min`` and the accepted
    counter rising ``per_min`` for ``minutes`` in each ``(per_min, minutes)`` phase."""
    assert plan.spec_decode is not None
    draft, acc = plan.spec_decode
    total = sum(m for _, m in accepted)
    phases, at = [], 0
    for per_min, minutes in accepted:
        phases.append(f"{at}+{per_min}x{minutes}")
        at += per_min * (minutes + 1)
    return [
        {
            "series": series_text(c.name, labels_of(plan, c.matchers, **_model(plan, model))),
            "values": values,
        }
        for c, values in ((draft, f"0+{draft_per_min}x{total}"), (acc, " ".join(phases)))
    ]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """One group (one promtool pass over 10h of steps): model ``a`` accepts 80 % of its
    drafts for 8h, then 40 %, and fires; ``b`` stays at 80 % and ``c`` proposes no drafts
    (speculative decoding configured, nothing drafted: no ratio), both silent."""
    if KEY not in plan.alerts or plan.spec_decode is None:
        return []
    day, after = 8 * 60, 125
    at = (day + 120) * 60_000
    (rule,) = [r for r in rules(plan) if r.get("alert") == ALERT]
    draft = plan.spec_decode[0]
    fired = {
        k: v
        for k, v in labels_of(plan, draft.matchers, **_model(plan, "a")).items()
        if k in labels(plan)
    }
    expected = [expected_alert(rule, {**fired, naming.SERVICE: plan.name}, None)]
    series = [
        {"series": series_text("up", up_labels(plan)), "values": f"1+0x{day + after}"},
        *_counters(plan, "a", 100, [(80, day), (40, after)]),
        *(_counters(plan, "b", 100, [(80, day + after)]) if plan.model_label else []),
        *(_counters(plan, "c", 0, [(0, day + after)]) if plan.model_label else []),
    ]
    return [
        promtool_group(
            f"{ALERT}: one model's acceptance halves after 8h, fires for it alone",
            series,
            [alert_test(at, ALERT, expected)],
        )
    ]


def panels(plan: ServicePlan) -> list[PanelDef]:
    """The acceptance ratio (5m and 1h), where the preset has the counters."""
    if plan.spec_decode is None:
        return []
    return [
        PanelDef(
            title="Speculative decoding acceptance",
            key="spec-decode",
            description="Share (0–1) of proposed draft tokens the target model accepted "
            f"({plan.spec_decode[1].name} / {plan.spec_decode[0].name}); empty while "
            f"speculative decoding is off. {ALERT} tickets on a sustained drop below the "
            "day's acceptance.",
            kind="timeseries",
            queries=(
                Query(rec(plan, record_name(plan, "5m")), legend(plan, "5m")),
                Query(rec(plan, record_name(plan, "1h")), legend(plan, "1h")),
            ),
            unit="percentunit",
            min_value=0,
            max_value=1,
            runbook=panel_runbook(plan, ALERT),
            width=12,
        )
    ]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``spec_decode``: the 1h acceptance record; ``spec_decode_baseline``: the day's the
    alert compares with (both None without the counters)."""
    if plan.spec_decode is None:
        return {"spec_decode": None, "spec_decode_baseline": None}
    return {
        "spec_decode": record(record_name(plan, "1h")),
        "spec_decode_baseline": record(record_name(plan, BASELINE)),
    }


FAMILY = Family(
    key=KEY,
    spec_field="specDecode",
    alerts=(ALERT,),
    for_ms=1_800_000,
    severity="warning",
    params={"max_drop": 0.3},
    role=Role.SYMPTOM,
    group="traffic",
    rules=rules,
    cases=cases,
    signals=("spec_decode",),
    row="saturation",
    rank=6,
    panels=panels,
    runbook_queries=runbook_queries,
)
