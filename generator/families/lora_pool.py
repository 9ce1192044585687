"""``spec.alerts.loraPool``: ``ModelLoRAPoolSaturated``, a server's LoRA adapter pool full
(as many adapters running as ``max_lora`` slots) with adapters waiting, sustained.

Reads the preset's ``lora_info`` (vLLM ``vllm:lora_requests_info``, labels ``max_lora``,
``running_lora_adapters``, ``waiting_lora_adapters``: comma-joined names; value the time it
was last set). Every label set ever seen stays exported, so the record keeps each target's
newest (``topk`` by value) and joins ``max_lora;running`` into one label a regex counts for
the pool size ``maxLoras`` (the server's ``--max-loras``).
On by default with ``spec.models``; docs/spec.md, "LoRA adapter pool"; page text in
``templates/runbooks/ModelLoRAPoolSaturated.md.j2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families.base import Family, Role
from generator.parts.common import alert_rule, record_rule, recorded
from generator.parts.grafana_json import PanelDef, Query
from generator.parts.panel_parts import kept_by, legend, panel_runbook, pod_filter, rec
from generator.parts.promtool_series import (
    alert_test,
    expected_alert,
    promtool_group,
    series_text,
)
from generator.parts.series_parts import labels_of, up_labels
from generator.promql import Matcher, selector

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "lora_pool"
ALERT = naming.ALERT_LORA_POOL
RECORD = "model_lora_pool"  # the newest pool state of each target (value: its set time)
POOL = "lora_pool"  # the joined label "<max_lora>;<running adapters>"
MAX_LORA, RUNNING, WAITING = "max_lora", "running_lora_adapters", "waiting_lora_adapters"
DEFAULT_MAX_LORAS = 1  # vLLM's --max-loras default (EngineArgs.max_loras)


@dataclass(frozen=True)
class Params:
    """``max_loras``: the adapter slots of the pool (the server's ``--max-loras``)."""

    max_loras: int


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``lora_pool`` alert."""
    return Params(int(alert.params.get("max_loras", DEFAULT_MAX_LORAS)))


def record_name(plan: ServicePlan) -> str:
    """Record of each target's newest pool state."""
    return naming.record(plan.group_by, RECORD, "info")


def full_pattern(slots: int) -> str:
    """RE2 matching ``n;a1,…,an`` for ``n`` = ``slots``: the pool full. One size only: a
    pattern counting every size (an alternation over 1..64) is a program of thousands of
    instructions that Prometheus compiles at every evaluation (about 0.5 s of CPU each)."""
    return f"{slots};[^,;]+" + (f"(?:,[^,;]+){{{slots - 1}}}" if slots > 1 else "")


def rules(plan: ServicePlan) -> list[Rule]:
    """The record and ``ModelLoRAPoolSaturated`` (module docstring), where enabled."""
    alert = plan.alerts.get(KEY)
    name = plan.lora_info
    if alert is None or name is None:
        return []
    newest = f"topk without ({MAX_LORA}, {RUNNING}, {WAITING}) (1, {selector(name, plan.matchers)})"
    record = record_rule(
        plan,
        record_name(plan),
        f'label_join({newest}, "{POOL}", ";", "{MAX_LORA}", "{RUNNING}")',
    )
    full = recorded(
        plan,
        record_name(plan),
        Matcher(POOL, "=~", full_pattern(params(alert).max_loras)),
        Matcher(WAITING, "!=", ""),
    )
    # The adapters' names leave the alert's labels: a new waiting set must not restart `for`.
    expr = f"count without ({MAX_LORA}, {RUNNING}, {WAITING}, {POOL}) ({full})"
    return [
        record,
        alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity, metric=name),
    ]


def _series(
    plan: ServicePlan, name: str, phases: list[tuple[dict[str, str], int, int]], steps: int
) -> list[dict[str, str]]:
    """One target's info series: each ``(labels, from step, to step)`` set while current
    (value: seconds since the start, as ``set_to_current_time``), then frozen."""
    out = []
    for labels, start, end in phases:
        frozen = f" {end * 60}x{steps - end}" if end < steps else ""
        values = "_x" + str(start) + " " if start else ""
        values += f"{start * 60}+60x{end - start}{frozen}"
        series = series_text(name, labels_of(plan, plan.matchers, **labels))
        out.append({"series": series, "values": values.strip()})
    return out


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Two groups over 60 steps: a pool of ``maxLoras`` slots all running with one adapter
    waiting from step 20 fires after ``for``; one slot free with one waiting, then all running
    with none waiting, stays silent."""
    name = plan.lora_info
    alert = plan.alerts.get(KEY)
    if alert is None or name is None:
        return []
    steps = 60
    at = (20 + alert.for_ms // 60_000 + 5) * 60_000
    (rule,) = [r for r in rules(plan) if r.get("alert") == ALERT]
    up = {"series": series_text("up", up_labels(plan)), "values": f"1+0x{steps}"}
    slots = params(alert).max_loras
    names = [f"adapter{i}" for i in range(slots + 1)]
    size, all_busy, one_free = str(slots), ",".join(names[:slots]), ",".join(names[: slots - 1])
    idle = {MAX_LORA: size, RUNNING: one_free, WAITING: ""}
    full = {MAX_LORA: size, RUNNING: all_busy, WAITING: names[slots]}
    target = {
        k: v
        for k, v in labels_of(plan, plan.matchers).items()
        if k not in (MAX_LORA, RUNNING, WAITING)
    }
    fired = [expected_alert(rule, {**target, naming.SERVICE: plan.name}, None)]
    busy = [
        ({MAX_LORA: size, RUNNING: one_free, WAITING: names[slots]}, 0, 20),
        ({MAX_LORA: size, RUNNING: all_busy, WAITING: ""}, 20, steps),
    ]
    return [
        promtool_group(
            f"{ALERT}: {slots} of {slots} slots running, an adapter waiting from step 20: fires",
            [up, *_series(plan, name, [(idle, 0, 20), (full, 20, steps)], steps)],
            [alert_test(at, ALERT, fired)],
        ),
        promtool_group(
            f"{ALERT}: a free slot, or a full pool with nothing waiting: silent",
            [up, *_series(plan, name, busy, steps)],
            [alert_test(at, ALERT, [])],
        ),
    ]


def panels(plan: ServicePlan) -> list[PanelDef]:
    """The pool of each pod now (table: ``max_lora``, running and waiting adapters) and the
    pods whose pool is full and whose adapters wait (time series); none where the alert is
    off or the preset reads no pool gauge."""
    if plan.alerts.get(KEY) is None or plan.lora_info is None:
        return []
    record = record_name(plan)
    state = rec(plan, record, pod_filter())
    by = ", ".join(plan.agg_labels)
    alert = plan.alerts[KEY]
    slots = params(alert).max_loras
    full = rec(plan, record, pod_filter(), Matcher(POOL, "=~", full_pattern(slots)))
    waiting = rec(plan, record, pod_filter(), Matcher(WAITING, "!=", ""))
    runbook = panel_runbook(plan, ALERT)
    return [
        PanelDef(
            title="LoRA adapter pool per pod",
            key="lora-pool/state",
            description=f"Each pod's adapter pool now ({record}, from {plan.lora_info}): "
            f"{MAX_LORA} slots, the adapters running in them and those waiting for one "
            "(comma-joined names). Full (as many running as slots) with adapters waiting: "
            f"{ALERT}.",
            kind="table",
            queries=(
                Query(
                    f"max{kept_by(plan, 'pod', MAX_LORA, RUNNING, WAITING)} ({state})",
                    instant=True,
                ),
            ),
            unit="none",
            runbook=runbook,
            width=12,
        ),
        PanelDef(
            title="Pods with a full LoRA pool, with adapters waiting",
            key="lora-pool/saturation",
            description=f"Pods whose pool runs {slots} adapters in {slots} slots (maxLoras, "
            f"the server's --max-loras) and pods with adapters waiting for a slot, from {record}. "
            f"{ALERT} fires for a pod that is both for its whole `for`.",
            kind="timeseries",
            queries=(
                Query(f"count by ({by}) ({full})", legend(plan, "full")),
                Query(f"count by ({by}) ({waiting})", legend(plan, "waiting")),
            ),
            unit="none",
            min_value=0,
            decimals=0,
            runbook=runbook,
            width=12,
        ),
    ]


FAMILY = Family(
    key=KEY,
    spec_field="loraPool",
    alerts=(ALERT,),
    for_ms=900_000,
    severity="warning",
    params={"max_loras": DEFAULT_MAX_LORAS},
    role=Role.SYMPTOM,
    group="traffic",
    rules=rules,
    cases=cases,
    signals=("lora_info",),
    row="saturation",
    rank=90,
    panels=panels,
    # On by default only where spec.models says several models share a server.
    default_on=lambda body: body.models is not None,
)
