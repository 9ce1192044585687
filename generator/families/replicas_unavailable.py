"""``spec.alerts.replicasUnavailable``: ``ModelReplicasUnavailable``, the workload short of
replicas (kube-state-metrics' desired − available, or ``spec.deployment.replicas`` − targets
up), held within a window so a flapping replica does not reset it.

kube-state-metrics' replica series (v2.20.0, docs/metrics/workload/); page text in
``templates/runbooks/ModelReplicasUnavailable.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families.base import Family, Role
from generator.parts import replicas
from generator.parts.common import alert_rule, held_for
from generator.parts.pods import replica_metrics
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    INTERVAL_MS,
    Klass,
    Series,
    after_for,
    alert_test,
    expected_alert,
    healthy_replicas,
    steps_until,
    up_labels,
)
from generator.parts.replica_series import (
    agreed_firing,
    set_replicas,
    start_minute,
    starting,
    steady,
    switch,
)
from generator.parts.windowed_series import (
    Minutes,
    cycle,
    first_firing,
    gauge_group,
    held_seconds,
    sample,
    values_text,
    without,
)
from generator.promql import selector
from generator.signals.healthy import healthy
from generator.units import format_duration_ms

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "replicas_unavailable"
ALERT = naming.ALERT_REPLICAS_UNAVAILABLE


@dataclass(frozen=True)
class Params:
    """``window_ms``: the window the condition's share of time is measured in."""

    window_ms: int


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``replicas_unavailable`` alert."""
    return Params(int(alert.params["window_ms"]))


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelReplicasUnavailable``: desired − available replicas (kube-state-metrics) > 0, or
    without those series ``spec.deployment.replicas`` − targets up > 0, for ``for`` in total
    within the alert's ``window`` (:func:`held_for`: a replica that flaps between ready and
    crashed does not reset it). Value: seconds short of replicas within the window.

    No target up at all is ``ModelTargetDown``'s, so the fallback says nothing then; with a
    ``min`` of 0 there is no fallback (any count may be desired). No time is counted while
    the workload is desired at 0 replicas nor within the startup grace of a start from zero
    (:mod:`generator.parts.replicas`).
    """
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    available_name = replica_metrics(plan)[1]
    keys = ", ".join(plan.keeping("namespace"))
    workload = replicas.workload_matchers(plan)
    desired = f"max by ({keys}) ({replicas.desired_selector(plan)})"
    available = f"max by ({keys}) ({selector(available_name, workload)})"
    short = f"({desired} - ({available} or 0 * {desired})) > 0"
    up = selector("up", plan.matchers)
    if plan.namespace is None:
        short = f"{short} and on ({keys}) group by ({keys}) ({up})"
    if plan.replicas >= 1:
        # Without kube-state-metrics: fewer targets up than the fewest replicas allowed.
        short += (
            f"\nor\n({plan.replicas} - count by ({keys}) ({up} == 1)) > 0 "
            f"unless on ({keys}) {desired}"
        )
    # Not counted at zero, nor while a start from zero is within its grace.
    short = replicas.unless_scaled_to_zero(plan, short, plan.startup_grace_ms)
    window = params(alert).window_ms
    return [
        alert_rule(
            plan,
            ALERT,
            held_for(plan, short, alert.for_ms, window),
            0,
            alert.severity,
            {naming.WINDOW: format_duration_ms(window)},
            workload=f"{plan.workload_kind}/{plan.deployment_name}",
            replicas=str(plan.replicas),
            held=format_duration_ms(max(alert.for_ms, plan.scrape_interval_ms)),
            window=format_duration_ms(window),
        )
    ]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """``ModelReplicasUnavailable``: one replica short by kube-state-metrics fires; without
    kube-state-metrics, fewer targets up than ``deployment.replicas`` fires (two or more
    replicas); a replica that flaps between available and crashed (short 3 of every 4
    minutes) fires although a ``for`` would be reset; a rolling restart (each pod back within
    two minutes, one at a time) stays quiet. All replicas available stays quiet although only
    one target is scraped: :func:`long_healthy_group`."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    window = params(alert).window_ms
    least = max(alert.for_ms, plan.scrape_interval_ms) / 1000
    at = alert.for_ms + INTERVAL_MS  # gauges from the first sample: one evaluation past `for`
    # Long enough for the flapping and rolling-restart cases whatever the window.
    length = steps_until(max(at + window, 30 * INTERVAL_MS))
    rule = rules(plan)[0]
    name = rule["alert"]
    ns = {k: v for k, v in up_labels(plan).items() if k in plan.keeping("namespace")}
    _, available, workload = replica_metrics(plan)
    series_labels = {**ns, workload: plan.deployment_name}
    r = healthy_replicas(plan)

    def short(values: Minutes) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)], length)
        s.gauge(available, series_labels, values_text(values))
        return s

    def below(values: Minutes) -> Callable[[int], bool]:
        def held(t: int) -> bool:
            v = sample(values, t)
            return v is not None and v < r

        return held

    def expect(t: int, values: Minutes) -> dict[str, Any]:
        value = held_seconds(plan, below(values), t, window)
        if value < least:
            raise ValueError(f"{name} case would not fire at {t} ms")
        return alert_test(t, name, [expected_alert(rule, ns, value)])

    one_short: Minutes = [r - 1] * length
    groups = [
        gauge_group(
            f"{name}: one of {plan.replicas} replicas unavailable (kube-state-metrics) tickets",
            short(one_short),
            length,
            [expect(at, one_short)],
        ),
    ]
    if plan.replicas >= 2:
        no_ksm = healthy(plan, [Klass(BASE_PER_MIN)], length)
        for metric in replica_metrics(plan)[:2]:
            without(no_ksm, metric)
        value = held_seconds(plan, lambda _: True, at, window)
        groups.append(
            gauge_group(
                f"{name}: without kube-state-metrics, 1 target up of {plan.replicas} tickets",
                no_ksm,
                length,
                [alert_test(at, name, [expected_alert(rule, ns, value)])],
            )
        )
    flapping = cycle(5, r - 1, r, 3, 1, length)
    fire = first_firing(plan, below(flapping), window, least, length)
    groups.append(
        gauge_group(
            f"{name}: a replica short 3 of every 4 minutes tickets (each return would reset a for)",
            short(flapping),
            length,
            [expect(fire, flapping)],
        )
    )
    pods = min(plan.replicas, 3)
    rolling: Minutes = [r] * 10 + [r - 1] * (2 * pods) + [r] * (length - 10 - 2 * pods)
    if (
        held_seconds(
            plan, lambda u: (sample(rolling, u) or r) < r, (10 + 2 * pods) * INTERVAL_MS, window
        )
        < least
    ):
        groups.append(
            gauge_group(
                f"{name}: a rolling restart of {pods} pod(s), each back within two minutes, stays quiet",
                short(rolling),
                length,
                [
                    alert_test(t * INTERVAL_MS, name, [])
                    for t in (12, 10 + 2 * pods, 10 + 2 * pods + 5)
                ],
            )
        )
    return groups + zero_cases(plan)


def zero_cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Scale to zero: desired 0 with no series of the model at all stays quiet; a start from
    zero with no replica available within the startup grace stays quiet, and one with none
    past it tickets once ``for`` is counted after the grace; a scale-down to zero stays quiet;
    with replicas allowed to be 0, no kube-state-metrics and no target up stays quiet."""
    alert = plan.alerts[KEY]
    window = params(alert).window_ms
    least = max(alert.for_ms, plan.scrape_interval_ms) / 1000
    rule = rules(plan)[0]
    name = rule["alert"]
    n = healthy_replicas(plan)
    grace = plan.startup_grace_ms
    start = start_minute(plan, 5)
    t0 = start * INTERVAL_MS
    length = steps_until(t0 + grace + alert.for_ms + window)
    end = (length - 5) * INTERVAL_MS
    ns = {k: v for k, v in up_labels(plan).items() if k in plan.keeping("namespace")}

    def ksm_only(desired: Minutes, available: Minutes, up: Minutes = ()) -> Series:
        s = Series()
        set_replicas(s, plan, desired, available)
        if up:
            s.gauge("up", up_labels(plan), values_text(up))
        return s

    rising = switch(0, n, start, length)
    never: Minutes = steady(0, length)
    fire, value = agreed_firing(plan, lambda t: t >= t0, t0, window, least, length)
    early = [t for t in (t0 + alert.for_ms + INTERVAL_MS,) if starting(plan, t0, t)]
    groups = [
        gauge_group(
            f"{name}: scaled to zero (desired 0), no series of the model at all, stays quiet",
            ksm_only(steady(0, length), never),
            length,
            [alert_test(t, name, []) for t in (after_for(plan, KEY), end)],
        ),
        gauge_group(
            f"{name}: a start from zero with no replica available past the startup grace "
            f"({format_duration_ms(grace)}; its pod never ready) tickets once "
            f"{format_duration_ms(alert.for_ms)} after it are counted",
            ksm_only(rising, never, [None] * (start + 1) + [0.0] * (length - start - 1)),
            length,
            [
                *(alert_test(t, name, []) for t in early),
                alert_test(fire, name, [expected_alert(rule, ns, value)]),
            ],
        ),
        gauge_group(
            f"{name}: a scale-down to zero, its last replica available while it drains, "
            "stays quiet",
            ksm_only(switch(n, 0, 10, length), switch(n, 0, 13, length)),
            length,
            [alert_test(t, name, []) for t in (13 * INTERVAL_MS, end)],
        ),
    ]
    if plan.replicas == 0:
        no_ksm = healthy(plan, [Klass(BASE_PER_MIN)], length)
        for metric in replica_metrics(plan)[:2]:
            without(no_ksm, metric)
        without(no_ksm, "up")
        groups.append(
            gauge_group(
                f"{name}: replicas may be 0, without kube-state-metrics and no target up, "
                "stays quiet",
                no_ksm,
                length,
                [alert_test(t, name, []) for t in (after_for(plan, KEY), end)],
            )
        )
    return groups


FAMILY = Family(
    key=KEY,
    spec_field="replicasUnavailable",
    alerts=(ALERT,),
    # Rollouts make pods unavailable for minutes: 15m as kube-prometheus' replica checks.
    for_ms=900_000,
    severity="warning",
    params={},
    role=Role.GUARD,
    group="guards",
    rules=rules,
    cases=cases,
    windowed=True,
)
