"""dcgm-exporter as the GPU source: records that turn its series into the sidecar's names,
units and labels (``pod_gpu:<sidecar metric>:dcgm``), and the guard of each field it reads.

Each record keeps GPUs of the service's pods only: dcgm-exporter's pod mapping labels a
series with the model pod (``exported_pod``/``exported_namespace`` behind a ServiceMonitor
without honorLabels) and the pod must be in the owner record (:mod:`generator.parts.pods`).
Units: frame buffer MiB × 2^20 = bytes, mJ / 1000 = J, MHz × 10^6 = Hz, % / 100 = ratio.
Fields and labels: :mod:`generator.dcgm_fields`. A lost GPU is inferred (:func:`device_up`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator import dcgm_fields as f
from generator import naming
from generator.families.gpu import record_name
from generator.parts.common import record_rule, recorded
from generator.parts.guard_inputs import Condition, SignalInput, Source
from generator.parts.pods import OWNER_RECORD
from generator.promql import Matcher, by, selector

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import ServicePlan

LOST_WINDOW = "30m"  # a GPU reported within it and not now, its exporter up, is lost
XID_WINDOW = "10m"  # an Xid is recent while the last Xid differs from its value this long ago
GPU = ("namespace", "pod", "uuid", "gpu")
MIG = (*GPU, "gpu_instance_id")
# Extra records: the raw clock-event bitmask and the last Xid value per GPU.
CLOCK_BITMASK = "pod_gpu:dcgm_clock_event_reasons:dcgm"
XID_LAST = "pod_gpu:dcgm_xid_last:dcgm"
PRESENT = "pod_gpu:dcgm_present:dcgm"


def pod_label(plan: ServicePlan, label: str) -> str:
    """The label dcgm-exporter's pod mapping writes ``label`` (pod, namespace) under."""
    return label if plan.dcgm_honor_labels else f"{f.EXPORTED}{label}"


def raw(plan: ServicePlan, *names: str, extra: tuple[Matcher, ...] = ()) -> str:
    """Selector of dcgm-exporter series named ``names`` (one name, or a ``__name__`` regex),
    in the service's namespace when the spec fixes it."""
    ns = (Matcher(pod_label(plan, "namespace"), "=", plan.namespace),) if plan.namespace else ()
    m = (*plan.gpu_matchers, *ns, *extra)
    if len(names) == 1:
        return selector(names[0], m)
    return selector("", (Matcher("__name__", "=~", "|".join(names)), *m))


def sources(plan: ServicePlan, field: f.Field) -> tuple[Source, ...]:
    """One guard source per name of ``field``."""
    return tuple(Source(raw_name, _raw_matchers(plan)) for raw_name in field.names)


def _raw_matchers(plan: ServicePlan) -> tuple[Matcher, ...]:
    ns = (Matcher(pod_label(plan, "namespace"), "=", plan.namespace),) if plan.namespace else ()
    return (*plan.gpu_matchers, *ns)


def _relabel(plan: ServicePlan, expr: str) -> str:
    """``expr`` with the model pod's labels as ``pod``/``namespace`` and ``uuid``,
    ``gpu_instance_id`` named as the sidecar names them."""
    out = expr
    pairs = [("uuid", f.UUID), ("gpu_instance_id", f.GPU_INSTANCE)]
    if not plan.dcgm_honor_labels:
        pairs += [("pod", pod_label(plan, "pod")), ("namespace", pod_label(plan, "namespace"))]
    for target, source in pairs:
        out = f'label_replace({out}, "{target}", "$1", "{source}", "(.+)")'
    return out


def attributed(plan: ServicePlan, expr: str, labels: tuple[str, ...] = GPU) -> str:
    """``max by (labels)`` of ``expr`` relabelled, kept to the service's pods."""
    pods = ", ".join(plan.keeping("namespace", "pod"))
    owner = recorded(plan, OWNER_RECORD)
    return f"max{by(plan.keeping(*labels))} ({_relabel(plan, expr)} and on ({pods}) {owner})"


def _rec(plan: ServicePlan, metric: str) -> str:
    return recorded(plan, record_name(metric))


def _whole(plan: ServicePlan, field: f.Field) -> str:
    return " or ".join(raw(plan, n, extra=(Matcher(f.GPU_INSTANCE, "=", ""),)) for n in field.names)


def _instance(plan: ServicePlan, field: f.Field) -> str:
    return " or ".join(
        raw(plan, n, extra=(Matcher(f.GPU_INSTANCE, "!=", ""),)) for n in field.names
    )


def _memory(plan: ServicePlan, mig: bool) -> list[Rule]:
    part, labels = (_instance, MIG) if mig else (_whole, GPU)
    prefix = "gpu_mig_memory" if mig else "gpu_memory"
    names = {k: f"{prefix}_{k}_bytes" for k in ("free", "used", "reserved", "total")}
    fields = {"free": f.FB_FREE, "used": f.FB_USED, "reserved": f.FB_RESERVED}
    out = [
        record_rule(
            plan,
            record_name(names[k]),
            f"{attributed(plan, part(plan, field), labels)} * {f.MIB}",
        )
        for k, field in fields.items()
    ]
    free, used, reserved = (_rec(plan, names[k]) for k in ("free", "used", "reserved"))
    # Releases before 4.4.1-4.6.0 list no reserved field: used memory includes it there.
    total = f"{free} + {used} + ({reserved} or {free} * 0)"
    return [*out, record_rule(plan, record_name(names["total"]), total)]


def _scaled(plan: ServicePlan, metric: str, field: f.Field, factor: str) -> Rule:
    expr = attributed(plan, " or ".join(raw(plan, n) for n in field.names))
    return record_rule(plan, record_name(metric), f"{expr}{factor}")


def _labelled(plan: ServicePlan, metric: str, fields: dict[str, f.Field], label: str) -> Rule:
    """One record of ``metric`` from several fields, each under its own ``label`` value."""
    parts = [
        f'label_replace({attributed(plan, raw(plan, field.name))}, "{label}", "{value}", "", "")'
        for value, field in fields.items()
    ]
    return record_rule(plan, record_name(metric), "\nor\n".join(parts))


def _clock_events(plan: ServicePlan) -> list[Rule]:
    bitmask = record_rule(
        plan,
        CLOCK_BITMASK,
        attributed(plan, " or ".join(raw(plan, n) for n in f.CLOCK_EVENTS.names)),
    )
    mask = recorded(plan, CLOCK_BITMASK)
    reasons = [
        f'label_replace(floor({mask} / {bit}) % 2, "reason", "{reason}", "", "")'
        for bit, reason in f.CLOCK_EVENT_BITS
    ]
    return [
        bitmask,
        record_rule(plan, record_name(naming.GPU_CLOCK_EVENT_ACTIVE), "\nor\n".join(reasons)),
    ]


def _xid(plan: ServicePlan) -> list[Rule]:
    """The last Xid per GPU, and 1 per (GPU, ``xid``) with an Xid within :data:`XID_WINDOW`:
    the last-value gauge now differs from its value then (a repeat of the same Xid is
    invisible), or the windowed count field, where enabled, counts one."""
    last = record_rule(plan, XID_LAST, attributed(plan, raw(plan, f.XID_ERRORS.name)))
    rec = recorded(plan, XID_LAST)
    labels = by(plan.keeping(*GPU))
    changed = f'count_values{labels} ("xid", ({rec} != 0) != {rec} offset {XID_WINDOW})'
    counted = (
        f"clamp_max({attributed(plan, raw(plan, f.XID_COUNT.name), (*GPU, f.XID_LABEL))} > 0, 1)"
    )
    return [
        last,
        record_rule(plan, record_name(naming.GPU_XID_RECENT), f"{changed}\nor\n{counted}"),
    ]


def device_up(plan: ServicePlan) -> str:
    """1 per GPU of the service's pods dcgm-exporter reports; 0 for one it reported within
    :data:`LOST_WINDOW` (:data:`PRESENT`) whose UUID it reports no more (under any pod) while
    its target is up, and for one with a recent Xid 79 (fallen off the bus)."""
    names = tuple(n for field in f.PRESENCE for n in field.names)
    present = recorded(plan, PRESENT)
    labels = by(plan.keeping(*GPU))
    seen = f"max_over_time({present}[{LOST_WINDOW}])"
    everywhere = selector("", (Matcher("__name__", "=~", "|".join(names)), *plan.gpu_matchers))
    reporting = f'group by (uuid) (label_replace({everywhere}, "uuid", "$1", "{f.UUID}", "(.+)"))'
    up = selector("up", plan.gpu_matchers)
    xid79 = recorded(plan, record_name(naming.GPU_XID_RECENT), Matcher("xid", "=", "79"))
    on = ", ".join(plan.keeping(*GPU))
    return (
        f"(group{labels} ({present}) unless on ({on}) {xid79})\n"
        f"or\ngroup{labels} (({seen} unless on (uuid) {reporting}) and on (instance) ({up} == 1)) * 0\n"
        f"or\ngroup{labels} ({xid79}) * 0"
    )


def _present(plan: ServicePlan) -> Rule:
    """1 per GPU of the service's pods and exporter ``instance`` reporting a presence field."""
    names = tuple(n for field in f.PRESENCE for n in field.names)
    return record_rule(plan, PRESENT, attributed(plan, raw(plan, *names), (*GPU, "instance")))


def exporter_up(plan: ServicePlan) -> str:
    """1 per pod with a GPU dcgm-exporter reports (or lost: :func:`device_up`), 0 per running
    pod of the service (its target up) with none: the exporter on its node is down, its pod
    mapping off, or the pod holds no GPU."""
    pods = by(plan.keeping("namespace", "pod"))
    on = ", ".join(plan.keeping("namespace", "pod"))
    running = f"{selector('up', (*plan.matchers, Matcher('pod', '!=', '')))} == 1"
    owner = recorded(plan, OWNER_RECORD)
    return (
        f"group{pods} ({_rec(plan, naming.GPU_DEVICE_UP)})\n"
        f"or\ngroup{pods} ({running} and on ({on}) {owner}) * 0"
    )


def records(plan: ServicePlan) -> list[Rule]:
    """Every record of the dcgm source, each before the records and alerts that read it."""
    health = {
        "uncorrected": f.ECC_DBE_AGGREGATE,
    }
    remapped = {
        "uncorrectable": f.UNCORRECTABLE_REMAPPED_ROWS,
        "correctable": f.CORRECTABLE_REMAPPED_ROWS,
    }
    retired = {"double_bit_ecc": f.RETIRED_DBE, "single_bit_ecc": f.RETIRED_SBE}
    nvlink = {
        "replay": f.NVLINK_REPLAY,
        "recovery": f.NVLINK_RECOVERY,
        "crc_flit": f.NVLINK_CRC_FLIT,
        "crc_data": f.NVLINK_CRC_DATA,
    }
    return [
        *_memory(plan, mig=False),
        *_memory(plan, mig=True),
        _scaled(plan, naming.GPU_TEMPERATURE, f.GPU_TEMP, ""),
        _scaled(plan, naming.GPU_POWER_USAGE, f.POWER_USAGE, ""),
        _scaled(plan, naming.GPU_ENERGY, f.ENERGY, " / 1000"),
        _scaled(plan, naming.GPU_SM_CLOCK, f.SM_CLOCK, " * 1e+06"),
        _scaled(plan, naming.GPU_UTILIZATION, f.GPU_UTIL, " / 100"),
        *_clock_events(plan),
        *_xid(plan),
        _labelled(plan, naming.GPU_ECC_ERRORS, health, "error_type"),
        _labelled(
            plan, naming.GPU_ECC_VOLATILE_ERRORS, {"uncorrected": f.ECC_DBE_VOLATILE}, "error_type"
        ),
        _scaled(plan, naming.GPU_ROW_REMAP_FAILURE, f.ROW_REMAP_FAILURE, ""),
        _scaled(plan, naming.GPU_ROW_REMAP_PENDING, f.ROW_REMAP_PENDING, ""),
        _labelled(plan, naming.GPU_REMAPPED_ROWS, remapped, "cause"),
        _labelled(plan, naming.GPU_RETIRED_PAGES, retired, "cause"),
        _scaled(plan, naming.GPU_RETIRED_PAGES_PENDING, f.RETIRED_PENDING, ""),
        _labelled(plan, naming.GPU_NVLINK_ERRORS, nvlink, "counter"),
        _scaled(plan, naming.GPU_PCIE_REPLAYS, f.PCIE_REPLAY, ""),
        _present(plan),
        record_rule(plan, record_name(naming.GPU_DEVICE_UP), device_up(plan)),
        record_rule(plan, record_name(naming.GPU_EXPORTER_UP), exporter_up(plan)),
    ]


def field_input(
    plan: ServicePlan, signal: str, fields: tuple[f.Field, ...], alert: str
) -> SignalInput:
    """The guard of ``fields`` (each under any of its names) read by ``alert``: dcgm-exporter
    reports the service's GPUs (one of :data:`generator.dcgm_fields.PRESENCE`) but not these;
    its message names the counters-file line to add."""
    presence = tuple(s for field in f.PRESENCE for s in sources(plan, field))
    return SignalInput(
        signal,
        fields[0].name,
        (),
        tuple(sources(plan, field) for field in fields),
        (Condition(presence),),
        (alert,),
        remedy=f.remedy(*fields),
    )
