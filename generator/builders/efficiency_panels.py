"""The ``Efficiency`` row of a service dashboard: the records of
:mod:`generator.builders.efficiency_rules` now and a week before (the service's own trailing
baseline), so a regression after a rollout, a config change or throttled clocks shows against
the same hour of the same weekday.

Both records are per service and namespace (and cluster label); GPU series carry no model
label, so neither panel follows the ``model_name`` variable. Empty (no row) without a GPU
source or a generation-token counter, as the records are.
"""

from __future__ import annotations

from generator import naming
from generator.builders import efficiency_rules
from generator.parts.common import recorded
from generator.parts.grafana_json import PanelDef, Query, RowDef
from generator.parts.panel_parts import legend, panel_runbook, scope
from generator.plan import ServicePlan

BASELINE = "1w"  # the trailing baseline: the same time a week before
SHARED = (
    " A GPU shared by several pods (time-slicing, MPS) reports its whole energy to each of "
    "them, so a shared GPU's energy is counted once per pod that sees it; a MIG instance "
    "reports the whole device's energy too (docs/spec.md, Efficiency)."
)


def _queries(plan: ServicePlan, record: str) -> tuple[Query, ...]:
    series = recorded(plan, record, *scope(plan))
    return (
        Query(series, legend(plan, "now")),
        Query(f"{series} offset {BASELINE}", legend(plan, f"{BASELINE} before")),
    )


def efficiency_row(plan: ServicePlan) -> RowDef:
    """Energy per 1,000 output tokens (J) and GPU-seconds per million output tokens, each with
    its value a week before; an empty row when the records are not rendered."""
    if not efficiency_rules.records(plan):
        return RowDef("Efficiency", ())
    energy = efficiency_rules.ENERGY_PER_1K
    seconds = efficiency_rules.GPU_SECONDS_PER_1M
    runbook = panel_runbook(plan, naming.ALERT_GPU_SLOWDOWN)
    panels = (
        PanelDef(
            title="Energy per 1,000 output tokens",
            key="efficiency/energy-per-1k-tokens",
            description="Joules the service's GPUs drew per 1,000 generated tokens over 5m "
            f"({energy}: 1000 × energy counter rate in J/s ÷ output tokens/s), and the same a "
            f"week before. Rising at steady traffic: smaller batches, throttled clocks "
            f"(GPUHardwareSlowdown) or a slower model build.{SHARED}",
            kind="timeseries",
            queries=_queries(plan, energy),
            unit="joule",
            min_value=0,
            runbook=runbook,
            width=12,
        ),
        PanelDef(
            title="GPU-seconds per million output tokens",
            key="efficiency/gpu-seconds-per-1m-tokens",
            description="GPU-seconds held per million generated tokens over 5m "
            f"({seconds}: 1e6 × GPUs reporting an energy counter ÷ output tokens/s), and the "
            "same a week before: the cost side of throughput; idle replicas raise it. "
            f"{SHARED.strip()}",
            kind="timeseries",
            queries=_queries(plan, seconds),
            unit="s",
            min_value=0,
            runbook=runbook,
            width=12,
        ),
    )
    return RowDef("Efficiency", panels)
