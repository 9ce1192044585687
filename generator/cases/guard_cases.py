"""Generated promtool cases of the input guards (``ModelSignalMissing``): each input removed
fires its guard and no other, and a healthy service over 2 hours raises no alert.

Part of :mod:`generator.cases.rule_tests`; why the expectations are exact:
docs/proof.md, "Generated promtool tests".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from generator import naming
from generator.builders.guard_rules import signal_inputs
from generator.builders.rulefile import alert_rules
from generator.families import latency_p99
from generator.parts import replicas
from generator.parts.common import Rule
from generator.parts.go_templates import render_template
from generator.parts.guard_inputs import SignalInput, Source
from generator.parts.pods import (
    KSM_POD_OWNER,
    KSM_REPLICASET_OWNER,
    OWNER_RECORD,
)
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    INTERVAL_MS,
    Klass,
    Series,
    alert_test,
    expected_alert,
    family_case,
    healthy_replicas,
    labels_of,
    promtool_group,
    steps_until,
)
from generator.parts.replica_series import set_replicas, steady
from generator.parts.windowed_series import (
    selected,
    without,
)
from generator.plan import ServicePlan
from generator.promql import Matcher
from generator.signals.healthy import healthy
from generator.signals.requests import CARRIES

# --- input guards ----------------------------------------------------------------------------
# Which ModelSignalMissing alerts a set of synthetic series raises is predicted here from the
# plan's inputs (generator.builders.guard_rules.signal_inputs), the way promtool will evaluate
# the rules: gate conditions and needs are matched against the series' labels and first
# values, the pod owner record is derived from the owner series and targets as its rule does.

_FIRST_VALUE = re.compile(r"\s*(-?[0-9.]+(?:e[-+]?[0-9]+)?)")


def _first_value(values: str) -> float:
    match = _FIRST_VALUE.match(values)
    return float(match.group(1)) if match else float("nan")


def _select(
    s: Series, metric: str, matchers: Sequence[Matcher]
) -> list[tuple[dict[str, str], float]]:
    """(labels, first value) of the series of ``metric`` that ``matchers`` select, counters
    (starting at 0) first; labels are built for that metric's series only."""
    out: list[tuple[dict[str, str], float]] = []
    for name, pairs in s.counters:
        if name == metric:
            labels = dict(pairs)
            if all(selected(m, labels) for m in matchers):
                out.append((labels, 0.0))
    for (name, pairs), values in s.gauges.items():
        if name == metric:
            labels = dict(pairs)
            if all(selected(m, labels) for m in matchers):
                out.append((labels, _first_value(values)))
    return out


def owner_pods(plan: ServicePlan, s: Series) -> set[tuple[str, str]]:
    """``(namespace, pod)`` the pod owner record holds for these series (its rule, in Python)."""
    ns = (Matcher("namespace", "=", plan.namespace),) if plan.namespace else ()
    name = Matcher("owner_name", "=", plan.deployment_name)
    if plan.workload_kind == "StatefulSet":
        kind = Matcher("owner_kind", "=", "StatefulSet")
        ksm = {
            (lb["namespace"], lb["pod"]) for lb, _ in _select(s, KSM_POD_OWNER, (*ns, kind, name))
        }
    else:
        deployment = Matcher("owner_kind", "=", "Deployment")
        replicasets = {
            (lb.get("namespace", ""), lb.get("replicaset", ""))
            for lb, _ in _select(s, KSM_REPLICASET_OWNER, (*ns, deployment, name))
        }
        ksm = {
            (lb.get("namespace", ""), lb.get("pod", ""))
            for lb, _ in _select(s, KSM_POD_OWNER, (*ns, Matcher("owner_kind", "=", "ReplicaSet")))
            if (lb.get("namespace", ""), lb.get("owner_name", "")) in replicasets
        }
    if plan.namespace is None:
        spaces = {lb.get("namespace", "") for lb, _ in _select(s, "up", plan.matchers)}
        ksm = {p for p in ksm if p[0] in spaces}
    targets = {
        (lb.get("namespace", ""), lb["pod"])
        for lb, _ in _select(s, "up", plan.matchers)
        if lb.get("pod")
    }
    return ksm | targets


def _present_keys(
    plan: ServicePlan, s: Series, source: Source, keys: Sequence[str], equals: float | None
) -> set[tuple[str, ...]]:
    if source.metric == OWNER_RECORD:
        # The synthetic series of one cluster (every guard case) share its label.
        cluster = {k: v for k, v in labels_of(plan, ()).items() if k == plan.cluster_label}
        pods = [{**cluster, "namespace": ns, "pod": pod} for ns, pod in owner_pods(plan, s)]
        return {tuple(p.get(k, "") for k in keys) for p in pods}
    owners = owner_pods(plan, s) if source.owned else None
    found = set()
    for labels, first in _select(s, source.metric, source.matchers):
        if equals is not None and first != equals:
            continue
        if (
            owners is not None
            and (labels.get("namespace", ""), labels.get("pod", "")) not in owners
        ):
            continue
        found.add(tuple(labels.get(k, "") for k in keys))
    return found


def guard_firing(plan: ServicePlan, item: SignalInput, s: Series) -> list[dict[str, str]]:
    """Label sets (the input's keys, and the cluster label as the rule keeps it) on which the
    guard of ``item`` fires over ``s``."""
    names = plan.keeping(*item.keys)
    gate: set[tuple[str, ...]] | None = None
    for c in item.gate:
        keys = set().union(*(_present_keys(plan, s, src, names, c.equals) for src in c.sources))
        gate = keys if gate is None else gate & keys
    for src in item.excused:
        gate = (gate or set()) - _present_keys(plan, s, src, names, None)
    present: set[tuple[str, ...]] | None = None
    for group in item.needs:
        keys = set().union(*(_present_keys(plan, s, src, names, None) for src in group))
        present = keys if present is None else present & keys
    missing = (gate or set()) - (present or set())
    return [{k: v for k, v in zip(names, key, strict=True) if v} for key in sorted(missing)]


def _guard_rule(plan: ServicePlan, item: SignalInput) -> Rule:
    return next(
        r
        for r in alert_rules(plan)
        if r["alert"] == naming.ALERT_SIGNAL_MISSING
        and r["labels"][naming.SIGNAL] == item.signal
        and r["labels"][naming.METRIC] == item.metric
        and r["labels"].get("le") == item.le
    )


def expected_guards(
    plan: ServicePlan, s: Series, items: Sequence[SignalInput] | None = None
) -> list[dict[str, Any]]:
    """Every ``ModelSignalMissing`` alert (labels, annotations) the series ``s`` raise (of
    ``items``; every input of the plan by default)."""
    found = [
        _expected(_guard_rule(plan, item), labels)
        for item in (signal_inputs(plan) if items is None else items)
        for labels in guard_firing(plan, item, s)
    ]
    return sorted(found, key=lambda a: sorted(a["exp_labels"].items()))


def _expected(rule: Rule, labels: dict[str, str]) -> dict[str, Any]:
    """The guard alert on ``labels``: Prometheus expands annotations with the expression's
    labels only (rules/alerting.go, AlertTemplateData), so a guard kept per service (no
    ``namespace`` key) names no namespace although the rule's labels add one."""
    alert = expected_alert(rule, labels, None)
    if "namespace" not in labels and "namespace" in rule["labels"]:
        own = {**labels, "alertname": rule["alert"]}
        alert["exp_annotations"] = {
            k: render_template(v, own, None) for k, v in sorted(rule["annotations"].items())
        }
    return alert


def _remove(plan: ServicePlan, s: Series, source: Source) -> None:
    """Drop every series of ``source``; for the owner record, its owner series, and the pod
    label of the targets (its other source)."""
    if source.metric == OWNER_RECORD:
        without(s, KSM_POD_OWNER)
        without(s, KSM_REPLICASET_OWNER)
        for key in [k for k in s.gauges if k[0] == "up" and dict(k[1]).get("pod")]:
            labels = dict(key[1])
            if all(selected(m, labels) for m in plan.matchers):
                values = s.gauges.pop(key)
                labels.pop("pod")
                s.gauge("up", labels, values)
        return
    carried = [m.label for m in source.matchers if (m.op, m.value) == ("=~", CARRIES)]
    if carried:  # a meaning guard: the series stay, without the label
        for key in [k for k in s.counters if k[0] == source.metric]:
            labels = dict(key[1])
            if all(selected(m, labels) for m in source.matchers):
                per_step = s.counters.pop(key)
                kept = {k: v for k, v in labels.items() if k not in carried}
                s.add(source.metric, kept, per_step)
        return
    without(s, source.metric, lambda labels: all(selected(m, labels) for m in source.matchers))


def _guard_name(item: SignalInput) -> str:
    le = f'{{le="{item.le}"}}' if item.le is not None else ""
    return f"{naming.ALERT_SIGNAL_MISSING} {item.signal} ({item.metric}{le})"


def _missing(
    plan: ServicePlan,
    classes: Sequence[Klass],
    items: Sequence[SignalInput],
    start: Series | None = None,
) -> Series:
    """Healthy series without the first needed series of each of ``items``; ``start``: the
    healthy series of ``plan`` and ``classes`` when already built (copied, never changed)."""
    s = (
        healthy(plan, classes)
        if start is None
        else Series(dict(start.counters), dict(start.gauges))
    )
    for item in items:
        for source in item.needs[0]:
            _remove(plan, s, source)
    return s


def _own_alert(plan: ServicePlan, item: SignalInput, s: Series) -> bool:
    """Whether the guard of ``item`` is predicted to fire over ``s``."""
    return bool(guard_firing(plan, item, s))


def guard_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """Per input guard: its series missing with the targets up fires it (and only the guards
    whose inputs go with it); every target down stays quiet. (Every series present stays
    quiet: :func:`long_healthy_group`.)

    Raises:
        ValueError: the prediction disagrees with the inputs (a guard that would not fire on
            its own missing series, or one that fires on the healthy series).
    """
    items = list(signal_inputs(plan))
    if not items:
        return []
    base = [Klass(BASE_PER_MIN)]
    # Gates and absences hold from the first sample (no rates): one evaluation past `for`.
    at = plan.alerts["signal_missing"].for_ms + INTERVAL_MS
    alert = naming.ALERT_SIGNAL_MISSING
    if expected_guards(plan, healthy(plan, base), items):
        raise ValueError(f"{alert} would fire on the healthy series")
    # Inputs whose removals do not mask each other share a case (fewer promtool steps): each
    # case removes its members' series, and every member must still be predicted to fire.
    cases: list[list[SignalInput]] = []
    pristine = healthy(plan, base)  # each case below starts from a copy
    for item in items:
        for members in cases:
            if all(
                _own_alert(plan, m, _missing(plan, base, [*members, item], pristine))
                for m in (*members, item)
            ):
                members.append(item)
                break
        else:
            if not _own_alert(plan, item, _missing(plan, base, [item], pristine)):
                raise ValueError(f"{_guard_name(item)} would not fire with its series missing")
            cases.append([item])
    groups = []
    for members in cases:
        s = _missing(plan, base, members, pristine)
        names = ", ".join(_guard_name(m).removeprefix(alert + " ") for m in members)
        groups.append(
            family_case(
                plan,
                f"{alert} fires for each missing input, targets up: {names}",
                s,
                alert,
                expected_guards(plan, s),
                at,
            )
        )
    down = Series()
    for (name, labels), _values in healthy(plan, base).gauges.items():
        if name == "up":
            down.gauge(name, dict(labels), "0+0x60")
    if expected_guards(plan, down):
        raise ValueError(f"{alert} would fire with every target down")
    groups.append(
        family_case(
            plan, f"{alert}: every target down (no input series) stays quiet", down, alert, [], at
        )
    )
    return groups + zero_guard_groups(plan, items, at)


def zero_guard_groups(
    plan: ServicePlan, items: Sequence[SignalInput], at: int
) -> list[dict[str, Any]]:
    """Scale to zero: the workload desired at 0 replicas with no series of the model at all
    stays quiet; a scale-down to zero whose pod is still up while every input of the guards
    is gone (the model stopped first) stays quiet — predicted to fire without the clause."""
    alert = naming.ALERT_SIGNAL_MISSING
    length = steps_until(at)
    n = healthy_replicas(plan)
    zero = Series()
    set_replicas(zero, plan, steady(0, length), steady(0, length))
    # Every input removed but the targets, which stay up; desired 0 from the first sample.
    draining = _missing(plan, [Klass(BASE_PER_MIN)], items)
    set_replicas(draining, plan, steady(0, length), steady(n, length))
    if not expected_guards(plan, draining, items):
        raise ValueError(f"{alert}: the scale-down case would not fire without the clause")
    # A guard kept for the whole service (dcgm-exporter's node series, inputs in another
    # namespace) has no namespace to match the clause on: its gate (the pod still up) holds.
    wide = [i for i in items if not set(replicas.keys(plan)) <= set(plan.keeping(*i.keys))]
    still = expected_guards(plan, draining, wide) if wide else []
    return [
        family_case(
            plan,
            f"{alert}: scaled to zero (desired 0), no series of the model at all, stays quiet",
            zero,
            alert,
            [],
            at,
        ),
        family_case(
            plan,
            f"{alert}: a scale-down to zero (desired 0), its pod still up while its inputs are "
            "gone, stays quiet"
            + (" (but for the guards kept for the whole service)" if still else ""),
            draining,
            alert,
            still,
            at,
        ),
    ]


LONG_HEALTHY_MS = 120 * 60_000


def long_healthy_group(plan: ServicePlan) -> dict[str, Any]:
    """2 hours of a healthy service with every input series present: no alert of any name
    fires at 30m, 1h or 2h (guards, capacity, GPU and every other alert included). A native
    histogram has no series in promtool 2.42's notation, so its guard is the one expected."""
    names = sorted({r["alert"] for r in alert_rules(plan)})
    p99 = plan.alerts.get("latency_p99")
    if p99 is not None:
        typed = latency_p99.params(p99)
        h = plan.histograms[typed.indicator]
        if 0.99 * h.buckets[0] * h.seconds_per_unit > typed.threshold_seconds:
            names.remove(naming.ALERT_LATENCY_P99)  # even the fastest bucket is over it
    steps = LONG_HEALTHY_MS // INTERVAL_MS
    s = healthy(plan, [Klass(BASE_PER_MIN)], length=steps)
    checks = [
        alert_test(at, name, [])
        for at in (30 * 60_000, 60 * 60_000, LONG_HEALTHY_MS)
        for name in names
    ]
    series = s.render(steps)
    return promtool_group(
        "a healthy service over 2h, every input series present, raises no alert",
        series,
        checks,
    )
