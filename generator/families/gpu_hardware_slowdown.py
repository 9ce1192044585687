"""``spec.alerts.gpuHardwareSlowdown``: ``GPUHardwareSlowdown``, a hardware clock event reason
(``hw_slowdown``, ``hw_thermal_slowdown``, ``hw_power_brake_slowdown``) holding a GPU's clocks
down for ``for`` in total within ``window`` (a windowed alert); with it the slowdown panel.
Page text in ``templates/runbooks/GPUHardwareSlowdown.md.j2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import dcgm_fields, naming
from generator.families import dcgm, gpu
from generator.families.base import Family, Role
from generator.parts import gpu_series
from generator.parts.common import alert_rule, held_for
from generator.parts.grafana_json import PanelDef, Query, Step
from generator.parts.guard_inputs import GPU_KEYS, Condition, SignalInput, Source
from generator.parts.panel_parts import (
    GREEN,
    RED,
    SEVERITY_COLOR,
    named,
    panel_runbook,
    pod_filter,
    scope,
)
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    INTERVAL_MS,
    Klass,
    Series,
    alert_test,
    expected_alert,
    steps_until,
)
from generator.parts.windowed_series import (
    Minutes,
    cycle,
    first_firing,
    gauge_group,
    held_seconds,
    sample,
    values_text,
)
from generator.promql import Matcher, by
from generator.signals.healthy import healthy
from generator.units import format_duration_ms

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "gpu_hardware_slowdown"
ALERT = naming.ALERT_GPU_SLOWDOWN


@dataclass(frozen=True)
class Params:
    """``window_ms``: the window the condition's share of time is measured in."""

    window_ms: int


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``gpu_hardware_slowdown`` alert."""
    return Params(int(alert.params["window_ms"]))


def slowdown_matchers(plan: ServicePlan) -> tuple[Matcher, ...]:
    """Matchers of the hardware clock event reasons ``GPUHardwareSlowdown`` reads."""
    reasons = "|".join(naming.GPU_HARDWARE_SLOWDOWN_REASONS)
    return (*gpu.matchers(plan), Matcher("reason", "=~", reasons))


def _active(plan: ServicePlan, *extra: Matcher) -> str:
    reasons = Matcher("reason", "=~", "|".join(naming.GPU_HARDWARE_SLOWDOWN_REASONS))
    return gpu.read(plan, naming.GPU_CLOCK_EVENT_ACTIVE, reasons, *extra)


def rules(plan: ServicePlan) -> list[Rule]:
    """``GPUHardwareSlowdown``: a hardware reason held the GPU's clocks down for ``for`` in
    total within ``window`` (:func:`held_for`: a brake that comes and goes counts). Per GPU
    and reason; value: seconds within the window."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    window = params(alert).window_ms
    active = _active(plan)
    expr = held_for(
        plan,
        f"max{by(plan.keeping(*gpu.GPU_LABELS, 'reason'))} ({active}) == 1",
        alert.for_ms,
        window,
    )
    return [
        alert_rule(
            plan,
            ALERT,
            expr,
            0,
            alert.severity,
            {naming.WINDOW: format_duration_ms(window)},
            held=format_duration_ms(max(alert.for_ms, plan.scrape_interval_ms)),
            window=format_duration_ms(window),
        )
    ]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """A power brake active 2 of every 3 minutes fires (a ``for`` would be reset each time it
    lifts); a brake of two minutes once, and a software power cap held throughout, stay quiet."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    window = params(alert).window_ms
    least = max(alert.for_ms, plan.scrape_interval_ms) / 1000
    rule = rules(plan)[0]
    name = rule["alert"]
    length = steps_until(5 * INTERVAL_MS + 2 * window)
    at_rest = {r: f"0+0x{length}" for r in ("gpu_idle", *naming.GPU_HARDWARE_SLOWDOWN_REASONS)}

    def braking(values: Minutes, also: dict[str, str] | None = None) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)], length)
        reasons = {**at_rest, "hw_power_brake_slowdown": values_text(values), **(also or {})}
        gpu_series.clock_reasons(plan, s, reasons)
        return s

    flapping = cycle(5, 1.0, 0.0, 2, 1, length)

    def held(t: int) -> bool:
        return sample(flapping, t) == 1

    fire = first_firing(plan, held, window, least, length)
    labels = {**gpu_series.alert_labels(plan), "reason": "hw_power_brake_slowdown"}
    once: Minutes = [0.0] * 5 + [1.0] * 2 + [0.0] * (length - 7)
    quiet = braking(once, {"sw_power_cap": f"1+0x{length}"})
    groups = [
        gauge_group(
            f"{name}: a power brake active 2 of every 3 minutes fires",
            braking(flapping),
            length,
            [
                alert_test(
                    fire,
                    name,
                    [expected_alert(rule, labels, held_seconds(plan, held, fire, window))],
                )
            ],
        )
    ]
    if held_seconds(plan, lambda t: sample(once, t) == 1, 7 * INTERVAL_MS, window) < least:
        groups.append(
            gauge_group(
                f"{name}: a brake of two minutes once, and a software power cap, stay quiet",
                quiet,
                length,
                [alert_test(t * INTERVAL_MS, name, []) for t in (7, 10, 20)],
            )
        )
    return groups


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The clock event reasons of each GPU that answers NVML (excused where unsupported)."""
    if KEY not in plan.alerts:
        return []
    if gpu.dcgm(plan):
        fields = (dcgm_fields.CLOCK_EVENTS,)
        return [dcgm.field_input(plan, "gpuClockEvents", fields, ALERT)]
    m = plan.gpu_matchers
    return [
        SignalInput(
            "gpuClockEvents",
            naming.GPU_CLOCK_EVENT_ACTIVE,
            GPU_KEYS,
            ((Source(naming.GPU_CLOCK_EVENT_ACTIVE, m),),),
            (Condition((Source(naming.GPU_DEVICE_UP, m),), 1),),
            (ALERT,),
            # A GPU lists only the reasons it supports: the hardware ones may be absent.
            covers=(Source(naming.GPU_CLOCK_EVENT_ACTIVE, slowdown_matchers(plan)),),
            excused=(gpu.unsupported(plan, "supported_reasons", "current_reasons"),),
            remedy=f"The GPU answers NVML but reports no clock event reasons, {gpu.NOT_SAID}",
        )
    ]


def panels(plan: ServicePlan) -> list[PanelDef]:
    """The hardware reasons active now per GPU; none without the alert."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    window = format_duration_ms(params(alert).window_ms)
    held = format_duration_ms(max(alert.for_ms, plan.scrape_interval_ms))
    active = _active(plan, *scope(plan), pod_filter())
    labels = by(plan.keeping(*gpu.GPU_LABELS, "gpu", "reason"))
    return [
        PanelDef(
            title="GPU hardware slowdown",
            key="gpu/hw-slowdown",
            description=f"Hardware reasons ({', '.join(naming.GPU_HARDWARE_SLOWDOWN_REASONS)}) "
            f"holding the GPU's clocks down ({naming.GPU_CLOCK_EVENT_ACTIVE}, 1 = active); "
            f"{ALERT} fires once one held {held} in total within {window}.",
            kind="timeseries",
            queries=(
                Query(f"max{labels} ({active})", f"{named(plan, gpu.GPU_LEGEND)} {{{{reason}}}}"),
            ),
            unit="bool",
            min_value=0,
            steps=(Step(None, GREEN), Step(1, SEVERITY_COLOR.get(alert.severity, RED))),
            runbook=panel_runbook(plan, ALERT),
        )
    ]


FAMILY = Family(
    key=KEY,
    spec_field="gpuHardwareSlowdown",
    alerts=(ALERT,),
    for_ms=300_000,
    severity="warning",
    params={},
    role=Role.GPU,
    group="gpu",
    rules=rules,
    cases=cases,
    sidecar=True,
    inputs=inputs,
    row="gpu",
    rank=3,
    panels=panels,
    windowed=True,
)
