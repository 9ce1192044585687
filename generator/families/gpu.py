"""Shared pieces of the GPU families: what they read from either source, label sets, the
guarded reading of one GPU, the panel gauge of one device metric and the one-gauge cases.

Families name the NVML sidecar's series (nvml_exporter/README.md, Metrics); :func:`read`
selects them from the sidecar (``plan.gpu_matchers``: its container and PodMonitor ``job``) or,
under ``spec.gpu.exporter: dcgm``, from the records of :mod:`generator.families.dcgm`, which
turn dcgm-exporter's series into the same names, units and labels. Device series carry
``uuid`` and ``gpu``; MIG instance series add ``gpu_instance_id`` (and ``mig_uuid``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from generator import gap_bridge, naming
from generator.parts import gpu_series
from generator.parts.common import counter_target, identity_matchers
from generator.parts.guard_inputs import GPU_KEYS, Condition, SignalInput, Source
from generator.parts.panel_parts import kept_by, pod_filter, scope
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    expected_alert,
    fire_and_quiet,
)
from generator.promql import Matcher, born, by, selector
from generator.signals.healthy import healthy

if TYPE_CHECKING:
    from generator.parts.common import Rule
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


def dcgm(plan: ServicePlan) -> bool:
    """Whether the plan reads dcgm-exporter (``spec.gpu.exporter: dcgm``)."""
    return plan.gpu_source == "dcgm"


def record_name(metric: str) -> str:
    """The record holding sidecar series ``metric`` computed from dcgm-exporter's."""
    return f"pod_gpu:{metric}:dcgm"


def matchers(plan: ServicePlan) -> tuple[Matcher, ...]:
    """Matchers of the GPU series the families read: the sidecar's, or the dcgm records'."""
    return identity_matchers(plan) if dcgm(plan) else plan.gpu_matchers


def read(plan: ServicePlan, metric: str, *extra: Matcher) -> str:
    """Selector of sidecar series ``metric`` (``extra`` matchers added) from the plan's source."""
    name = record_name(metric) if dcgm(plan) else metric
    return selector(name, (*matchers(plan), *extra))


def xid_codes(codes: tuple[int, ...]) -> tuple[Matcher, ...]:
    """The ``xid`` matcher of ``codes``; none (every Xid) when empty."""
    return (Matcher("xid", "=~", "|".join(str(c) for c in codes)),) if codes else ()


def xid_events(plan: ServicePlan, codes: tuple[int, ...] = ()) -> str:
    """1 per GPU and ``xid`` (of ``codes``; any when empty) the driver reported within 10m:
    the sidecar's counter rose, or was first seen during the sidecar's life (a counter born
    at 1 has no increase: :func:`generator.promql.born`); under dcgm the Xid record
    (:func:`generator.families.dcgm.records`)."""
    labels = by(plan.keeping(*GPU_LABELS, "xid"))
    extra = xid_codes(codes)
    if dcgm(plan):
        return f"max{labels} ({read(plan, naming.GPU_XID_RECENT, *extra)}) > 0"
    m = plan.gpu_matchers
    xid = selector(naming.GPU_XID_ERRORS, (*m, *extra))
    first = born(xid, "10m", counter_target(plan, m, target_labels_only=False))
    out = f"sum{labels} (increase({xid}[10m])) > 0 or sum{labels} ({first}) > 0"
    span = gap_bridge.bridge(plan.max_gap_ms)
    if span is not None:  # a hole in the samples longer than 10m (generator.gap_bridge)
        out += f" or sum{labels} ({gap_bridge.rose(xid, '10m', span)}) > 0"
    return out


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
    return read(plan, metric, *cluster)


def gauge(
    plan: ServicePlan,
    metric: str,
    extra: tuple[Matcher, ...] = (),
    labels: tuple[str, ...] = GPU_BY,
) -> str:
    """A dashboard query: ``metric`` of the sidecar, max per ``labels`` (GPU, pod, uuid),
    under the dashboard's namespace, cluster and pod variables."""
    return f"max{kept_by(plan, *labels)} ({read(plan, metric, *scope(plan), pod_filter(), *extra)})"


def device_cases(
    plan: ServicePlan,
    key: str,
    rule: Rule,
    metric: str,
    values: str,
    value: float | None,
    extra: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """``rule`` fires when one GPU's ``metric`` (a sidecar name, written in the plan's source:
    :mod:`generator.parts.gpu_series`) reads ``values`` (promtool notation) on a healthy
    service, with value ``value`` (None: not checked), and stays quiet on a healthy one;
    ``key``: the family, for when the cases are checked."""
    base = [Klass(BASE_PER_MIN)]
    fire = healthy(plan, base)
    if metric == naming.GPU_MEMORY_FREE:
        gpu_series.memory(plan, fire, values)
    else:
        gpu_series.put(plan, fire, metric, values)
    expected = [expected_alert(rule, gpu_series.alert_labels(plan) | dict(extra or {}), value)]
    return fire_and_quiet(plan, key, rule["alert"], fire, healthy(plan, base), expected)
