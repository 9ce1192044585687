"""GPU alerts over the NVML sidecar's metrics (names: nvml_exporter/README.md, Metrics) or
dcgm-exporter's, turned into the same names by the records of :mod:`generator.families.dcgm`.

Each is an alert family of :data:`generator.families.FAMILIES` in rule group ``gpu``
(:mod:`generator.families.gpu` and its siblings); none is rendered without a GPU source.
"""

from __future__ import annotations

from generator.families import FAMILIES, dcgm
from generator.parts.common import Rule
from generator.plan import ServicePlan


def gpu_alerts(plan: ServicePlan) -> list[Rule]:
    """The ``gpu`` alerts of :data:`generator.families.FAMILIES` the plan enables, in their
    order (none without a GPU source), after the dcgm source's records."""
    if not plan.gpu_exporter:
        return []
    alerts = [r for family in FAMILIES if family.group == "gpu" for r in family.rules(plan)]
    records = dcgm.records(plan) if plan.gpu_source == "dcgm" else []
    return [*records, *alerts]
