"""``obsgen.yaml``'s ``ruler`` section applied to each service's plan: ``deduplication: rules``
sets the copy and replica labels (:mod:`generator.dedup`); ``evaluationDelay`` becomes every
rule group's ``query_offset``, refused where the declared Prometheus cannot load it.

More: docs/scale-out.md, "The ruler section applied to a plan"; docs/scale-out.md, "What
the ruler must provide".
"""

from __future__ import annotations

import dataclasses

from generator import targets
from generator.errors import Diagnostic
from generator.plan import ServicePlan
from generator.project_config import CONFIG_FILE, RulerConfig
from generator.spec import ModelServiceSpec
from generator.units import format_duration_ms


def apply_ruler(
    plan: ServicePlan, spec: ModelServiceSpec, ruler: RulerConfig
) -> ServicePlan | list[Diagnostic]:
    """``plan`` as the ruler of ``ruler`` evaluates it, or why the spec cannot be evaluated
    there (one diagnostic per problem, naming ``obsgen.yaml``'s field and the spec's)."""
    changes: dict[str, object] = {}
    if ruler.deduplication == "rules":
        changes["copy_labels"] = ruler.copy_labels
        changes["replica_labels"] = tuple(sorted(ruler.replica_labels))
    delay = ruler.evaluation_delay
    prometheus = spec.spec.prometheus
    if delay and prometheus.query_offset is None:
        why = targets.missing(targets.QUERY_OFFSET, prometheus.floor)
        if why is not None:
            return [
                Diagnostic(
                    plan.source,
                    "spec.prometheus.version",
                    f"{CONFIG_FILE} ruler.evaluationDelay asks for rule groups' {why}",
                )
            ]
        if delay % prometheus.evaluation_interval:
            return [
                Diagnostic(
                    plan.source,
                    "spec.prometheus.evaluationInterval",
                    f"{CONFIG_FILE} ruler.evaluationDelay {format_duration_ms(delay)} is not a "
                    "multiple of spec.prometheus.evaluationInterval "
                    f"{format_duration_ms(prometheus.evaluation_interval)}: the SLO increments "
                    "would no longer tile the window",
                )
            ]
        changes["query_offset_ms"] = delay
    return dataclasses.replace(plan, **changes) if changes else plan  # type: ignore[arg-type]
