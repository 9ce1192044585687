"""``spec.alerts.gpuMemoryHeadroom``: ``GPUMemoryHeadroomLow``, free / total device memory
below ``minFree`` per whole GPU, or per MIG GPU instance on a GPU that has instances (a pod
that sees only its instance cannot read the parent's memory). Page text in
``templates/runbooks/GPUMemoryHeadroomLow.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from generator import dcgm_fields, naming
from generator.families import dcgm, gpu
from generator.families.base import Family, Role
from generator.parts import gpu_series
from generator.parts.common import alert_rule
from generator.parts.grafana_json import PanelDef, Query
from generator.parts.guard_inputs import Source
from generator.parts.panel_parts import alert_steps, named, panel_runbook
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    Series,
    after_for,
    expected_alert,
    family_case,
)
from generator.promql import by
from generator.signals.healthy import healthy
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import AlertPlan, ServicePlan

KEY = "gpu_memory_headroom"
ALERT = naming.ALERT_GPU_MEMORY_HEADROOM


@dataclass(frozen=True)
class Params:
    """``min_free``: the share (0–1) of device memory free below which a GPU alerts."""

    min_free: float


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``gpu_memory_headroom`` alert."""
    return Params(min_free=float(alert.params["min_free"]))


def _headroom(plan: ServicePlan, free: str, total: str, labels: tuple[str, ...]) -> str:
    """Free / total memory (ratio 0–1) per ``labels``; nothing where total is 0 or absent."""
    return (
        f"max{by(labels)} ({gpu.read(plan, free)}) / "
        f"(max{by(labels)} ({gpu.read(plan, total)}) > 0)"
    )


def rules(plan: ServicePlan) -> list[Rule]:
    """One rule: whole GPUs without MIG series, and each MIG instance (its alerts carry
    ``mig_uuid`` and ``gpu_instance_id``), below ``min_free``."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    min_free = decimal_str(params(alert).min_free)
    gpus, instances = plan.keeping(*gpu.GPU_LABELS), plan.keeping(*gpu.MIG_LABELS)
    mig = f"group{by(gpus)} ({gpu.read(plan, naming.GPU_MIG_MEMORY_TOTAL)})"
    whole = _headroom(plan, naming.GPU_MEMORY_FREE, naming.GPU_MEMORY_TOTAL, gpus)
    instance = _headroom(plan, naming.GPU_MIG_MEMORY_FREE, naming.GPU_MIG_MEMORY_TOTAL, instances)
    expr = (
        f"({whole} < {min_free} unless on ({', '.join(gpus)}) {mig})\nor\n{instance} < {min_free}"
    )
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity, min_free=min_free)]


def _mig_cases(plan: ServicePlan, rule: Rule, min_free: Fraction) -> list[dict[str, Any]]:
    """A pod that sees only its MIG instance (no parent memory): the instance 98 % full fires
    per instance; half full (or, above a ``minFree`` of 0.5, free memory halfway between it
    and 1) stays quiet, and the parent is not judged."""
    total = 20 * 2**30
    at = after_for(plan, KEY)

    def mig(free: int) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)])
        # The parent's memory is not readable from the pod; a full parent reading would
        # otherwise fire beside the instance.
        gpu_series.drop_memory(plan, s)
        gpu_series.memory(plan, s, f"{free}+0x60", total, instance="1")
        return s

    full = _whole_mib(total * min(Fraction(2, 100), min_free / 2))
    # Half free; above a threshold of one half, halfway between it and all free (quiet for
    # every minFree < 1).
    roomy = _whole_mib(
        total * (Fraction(1, 2) if min_free < Fraction(1, 2) else (1 + min_free) / 2)
    )
    quiet = (
        "half" if 2 * roomy == total else f"{decimal_str(float(1 - Fraction(roomy, total)) * 100)}%"
    )
    extra = {"gpu_instance_id": "1"}
    if not gpu.dcgm(plan):
        extra["mig_uuid"] = "MIG-11111111-1111-1111-1111-111111111111"
    labels = {**gpu_series.alert_labels(plan), **extra}
    full_pct = decimal_str(float(1 - Fraction(full, total)) * 100)
    return [
        family_case(
            plan,
            f"{ALERT}: a MIG instance {full_pct}% full fires per instance",
            mig(full),
            ALERT,
            [expected_alert(rule, labels, full / total)],
            at,
        ),
        family_case(
            plan, f"{ALERT}: a MIG instance {quiet} full stays quiet", mig(roomy), ALERT, [], at
        ),
    ]


def _whole_mib(n: Fraction | int) -> int:
    """``n`` bytes rounded down to whole MiB, as dcgm-exporter reports memory (exact in both
    sources' arithmetic: a ratio of multiples of 2^20)."""
    return int(n) // dcgm_fields.MIB * dcgm_fields.MIB


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """An 80 GiB GPU with half of ``min_free`` free fires, a healthy one stays quiet; then
    the MIG instance cases."""
    if KEY not in plan.alerts:
        return []
    min_free = Fraction(str(params(plan.alerts[KEY]).min_free))
    total = gpu_series.TOTAL
    free = _whole_mib(total * min_free / 2)
    rule = rules(plan)[0]
    return [
        *gpu.device_cases(plan, KEY, rule, naming.GPU_MEMORY_FREE, f"{free}+0x60", free / total),
        *_mig_cases(plan, rule, min_free),
    ]


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """Free and total memory of each GPU that answers NVML, whole or per MIG instance
    (excused where the exporter reports ``memory_info`` unsupported: a unified-memory GB10)."""
    if KEY not in plan.alerts:
        return []
    if gpu.dcgm(plan):
        fields = (dcgm_fields.FB_FREE, dcgm_fields.FB_USED)
        return [dcgm.field_input(plan, "gpuMemory", fields, ALERT)]
    m = plan.gpu_matchers
    return [
        gpu.reading_input(
            plan,
            "gpuMemory",
            (
                (Source(naming.GPU_MEMORY_FREE, m), Source(naming.GPU_MIG_MEMORY_FREE, m)),
                (Source(naming.GPU_MEMORY_TOTAL, m), Source(naming.GPU_MIG_MEMORY_TOTAL, m)),
            ),
            ALERT,
            gpu.unsupported(plan, "memory_info"),
            remedy="The GPU answers NVML but reports no memory, neither whole nor per MIG "
            f"instance, {gpu.NOT_SAID} A unified-memory GPU (GB10, DGX Spark) has no frame-buffer "
            "memory to report: the exporter says so and this guard stays silent there.",
        )
    ]


def panels(plan: ServicePlan) -> list[PanelDef]:
    """Memory used against total, and the headroom as the alert computes it (``min_free``
    drawn)."""
    legend = named(plan, gpu.GPU_LEGEND)
    runbook = panel_runbook(plan, ALERT)

    def gauge(metric: str, labels: tuple[str, ...] = gpu.GPU_BY) -> str:
        return gpu.gauge(plan, metric, labels=labels)

    return [
        PanelDef(
            title="GPU memory used vs total",
            key="gpu/memory",
            description=f"Device memory in use ({naming.GPU_MEMORY_USED}) and installed ({naming.GPU_MEMORY_TOTAL}).",
            kind="timeseries",
            queries=(
                Query(gauge(naming.GPU_MEMORY_USED), f"{legend} used"),
                Query(gauge(naming.GPU_MEMORY_TOTAL), f"{legend} total"),
            ),
            unit="bytes",
            min_value=0,
            runbook=runbook,
        ),
        PanelDef(
            title="GPU memory headroom",
            key="gpu/memory-headroom",
            description=f"Free / total device memory ({naming.GPU_MEMORY_FREE} / {naming.GPU_MEMORY_TOTAL}), "
            f"per MIG instance on GPUs with MIG instances ({naming.GPU_MIG_MEMORY_FREE} / "
            f"{naming.GPU_MIG_MEMORY_TOTAL}), as {ALERT} computes it; "
            "it fires below the line.",
            kind="timeseries",
            queries=(
                Query(
                    f"{gauge(naming.GPU_MEMORY_FREE)} / ({gauge(naming.GPU_MEMORY_TOTAL)} > 0) "
                    f"unless on ({', '.join(plan.keeping(*gpu.GPU_BY))}) {gauge(naming.GPU_MIG_MEMORY_TOTAL)} "
                    f"or {gauge(naming.GPU_MIG_MEMORY_FREE, gpu.MIG_BY)} / "
                    f"({gauge(naming.GPU_MIG_MEMORY_TOTAL, gpu.MIG_BY)} > 0)",
                    f"{legend}{{{{mig_uuid}}}}",
                ),
            ),
            unit="percentunit",
            min_value=0,
            max_value=1,
            steps=alert_steps(plan, KEY, "min_free", below=True),
            runbook=runbook,
        ),
    ]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``gpu_free`` and ``gpu_mig_free``: free memory per GPU and per MIG instance."""
    return {
        "gpu_mig_free": gpu.runbook_series(plan, naming.GPU_MIG_MEMORY_FREE),
        "gpu_free": gpu.runbook_series(plan, naming.GPU_MEMORY_FREE),
    }


FAMILY = Family(
    key=KEY,
    spec_field="gpuMemoryHeadroom",
    alerts=(ALERT,),
    for_ms=300_000,
    severity="warning",
    params={"min_free": 0.05},
    role=Role.GPU,
    group="gpu",
    rules=rules,
    cases=cases,
    sidecar=True,
    inputs=inputs,
    row="gpu",
    rank=1,
    panels=panels,
    runbook_queries=runbook_queries,
)
