"""``spec.alerts.gpuNvLinkErrors``: ``GPUNVLinkErrors``, a GPU's NVLink replay and recovery
errors (all links) above ``max`` a minute over 10m (sidecar ``gpu_nvlink_errors_total``,
``counter`` replay/recovery; dcgm-exporter ``DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL``,
``DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL``). Default ``max`` 1: DCGM's health watch
limit ``DCGM_LIMIT_MAX_NVLINK_ERROR`` (NVIDIA/DCGM ``common/DcgmGPUHardwareLimits.h``); CRC
errors matter only at 100+ a second there and are left to the panel. Page text in
``templates/runbooks/GPUNVLinkErrors.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import dcgm_fields, naming
from generator.families import dcgm, gpu, gpu_health
from generator.families.base import Family, Role
from generator.parts.common import alert_rule
from generator.promql import Matcher, go_float
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.parts.guard_inputs import SignalInput
    from generator.plan import AlertPlan, ServicePlan

KEY = "gpu_nv_link_errors"
ALERT = naming.ALERT_GPU_NVLINK
COUNTERS = (Matcher("counter", "=~", "replay|recovery"),)


@dataclass(frozen=True)
class Params:
    """``max``: the errors per second above which it alerts."""

    max: float


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``gpu_nv_link_errors`` alert."""
    return Params(float(alert.params["max"]))


def rules(plan: ServicePlan) -> list[Rule]:
    """One rule: replays and recoveries of a GPU's links a minute above ``max``."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    limit = params(alert).max
    expr = gpu_health.per_minute(plan, naming.GPU_NVLINK_ERRORS, limit, *COUNTERS)
    return [alert_rule(plan, ALERT, expr, alert.for_ms, alert.severity, max=decimal_str(limit))]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Replays at twice ``max`` a minute fire; a healthy GPU, and replays at half of it,
    stay quiet."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    limit = params(alert).max
    fast = f"0+{go_float(2 * limit + 1)}x60"
    faults: list[gpu_health.Fault] = [(naming.GPU_NVLINK_ERRORS, fast, "replay")]
    quiet: list[tuple[str, list[gpu_health.Fault]]] = []
    if limit > 0:
        slow = f"0+{go_float(limit / 2)}x60"
        quiet.append(
            (
                f"replays at {decimal_str(limit / 2)} a minute",
                [(naming.GPU_NVLINK_ERRORS, slow, "replay")],
            )
        )
    return gpu_health.cases(plan, KEY, rules(plan)[0], faults, quiet)


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The replay and recovery counts of each GPU that answers NVML (excused where the sidecar
    reports NVLink unsupported: no NVLink, no active link, or both counters refused); under
    dcgm, the NVLink replay and recovery fields (commented out by default)."""
    if KEY not in plan.alerts:
        return []
    if gpu.dcgm(plan):
        fields = (dcgm_fields.NVLINK_REPLAY, dcgm_fields.NVLINK_RECOVERY)
        return [dcgm.field_input(plan, "gpuNvLink", fields, ALERT)]
    metric = naming.GPU_NVLINK_ERRORS
    readings = ("nvlink", "nvlink_replay", "nvlink_recovery")
    what = "NVLink replay or recovery count"
    return [gpu_health.sidecar_input(plan, "gpuNvLink", ALERT, metric, COUNTERS, readings, what)]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """``gpu_nvlink``: the reading of the GPU its page checks first."""
    return {"gpu_nvlink": gpu.runbook_series(plan, naming.GPU_NVLINK_ERRORS)}


FAMILY = Family(
    key=KEY,
    spec_field="gpuNvLinkErrors",
    alerts=(ALERT,),
    for_ms=600_000,
    severity="warning",
    params={"max": 1.0},
    role=Role.GPU,
    group="gpu",
    rules=rules,
    cases=cases,
    sidecar=True,
    inputs=inputs,
    row="gpu",
    runbook_queries=runbook_queries,
    rank=10,
)
