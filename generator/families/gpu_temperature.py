"""``spec.alerts.gpuTemperature``: ``GPUTemperatureHigh``, a GPU's die temperature above
``max`` (°C), from the NVML sidecar's ``gpu_temperature_celsius``; with it the power, clock
and throttle panels its runbook reads. Page text in ``templates/runbooks/GPUTemperatureHigh.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import dcgm_fields, naming
from generator.families import dcgm, gpu
from generator.families.base import Family, Role
from generator.parts.common import alert_rule
from generator.parts.grafana_json import PanelDef, Query
from generator.parts.guard_inputs import Source
from generator.parts.panel_parts import alert_steps, named, panel_runbook
from generator.promql import by, go_float
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import AlertPlan, ServicePlan

KEY = "gpu_temperature"
ALERT = naming.ALERT_GPU_TEMPERATURE


@dataclass(frozen=True)
class Params:
    """``max``: the die temperature (°C) above which a GPU alerts."""

    max: float


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``gpu_temperature`` alert."""
    return Params(max=float(alert.params["max"]))


def rules(plan: ServicePlan) -> list[Rule]:
    """``GPUTemperatureHigh`` while a GPU's temperature (max per pod and uuid) stays above ``max``."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    hottest = f"max{by(plan.keeping(*gpu.GPU_LABELS))} ({gpu.read(plan, naming.GPU_TEMPERATURE)})"
    limit = decimal_str(params(alert).max)
    return [
        alert_rule(plan, ALERT, f"{hottest} > {limit}", alert.for_ms, alert.severity, max=limit)
    ]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Fires on one GPU 5 °C above ``max``; a healthy GPU's temperature stays quiet."""
    if KEY not in plan.alerts:
        return []
    hot = params(plan.alerts[KEY]).max + 5
    return gpu.device_cases(
        plan, KEY, rules(plan)[0], naming.GPU_TEMPERATURE, f"{go_float(hot)}+0x60", hot
    )


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The temperature of each GPU that answers NVML (excused where unsupported)."""
    if KEY not in plan.alerts:
        return []
    if gpu.dcgm(plan):
        return [dcgm.field_input(plan, "gpuTemperature", (dcgm_fields.GPU_TEMP,), ALERT)]
    return [
        gpu.reading_input(
            plan,
            "gpuTemperature",
            ((Source(naming.GPU_TEMPERATURE, plan.gpu_matchers),),),
            ALERT,
            gpu.unsupported(plan, "temperature"),
            remedy=f"The GPU answers NVML but reports no temperature, {gpu.NOT_SAID} A MIG "
            "instance or a vGPU that reports none is excused by that series.",
        )
    ]


def panels(plan: ServicePlan) -> list[PanelDef]:
    """Temperature (``max`` drawn), then power against its limit, SM clock and the throttle
    reasons active: what the alert's runbook reads to tell heat from power capping."""
    legend = named(plan, gpu.GPU_LEGEND)
    runbook = panel_runbook(plan, ALERT)
    return [
        PanelDef(
            title="GPU temperature",
            key="gpu/temperature",
            description=f"Die temperature in °C ({naming.GPU_TEMPERATURE}); "
            f"{ALERT} fires above the line.",
            kind="timeseries",
            queries=(Query(gpu.gauge(plan, naming.GPU_TEMPERATURE), legend),),
            unit="celsius",
            steps=alert_steps(plan, KEY, "max"),
            runbook=runbook,
        ),
        PanelDef(
            title="GPU power vs limit",
            key="gpu/power",
            description=f"Power draw ({naming.GPU_POWER_USAGE}) against the enforced limit "
            f"({naming.GPU_POWER_LIMIT}); a draw at the limit means power capping.",
            kind="timeseries",
            queries=(
                Query(gpu.gauge(plan, naming.GPU_POWER_USAGE), f"{legend} draw"),
                # dcgm-exporter's default counters file lists no power limit.
                *(
                    ()
                    if gpu.dcgm(plan)
                    else (Query(gpu.gauge(plan, naming.GPU_POWER_LIMIT), f"{legend} limit"),)
                ),
            ),
            unit="watt",
            min_value=0,
            runbook=runbook,
        ),
        PanelDef(
            title="GPU SM clock",
            key="gpu/sm-clock",
            description=f"Streaming-multiprocessor clock in hertz ({naming.GPU_SM_CLOCK}); a drop under "
            "load with a throttle reason active means the GPU is slowing down.",
            kind="timeseries",
            queries=(Query(gpu.gauge(plan, naming.GPU_SM_CLOCK), legend),),
            unit="hertz",
            min_value=0,
            runbook=runbook,
        ),
        PanelDef(
            title="GPU throttle reasons active",
            key="gpu/throttle",
            description=f"Clock event (throttle) reasons currently active per GPU "
            f"({naming.GPU_CLOCK_EVENT_ACTIVE}{{reason}} = 1); idle and application-clock reasons are normal.",
            kind="timeseries",
            queries=(
                Query(
                    gpu.gauge(plan, naming.GPU_CLOCK_EVENT_ACTIVE, labels=(*gpu.GPU_BY, "reason"))
                    + " > 0",
                    f"{legend} {{{{reason}}}}",
                ),
            ),
            unit="bool",
            min_value=0,
            runbook=runbook,
        ),
    ]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``gpu_temp``: the sidecar's temperature series (read by the slowdown page too)."""
    return {"gpu_temp": gpu.runbook_series(plan, naming.GPU_TEMPERATURE)}


FAMILY = Family(
    key=KEY,
    spec_field="gpuTemperature",
    alerts=(ALERT,),
    for_ms=600_000,
    severity="warning",
    params={"max": 85.0},
    role=Role.GPU,
    group="gpu",
    rules=rules,
    cases=cases,
    sidecar=True,
    inputs=inputs,
    row="gpu",
    rank=2,
    panels=panels,
    runbook_queries=runbook_queries,
)
