"""GPU alerts over the NVML sidecar exporter's metrics (names: nvml_exporter/README.md, Metrics).

Each is an alert family of :data:`generator.families.FAMILIES` in rule group ``gpu``
(:mod:`generator.families.gpu` and its siblings); none is rendered without the sidecar.
"""

from __future__ import annotations

from generator.builders.common import Rule
from generator.families import FAMILIES
from generator.plan import ServicePlan


def gpu_alerts(plan: ServicePlan) -> list[Rule]:
    """The ``gpu`` alerts of :data:`generator.families.FAMILIES` the plan enables, in their
    order (none without the sidecar)."""
    if not plan.gpu_exporter:
        return []
    return [r for family in FAMILIES if family.group == "gpu" for r in family.rules(plan)]
