"""Shared pieces of the GPU families, which read the NVML sidecar's series (names:
nvml_exporter/README.md, Metrics): label sets, the guarded reading of one GPU, the panel
gauge of one device metric and the one-gauge firing and quiet cases.

Device series carry ``uuid`` and ``gpu``; MIG instance series add ``mig_uuid`` and
``gpu_instance_id``; series are selected by ``plan.gpu_matchers`` (the sidecar's container and
the ``job`` of obsgen's GPU PodMonitor), never by a pod-name pattern.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.builders.guard_inputs import GPU_KEYS, Condition, SignalInput, Source
from generator.builders.panel_parts import kept_by, pod_filter, scope
from generator.builders.promtool_series import (
    BASE_PER_MIN,
    UUID,
    Klass,
    expected_alert,
    fire_and_quiet,
    healthy,
    sidecar_labels,
)
from generator.promql import Matcher, selector

if TYPE_CHECKING:
    from generator.builders.common import Rule
    from generator.plan import ServicePlan

GPU_LABELS = ("namespace", "pod", "uuid")
MIG_LABELS = (*GPU_LABELS, "mig_uuid", "gpu_instance_id")
POD_LABELS = ("namespace", "pod")
# Dashboard grouping and legend of per-GPU panels.
GPU_BY = ("gpu", "pod", "uuid")
MIG_BY = (*GPU_BY, "mig_uuid")
GPU_LEGEND = "{{pod}} GPU {{gpu}}"
NOT_SAID = (
    "and the exporter does not report the reading unsupported there "
    f"({naming.GPU_READING_UNSUPPORTED}): NVML refused it with another error, which the "
    "sidecar's log names (each refused reading is logged once at info)."
)


def unsupported(plan: ServicePlan, *readings: str) -> Source:
    """The exporter's ``gpu_reading_unsupported`` series of ``readings`` (NVML answered
    NotSupported, or lacks the call, on that GPU: its series are omitted on purpose)."""
    value = "|".join(readings)
    op = "=~" if len(readings) > 1 else "="
    return Source(
        naming.GPU_READING_UNSUPPORTED, (*plan.gpu_matchers, Matcher("reading", op, value))
    )


def reading_input(
    plan: ServicePlan,
    signal: str,
    needs: tuple[tuple[Source, ...], ...],
    alert: str,
    excused: Source,
    remedy: str,
    covers: tuple[Source, ...] = (),
) -> SignalInput:
    """The guarded reading ``signal`` of each GPU that answers NVML (``gpu_device_up == 1``),
    read by ``alert``; excused where the exporter reports it unsupported."""
    return SignalInput(
        signal,
        needs[0][0].metric,
        GPU_KEYS,
        needs,
        (Condition((Source(naming.GPU_DEVICE_UP, plan.gpu_matchers),), 1),),
        (alert,),
        covers=covers,
        excused=(excused,),
        remedy=remedy,
    )


def runbook_series(plan: ServicePlan, metric: str) -> str:
    """A runbook's selector of the sidecar's ``metric``, in the alert's cluster (the
    placeholder the on-call replaces, with a cluster label)."""
    label = plan.cluster_label
    cluster = (Matcher(label, "=", naming.CLUSTER_PLACEHOLDER),) if label else ()
    return selector(metric, (*plan.gpu_matchers, *cluster))


def gauge(
    plan: ServicePlan,
    metric: str,
    extra: tuple[Matcher, ...] = (),
    labels: tuple[str, ...] = GPU_BY,
) -> str:
    """A dashboard query: ``metric`` of the sidecar, max per ``labels`` (GPU, pod, uuid),
    under the dashboard's namespace, cluster and pod variables."""
    return f"max{kept_by(plan, *labels)} ({selector(metric, (*plan.gpu_matchers, *scope(plan), pod_filter(), *extra))})"


def device_cases(
    plan: ServicePlan,
    key: str,
    rule: Rule,
    metric: str,
    values: str,
    value: float | None,
    extra: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """``rule`` fires when one GPU's ``metric`` (labels ``extra`` added) reads ``values``
    (promtool notation) on a healthy service, with value ``value`` (None: not checked), and
    stays quiet on a healthy one; ``key``: the family, for when the cases are checked."""
    base = [Klass(BASE_PER_MIN)]
    gpu = sidecar_labels(plan)
    out = {k: gpu[k] for k in plan.keeping(*GPU_LABELS) if k in gpu} | {"uuid": UUID}
    fire = healthy(plan, base)
    fire.gauge(metric, {**gpu, "uuid": UUID, **(extra or {})}, values)
    expected = [expected_alert(rule, out | dict(extra or {}), value)]
    return fire_and_quiet(plan, key, rule["alert"], fire, healthy(plan, base), expected)
