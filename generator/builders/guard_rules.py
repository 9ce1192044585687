"""Guards against silent alerts: ``ModelSignalMissing`` (inputs) and ``ModelReplicasUnavailable``.

One ``ModelSignalMissing`` rule per input series an enabled alert or SLO reads, gated on that
series being expected; the argument: docs/rules.md, "Guards against silent alerts".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from generator import naming
from generator.families import FAMILIES, gpu, xid_catalog
from generator.parts import replicas
from generator.parts.common import Rule, alert_rule
from generator.parts.guard_inputs import (
    POD_KEYS,
    SERVICE_KEYS,
    Condition,
    SignalInput,
    Source,
    targets_up,
)
from generator.parts.pods import (
    replica_metrics,
    target_pods_selector,
)
from generator.plan import ServicePlan, SLOPlan
from generator.promql import Matcher, by, selector
from generator.signals import histograms, requests
from generator.units import decimal_str


@dataclass(frozen=True)
class Unguarded:
    """A selector an alert reads that no guard watches, and why that is right."""

    source: Source
    reason: str


@dataclass
class _Inputs:
    """Inputs collected in order; the same needs read twice merge their readers."""

    items: list[SignalInput] = field(default_factory=list)

    def add(self, item: SignalInput) -> None:
        for i, old in enumerate(self.items):
            if old.needs == item.needs and old.le == item.le:
                readers = tuple(dict.fromkeys((*old.readers, *item.readers)))
                covers = tuple(dict.fromkeys((*old.covers, *item.covers)))
                self.items[i] = replace(old, readers=readers, covers=covers)
                return
        self.items.append(item)


def _slo_readers(s: SLOPlan) -> list[str]:
    """The alerts reading SLO ``s``'s events, each named with the SLO; a recorded-only SLO
    reads as ``SLO <name>``."""
    alerts = [naming.ALERT_ERROR_BUDGET_BURN] if s.tiers else []
    if s.budget_levels:
        alerts.append(naming.ALERT_ERROR_BUDGET_LOW)
    return [f"{a} (SLO {s.name})" for a in alerts] or [f"SLO {s.name}"]


def _request_inputs(plan: ServicePlan, out: _Inputs) -> None:
    readers = []
    if "error_ratio" in plan.alerts:
        readers.append(naming.ALERT_ERROR_RATIO)
    if "slow_requests" in plan.alerts:
        readers.append(naming.ALERT_SLOW_REQUESTS)  # its minimum-events count
    cache = plan.prefix_cache
    if "prefix_cache" in plan.alerts and cache is not None and cache.gauge is not None:
        readers.append(naming.ALERT_PREFIX_CACHE)  # its traffic gate
    readers += [r for s in plan.slos if s.histogram is None for r in _slo_readers(s)]
    if not readers:
        return
    # The slow-request alert reads the count alone (its minimum events), never failures.
    counted = tuple(r for r in readers if r != naming.ALERT_SLOW_REQUESTS)
    for item in requests.guard(plan, tuple(readers), counted):
        out.add(item)


def _histogram_users(plan: ServicePlan) -> dict[str, list[tuple[str, float | None]]]:
    """Histogram key → (reader, bound or None for every bucket) of each alert (what its family
    reads, :attr:`generator.families.base.Family.histogram_reads`) and SLO."""
    users: dict[str, list[tuple[str, float | None]]] = {}
    for family in FAMILIES:
        for read in family.histogram_reads(plan):
            users.setdefault(read.key, []).append((read.reader, read.bound))
    for s in plan.slos:
        if s.histogram is not None and s.threshold_bound is not None:
            bound = s.threshold_bound
            users.setdefault(s.histogram.key, []).extend((r, bound) for r in _slo_readers(s))
    for s in plan.goodput:  # a missing target leaves the union bound unrecorded: guard each
        alerts = [naming.ALERT_GOODPUT_BURN] if s.tiers else []
        if s.budget_levels:
            alerts.append(naming.ALERT_GOODPUT_BUDGET_LOW)
        readers = [f"{a} (SLO {s.name})" for a in alerts] or [f"SLO {s.name}"]
        for t in s.targets:
            users.setdefault(t.histogram.key, []).extend((r, t.bound) for r in readers)
    return users


def _family_inputs(plan: ServicePlan, out: _Inputs, sidecar: bool = False) -> None:
    for family in FAMILIES:
        for item in family.inputs(plan) if family.sidecar == sidecar else ():
            out.add(item)


def _gpu_inputs(plan: ServicePlan, out: _Inputs) -> None:
    if not plan.gpu_exporter:
        return
    if plan.gpu_source == "dcgm":  # each family guards the dcgm fields it reads
        _family_inputs(plan, out, sidecar=True)
        return
    m = plan.gpu_matchers
    nvml_up = Source(naming.GPU_EXPORTER_UP, m)
    device_up = Source(naming.GPU_DEVICE_UP, m)
    sidecar = "the NVML sidecar (container nvml-exporter, scraped by the obsgen GPU PodMonitor)"
    # The exporter's own health, read by GPUExporterDown and as GPUDeviceLost's condition.
    exporter_readers = tuple(
        a
        for k, a in (
            ("gpu_exporter_down", naming.ALERT_GPU_EXPORTER_DOWN),
            ("gpu_device_lost", naming.ALERT_GPU_LOST),
        )
        if k in plan.alerts
    )
    if exporter_readers:
        out.add(
            SignalInput(
                "gpuExporter",
                nvml_up.metric,
                POD_KEYS,
                ((nvml_up,),),
                (Condition((Source("up", m),), 1),),
                exporter_readers,
                remedy=f"The target scraped as the GPU exporter is not {sidecar}: check spec.gpu.selector.",
            )
        )
    device_alerts = {
        "gpu_memory_headroom": naming.ALERT_GPU_MEMORY_HEADROOM,
        "gpu_temperature": naming.ALERT_GPU_TEMPERATURE,
        "gpu_xid_errors": naming.ALERT_GPU_XID,
        "gpu_device_lost": naming.ALERT_GPU_LOST,
        "gpu_hardware_slowdown": naming.ALERT_GPU_SLOWDOWN,
        **{tier.key: tier.alert for tier in xid_catalog.TIERS},
    }
    readers = tuple(a for k, a in device_alerts.items() if k in plan.alerts)
    # Xid counters exist from a GPU's first Xid on: read beside the devices, never guarded.
    xids = [Source(naming.GPU_XID_ERRORS, m)] + [
        Source(naming.GPU_XID_ERRORS, (*m, *gpu.xid_codes(tier.codes)))
        for tier in xid_catalog.TIERS
        if tier.key in plan.alerts
    ]
    if readers:
        out.add(
            SignalInput(
                "gpuDevices",
                device_up.metric,
                POD_KEYS,
                ((device_up,),),
                (Condition((nvml_up,), 1),),
                readers,
                covers=tuple(xids),
                remedy="NVML works but the sidecar sees no GPU: it does not share the model's GPUs "
                "(spec.gpu.visibility, visibleDevices or claim).",
            )
        )
    _family_inputs(plan, out, sidecar=True)


def _replica_inputs(plan: ServicePlan, out: _Inputs) -> None:
    """kube-state-metrics' desired replicas, guarded where ``spec.deployment.replicas``
    allows 0: without them no alert can tell the service scaled to zero from one that lost
    its pods, and the rules say nothing (:mod:`generator.parts.replicas`)."""
    if plan.replicas > 0:
        return
    readers = tuple(
        name
        for key, name in (
            ("target_down", naming.ALERT_TARGET_DOWN),
            ("replicas_unavailable", naming.ALERT_REPLICAS_UNAVAILABLE),
            ("cold_start", naming.ALERT_COLD_START),
        )
        if key in plan.alerts
    )
    if not readers:
        return
    desired = replica_metrics(plan)[0]
    out.add(
        SignalInput(
            "desiredReplicas",
            desired,
            SERVICE_KEYS,
            ((Source(desired, replicas.workload_matchers(plan)),),),
            (targets_up(plan),),
            readers,
            remedy=f"kube-state-metrics reports no {desired} for {plan.workload_kind}/"
            f"{plan.deployment_name}: spec.deployment.replicas allows 0, so without it nothing "
            "tells the service scaled to zero from one that lost its pods, and "
            f"{naming.ALERT_TARGET_DOWN} stays silent when no pod is left. Scrape "
            "kube-state-metrics (kube-prometheus-stack does), or check spec.deployment.name "
            "and kind.",
        )
    )


def _scoped(plan: ServicePlan, item: SignalInput) -> SignalInput:
    """``item`` guarded for the whole service (no ``namespace`` key) when one of its series
    lives in another namespace than the service's targets (``spec.metrics.<x>.selector``):
    matched on ``namespace``, gate and series would never meet."""
    if item.keys != SERVICE_KEYS:
        return item
    for source in item.sources:
        for m in source.matchers:
            if m.label == "namespace" and m.op == "=" and m.value != plan.namespace:
                return replace(item, keys=())
    return item


def signal_inputs(plan: ServicePlan, include_ignored: bool = False) -> tuple[SignalInput, ...]:
    """Every input of the plan's enabled alerts and SLOs, in rule order, one per distinct series.

    Inputs whose signal ``spec.alerts.signalMissing.ignore`` lists are left out unless
    ``include_ignored``. Empty when the guards are disabled (and not ``include_ignored``).
    """
    out = _Inputs()
    _request_inputs(plan, out)
    users = _histogram_users(plan)
    for key in sorted(users):
        for item in histograms.guard(plan, plan.histograms[key], users[key]):
            out.add(item)
    _family_inputs(plan, out)
    _replica_inputs(plan, out)
    _gpu_inputs(plan, out)
    items = tuple(_scoped(plan, i) for i in out.items)
    if include_ignored:
        return items
    guard = plan.alerts.get("signal_missing")
    if guard is None:
        return ()
    ignored = set(guard.params.get("ignore", ()))
    return tuple(i for i in items if i.signal not in ignored)


def unguarded_reads(plan: ServicePlan) -> tuple[Unguarded, ...]:
    """Selectors the plan's alerts read that no guard watches, each with the reason.

    ``up`` is what the gates read (``ModelTargetDown`` and ``GPUExporterDown`` cover it);
    kube-state-metrics' limits and replica counts have fallbacks in the rules themselves.
    """
    found = [
        Unguarded(Source("up", plan.matchers), f"the guards' gate; {naming.ALERT_TARGET_DOWN}"),
        Unguarded(
            Source(*target_pods_selector(plan)),
            "the second source of the pod owner record (the pods guard watches the record)",
        ),
    ]
    if plan.gpu_exporter:
        found.append(Unguarded(Source("up", plan.gpu_matchers), naming.ALERT_GPU_EXPORTER_DOWN))
    if plan.memory_limit_bytes is not None:
        found.append(
            Unguarded(
                Source(
                    naming.KSM_LIMITS,
                    (*plan.container_matchers, Matcher("resource", "=", "memory")),
                    owned=True,
                ),
                "spec.deployment.memoryLimit stands in",
            )
        )
    desired, available, _ = replica_metrics(plan)
    workload = replicas.workload_matchers(plan)
    found.append(
        Unguarded(
            Source(desired, workload),
            "without kube-state-metrics the rules take spec.deployment.replicas (a min of 0: "
            "the desiredReplicas guard watches it) and count the targets up"
            if plan.replicas == 0
            else "without kube-state-metrics the rules take spec.deployment.replicas and count "
            "the targets up",
        )
    )
    found.append(
        Unguarded(
            Source(available, workload),
            "without kube-state-metrics the targets up are counted instead",
        )
    )
    if plan.activator is not None:
        found.extend(
            Unguarded(
                Source(name, plan.activator.matchers),
                "the activator creates it on the first request it holds for the service, and "
                "may stay out of the request path while pods serve (docs/spec.md, Scale to zero)",
            )
            for name in plan.activator.names
        )
    if plan.spec_decode is not None and "spec_decode" in plan.alerts:
        found.extend(
            Unguarded(
                Source(c.name, c.matchers),
                "the server creates it only while speculative decoding is on "
                "(docs/spec.md, Speculative decoding)",
            )
            for c in plan.spec_decode
        )
    return tuple(found)


# --- rules ---------------------------------------------------------------------------------


def _present(
    plan: ServicePlan, source: Source, keys: Sequence[str], equals: float | None = None
) -> str:
    expr = source.expr(plan)
    if equals is not None:
        expr = f"{expr} == {decimal_str(equals)}"
    return f"group{by(keys)} ({expr})"


def guard_expr(plan: ServicePlan, item: SignalInput) -> str:
    """``<gate> unless on (<keys>) (<present>)``: 1 per key set where the gate holds and the
    input has no series, unless the workload is desired at 0 replicas
    (:func:`generator.parts.replicas.unless_scaled_to_zero`; not for an input guarded for
    the whole service, whose gate holds no namespace). The keys include the cluster label
    (:meth:`ServicePlan.keeping`)."""
    keys = plan.keeping(*item.keys)
    on = f" and on ({', '.join(keys)}) "

    def any_of(sources: Sequence[Source], equals: float | None = None) -> str:
        found = " or ".join(_present(plan, s, keys, equals) for s in sources)
        return f"({found})" if len(sources) > 1 else found  # `or` binds looser than `and`

    gate = on.join(any_of(c.sources, c.equals) for c in item.gate)
    if item.excused:
        gate = f"{gate} unless on ({', '.join(keys)}) {any_of(item.excused)}"
    present = on.join(any_of(group) for group in item.needs)
    expr = f"{gate} unless on ({', '.join(keys)}) ({present})"
    if not set(replicas.keys(plan)) <= set(keys):
        return expr  # guarded for the whole service: no namespace to match the clause on
    # Silent while the workload is desired at 0 replicas, pods still terminating or not.
    return replicas.unless_scaled_to_zero(plan, expr)


def _readers_text(readers: Sequence[str]) -> str:
    if len(readers) == 1:
        return f"{readers[0]} reads it"
    return f"{', '.join(readers[:-1])} and {readers[-1]} read it"


def signal_missing_alerts(plan: ServicePlan) -> list[Rule]:
    """One ``ModelSignalMissing`` rule per input of :func:`signal_inputs`."""
    alert = plan.alerts.get("signal_missing")
    if alert is None:
        return []
    rules = []
    for item in signal_inputs(plan):
        labels = {naming.SIGNAL: item.signal, naming.METRIC: item.metric}
        if item.le is not None:
            labels["le"] = item.le
        rules.append(
            alert_rule(
                plan,
                naming.ALERT_SIGNAL_MISSING,
                guard_expr(plan, item),
                alert.for_ms,
                alert.severity,
                labels,
                signal=item.signal,
                metric=item.metric,
                le=item.le or "",
                selector=" or ".join(selector(s.metric, s.matchers) for s in item.sources),
                per="gpu" if "uuid" in item.keys else "pod" if "pod" in item.keys else "service",
                readers=_readers_text(item.readers),
                remedy=item.remedy,
            )
        )
    return rules


def guard_alerts(plan: ServicePlan) -> list[Rule]:
    """The ``guards`` group's rules: capacity first, then one input guard per signal input."""
    capacity = [r for f in FAMILIES if f.group == "guards" for r in f.rules(plan)]
    return [*capacity, *signal_missing_alerts(plan)]
