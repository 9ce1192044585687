"""``spec.alerts.oomKilled``: ``ModelContainerOOMKilled``, the kernel's OOM killer ended the
model's container (``killed="container"``) or a process inside it (``killed="process"``).

kube-state-metrics' last termination reason and exit code, restart counter (v2.20.0,
docs/metrics/workload/pod-metrics.md; the exit code since v2.7.0) and cAdvisor's
``container_oom_events_total`` (v0.40.0, metrics/prometheus.go; the kubelet's
/metrics/cadvisor since Kubernetes 1.24). Why each is read and how: docs/spec.md, "OOM
kills (``ModelContainerOOMKilled``)"; page: ``templates/runbooks/ModelContainerOOMKilled.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from generator import gap_bridge, naming
from generator.families import memory
from generator.families.base import Family, Role
from generator.parts.common import alert_rule, identity_matchers
from generator.parts.grafana_json import PanelDef, Query, Step
from generator.parts.guard_inputs import (
    SERVICE_KEYS,
    Condition,
    SignalInput,
    Source,
    targets_up,
)
from generator.parts.panel_parts import (
    GREEN,
    RED,
    cluster_filter,
    kept_by,
    named,
    panel_runbook,
    pod_filter,
    scope,
)
from generator.parts.pods import OWNER_RECORD, owned, owned_selector
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    INTERVAL_MS,
    Klass,
    Series,
    alert_test,
    container_labels,
    expected_alert,
)
from generator.parts.windowed_series import Minutes, gauge_group, values_text, without
from generator.promql import Matcher, by, selector
from generator.signals.healthy import healthy
from generator.units import format_duration_ms

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import ServicePlan

KEY = "oom_killed"
ALERT = naming.ALERT_OOM_KILLED
_OOM = Matcher("reason", "=", "OOMKilled")
WINDOW_MS = 600_000
"""What "recent" means (ms): a restart, an OOM event within the last 10m (plus ``for``)."""
SIGKILL = 137
"""128 + SIGKILL (9): the exit code of a container whose main process the kernel killed (the
OOM killer's signal, also a grace period's end or an eviction's)."""
CONTAINER, PROCESS = "container", "process"


def window_ms(plan: ServicePlan) -> int:
    """The alert's window (ms): 10m plus its ``for``, so the condition can hold for ``for``."""
    return WINDOW_MS + plan.alerts[KEY].for_ms


def rise(series: str, window: str) -> str:
    """OOM events each series of a counter gained within ``window``: max − min (a series' first
    sample counts from itself, alike on Prometheus and VictoriaMetrics), or after a reset (the
    kubelet restarted: cAdvisor counts from 0 again) the last value."""
    span = f"{series}[{window}]"
    return (
        f"(max_over_time({span}) - min_over_time({span}) unless resets({span}) > 0)"
        f" or (last_over_time({span}) and resets({span}) > 0)"
    )


def _parts(plan: ServicePlan) -> dict[str, str]:
    """Per pod and container (max over duplicates: two scrape jobs, a new container's series
    beside its predecessor's): ``reason`` (1: last termination OOMKilled), ``restarted``
    (restarts within the window), ``exit`` (last exit code), ``seen`` (the largest OOM count
    in the window), ``new`` (OOM events within it) and ``sigkill`` (exit 137, or no exit
    code at all: kube-state-metrics before v2.7.0)."""
    keys = by(plan.keeping(*memory.POD_LABELS))
    on = ", ".join(plan.keeping(*memory.POD_LABELS))
    window = format_duration_ms(window_ms(plan))
    restarts = selector(naming.KSM_RESTARTS, plan.container_matchers)
    # The restart counter moved within the window: max − min, not increase(). VictoriaMetrics'
    # increase() counts a series' first value (up to 10 × the next step) as an increase from
    # 0, so a restart count of 1 that kube-state-metrics reports anew (its pod moved: a new
    # `instance`) would page for 10 minutes; max − min is the same on both engines.
    rose = f"max_over_time({restarts}[{window}]) - min_over_time({restarts}[{window}])"
    counter = selector(naming.CADVISOR_OOM_EVENTS, plan.container_matchers)
    # Across a hole in the samples longer than the window (generator.gap_bridge): the restart
    # and the OOM events count from the last sample before the window, and the "older kill"
    # exception also sees the counter's last value before it (the old container's series).
    span = gap_bridge.bridge(plan.max_gap_ms)
    seen = f"max_over_time({counter}[{window}])"
    if span is not None:
        last = f"last_over_time({counter}[{span}] offset {window})"
        seen = f"({seen} >= {last} or {last} or {seen})"  # the larger; either alone
    parts = {
        "reason": f"max{keys} {owned_selector(plan, naming.KSM_LAST_TERMINATED, _OOM)}",
        "restarted": f"max{keys} {owned(plan, gap_bridge.widest(rose, restarts, window, span))}",
        "exit": f"max{keys} {owned_selector(plan, naming.KSM_LAST_EXIT_CODE)}",
        "seen": f"max{keys} {owned(plan, seen)}",
        "new": f"max{keys} {owned(plan, gap_bridge.widest(rise(counter, window), counter, window, span))}",
    }
    parts["sigkill"] = (
        f"({parts['exit']} == {SIGKILL} or {parts['reason']} unless on ({on}) {parts['exit']})"
    )
    return parts


def rules(plan: ServicePlan) -> list[Rule]:
    """Two rules of ``ModelContainerOOMKilled``, per pod and container:

    ``killed="container"`` (value 1): the container restarted within the window, its last
    termination is ``OOMKilled`` with exit code 137, unless cAdvisor's counter shows an older
    OOM kill and none within the window (the reason is left over from a process killed
    earlier: the runtime marks the container's exit so, whatever ends it). Without the counter
    (not scraped) the reason and the exit code decide alone.

    ``killed="process"`` (value: OOM events within the window): the counter rose and the
    container was not OOM-killed as above (it kept running, or ended on SIGTERM or by itself).
    """
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    on = ", ".join(plan.keeping(*memory.POD_LABELS))
    p = _parts(plan)
    killed = f"{p['reason']} == 1\nand on ({on}) {p['restarted']} > 0\nand on ({on}) {p['sigkill']}"
    container = f"{killed}\nunless on ({on}) ({p['seen']} > 0 unless on ({on}) {p['new']} > 0)"
    process = f"{p['new']} > 0\nunless on ({on}) ({killed})"
    window = format_duration_ms(window_ms(plan))
    text = {"window": window, "counter": naming.CADVISOR_OOM_EVENTS}
    return [
        alert_rule(
            plan,
            ALERT,
            expr,
            alert.for_ms,
            alert.severity,
            {naming.KILLED: killed_what},
            killed=killed_what,
            **text,
        )
        for killed_what, expr in ((CONTAINER, container), (PROCESS, process))
    ]


# --- generated promtool cases ---------------------------------------------------------------

_EVENT = 5
"""The test step (minute) of the event: the restart; a counted OOM kill one step before."""
_OLD, _NEW = "/kubepods/burstable/pod-uid/a1", "/kubepods/burstable/pod-uid/b2"
"""cAdvisor's ``id`` of the container before and after its restart (a new cgroup)."""
_KUBELET = {"job": "kubelet", "metrics_path": "/metrics/cadvisor"}


def _counter(plan: ServicePlan, s: Series, cid: str, values: Minutes, **target: str) -> None:
    """A cAdvisor OOM counter series of the container instance ``cid`` (``id`` label)."""
    labels = {**container_labels(plan), **_KUBELET, "instance": "10.0.0.9:10250", **target}
    s.gauge(naming.CADVISOR_OOM_EVENTS, {**labels, "id": cid}, values_text(values))


def _scenario(
    plan: ServicePlan,
    length: int,
    *,
    old: Minutes | None,
    restart: bool,
    reason: str | None = None,
    exit_code: int | None = None,
    counted: bool = True,
) -> Series:
    """A healthy service whose container (instance ``_OLD``, its OOM counter ``old``) is
    followed at :data:`_EVENT` by a new one (counter at 0) when ``restart``, with the last
    termination ``reason`` and ``exit_code`` from then on; ``counted`` False: no cAdvisor OOM
    counter at all."""
    s = healthy(plan, [Klass(BASE_PER_MIN)], length)
    pod = container_labels(plan)
    without(s, naming.CADVISOR_OOM_EVENTS)
    before: Minutes = [None] * _EVENT
    if restart:
        s.gauge(naming.KSM_RESTARTS, pod, values_text([0.0] * _EVENT + [1.0] * (length - _EVENT)))
    if reason is not None:
        labels = {**pod, "reason": reason}
        s.gauge(
            naming.KSM_LAST_TERMINATED, labels, values_text([*before, *[1.0] * (length - _EVENT)])
        )
    if exit_code is not None:
        codes = [*before, *[float(exit_code)] * (length - _EVENT)]
        s.gauge(naming.KSM_LAST_EXIT_CODE, pod, values_text(codes))
    if counted and old is not None:
        _counter(plan, s, _OLD, [*old, *[None] * (length - len(old))])
    if counted and restart:
        _counter(plan, s, _NEW, [*before, *[0.0] * (length - _EVENT)])
    return s


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Fires on a container OOM-killed and restarted (its kill counted, or lost with its
    cgroup), on a process OOM-killed in a running container (counted by two scrape jobs:
    once); quiet on a drain (exit 143) and on a SIGKILL (exit 137) after a process was killed
    long ago, on a SIGKILL without the OOMKilled reason and on a healthy service. Without
    the counter, a SIGKILL with the reason still fires and a drain stays quiet."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    by_kill = {r["labels"][naming.KILLED]: r for r in rules(plan)}
    out = memory.out_labels(plan, container_labels(plan))
    # Checked 3 steps after the event plus `for`: the window (10m + for) still holds the
    # samples before the event, far from both of its ends.
    at = (_EVENT + 3) * INTERVAL_MS + alert.for_ms
    length = at // INTERVAL_MS + 5
    zeros: Minutes = [0.0] * _EVENT
    killed_counted: Minutes = [0.0] * (_EVENT - 1) + [1.0]
    long_ago: Minutes = [1.0] * _EVENT
    name = ALERT

    def container(value: float = 1.0) -> list[dict[str, Any]]:
        return [expected_alert(by_kill[CONTAINER], out, value)]

    def group(title: str, s: Series, expected: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return gauge_group(f"{name}: {title}", s, length, [alert_test(at, name, [*expected])])

    child = healthy(plan, [Klass(BASE_PER_MIN)], length)
    without(child, naming.CADVISOR_OOM_EVENTS)
    rising = [*zeros, *[1.0] * (length - _EVENT)]
    _counter(plan, child, _OLD, rising)
    _counter(
        plan, child, _OLD, rising, job="cadvisor", metrics_path="/metrics", endpoint="cadvisor"
    )
    return [
        group(
            "a container OOM-killed and restarted, its kill counted, fires",
            _scenario(
                plan,
                length,
                old=killed_counted,
                restart=True,
                reason="OOMKilled",
                exit_code=SIGKILL,
            ),
            container(),
        ),
        group(
            "a container OOM-killed and restarted, its count lost with its cgroup, fires",
            _scenario(plan, length, old=zeros, restart=True, reason="OOMKilled", exit_code=SIGKILL),
            container(),
        ),
        group(
            "a process OOM-killed in a running container, scraped by two jobs, counted once, fires",
            child,
            [expected_alert(by_kill[PROCESS], out, 1.0)],
        ),
        group(
            "a drain (exit 143) after a process was OOM-killed long ago stays quiet",
            _scenario(plan, length, old=long_ago, restart=True, reason="OOMKilled", exit_code=143),
            [],
        ),
        group(
            "a SIGKILL (exit 137) after a process was OOM-killed long ago stays quiet",
            _scenario(
                plan, length, old=long_ago, restart=True, reason="OOMKilled", exit_code=SIGKILL
            ),
            [],
        ),
        group(
            "a SIGKILL (exit 137) without the OOMKilled reason stays quiet",
            _scenario(plan, length, old=zeros, restart=True, reason="Error", exit_code=SIGKILL),
            [],
        ),
        group(
            "a healthy container stays quiet",
            _scenario(plan, length, old=[0.0] * length, restart=False),
            [],
        ),
        group(
            "without the OOM counter, an OOMKilled SIGKILL (exit 137) fires",
            _scenario(
                plan,
                length,
                old=None,
                restart=True,
                reason="OOMKilled",
                exit_code=SIGKILL,
                counted=False,
            ),
            container(),
        ),
        group(
            "without the OOM counter, an OOMKilled drain (exit 143) stays quiet",
            _scenario(
                plan,
                length,
                old=None,
                restart=True,
                reason="OOMKilled",
                exit_code=143,
                counted=False,
            ),
            [],
        ),
    ]


# --- guarded inputs, panel, runbook ---------------------------------------------------------


def inputs(plan: ServicePlan) -> list[SignalInput]:
    """The pods, the restart counter (the termination reason and exit code, absent while
    healthy, beside it) and cAdvisor's OOM counter of the container."""
    if KEY not in plan.alerts:
        return []
    m = plan.container_matchers
    reason = Source(naming.KSM_LAST_TERMINATED, (*m, _OOM), owned=True)
    pods, restarts = memory.restart_inputs(plan, ALERT, reason)
    exit_code = Source(naming.KSM_LAST_EXIT_CODE, m, owned=True)
    restarts = replace(restarts, covers=(*restarts.covers, exit_code))
    attributed = (targets_up(plan), Condition((Source(OWNER_RECORD, identity_matchers(plan)),)))
    events = SignalInput(
        "oomEvents",
        naming.CADVISOR_OOM_EVENTS,
        SERVICE_KEYS,
        ((Source(naming.CADVISOR_OOM_EVENTS, m, owned=True),),),
        attributed,
        (ALERT,),
        remedy="cAdvisor's OOM kill counter is not scraped: the kubelet's /metrics/cadvisor has "
        "it from Kubernetes 1.24, cAdvisor from v0.40.0; a standalone cAdvisor labels containers "
        "container_label_io_kubernetes_* instead of namespace, pod and container (relabel them), "
        "or spec.deployment.container does not name the model's container. Meanwhile "
        f'{ALERT} {naming.KILLED}="{CONTAINER}" judges a restart by the termination reason and '
        f'exit code alone, and {naming.KILLED}="{PROCESS}" (a process killed in a running '
        "container) cannot fire.",
    )
    return [pods, restarts, events]


def panels(plan: ServicePlan) -> list[PanelDef]:
    """Restarts, OOM kills the kernel counted and whether the last termination was OOMKilled,
    per pod."""

    def increase(metric: str) -> str:
        series = selector(metric, (*plan.container_matchers, *scope(plan), pod_filter()))
        return owned(plan, f"increase({series}[$__rate_interval])", *cluster_filter(plan))

    oom = memory.panel_pods(plan, naming.KSM_LAST_TERMINATED, _OOM)
    pods = kept_by(plan, "pod")
    return [
        PanelDef(
            title="Restarts and OOM kills",
            key="restarts",
            description=f"Container restarts per pod (increase of {naming.KSM_RESTARTS} over "
            f"$__rate_interval), processes the kernel's OOM killer ended in the container "
            f"(increase of {naming.CADVISOR_OOM_EVENTS}; one container's kill is often lost "
            f"with its cgroup) and whether the last termination was OOMKilled "
            f"({naming.KSM_LAST_TERMINATED}, 1 = yes).",
            kind="timeseries",
            queries=(
                Query(
                    f"sum{pods} {increase(naming.KSM_RESTARTS)}", named(plan, "{{pod}} restarts")
                ),
                Query(
                    f"max{pods} {increase(naming.CADVISOR_OOM_EVENTS)}",
                    named(plan, "{{pod}} OOM kills (kernel)"),
                ),
                Query(f"max{pods} {oom}", named(plan, "{{pod}} last termination OOMKilled")),
            ),
            unit="short",
            min_value=0,
            steps=(Step(None, GREEN), Step(1, RED)),
            runbook=panel_runbook(plan, ALERT),
            width=8,
        )
    ]


def runbook_queries(plan: ServicePlan, rec: Callable[..., str]) -> dict[str, str | None]:
    """The memory records; ``oom``, ``exit_code`` and ``oom_events``: the last termination's
    reason and exit code and the kernel's OOM counter of the service's pods."""
    return {
        **memory.record_queries(plan, rec),
        "oom": memory.runbook_pods(plan, naming.KSM_LAST_TERMINATED, _OOM),
        "exit_code": memory.runbook_pods(plan, naming.KSM_LAST_EXIT_CODE),
        "oom_events": memory.runbook_pods(plan, naming.CADVISOR_OOM_EVENTS),
    }


FAMILY = Family(
    key=KEY,
    spec_field="oomKilled",
    alerts=(ALERT,),
    for_ms=0,
    severity="warning",
    params={},
    role=Role.RESOURCE,
    group="memory",
    rules=rules,
    cases=cases,
    inputs=inputs,
    row="memory",
    rank=2,
    panels=panels,
    runbook_queries=runbook_queries,
)
