"""``spec.alerts.targetDown``: ``ModelTargetDown``, the service's scrape targets down (all:
critical; some: warning) or absent, held within a window so restarts do not reset it.

Reads Prometheus' ``up`` series of the service's targets; page text in
``templates/runbooks/ModelTargetDown.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.families.base import Family, Role
from generator.parts import replicas
from generator.parts.common import alert_rule, held_for
from generator.parts.pods import example_pods, replica_metrics
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
    first_unsuppressed,
    identity_labels,
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
    selected,
    values_text,
    without,
)
from generator.promql import Matcher, quote, selector
from generator.signals.healthy import healthy
from generator.units import format_duration_ms

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "target_down"
ALERT = naming.ALERT_TARGET_DOWN


@dataclass(frozen=True)
class Params:
    """``window_ms``: the window the condition's share of time is measured in."""

    window_ms: int


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``target_down`` alert."""
    return Params(int(alert.params["window_ms"]))


def no_target(plan: ServicePlan) -> str:
    """No target of the service exists although its workload wants pods: kube-state-metrics'
    desired replicas above 0 and no ``up`` series (value: the desired count, per namespace and
    cluster), silent while the startup grace of a start from zero lasts; without
    kube-state-metrics' series of the workload, ``absent(up{…})`` when
    ``spec.deployment.replicas`` is at least 1 (with a ``min`` of 0 nothing tells a service
    scaled to zero from a lost one: the ``desiredReplicas`` guard says so)."""
    up = selector("up", plan.matchers)
    ns = ", ".join(replicas.keys(plan))
    wanted = f"{replicas.desired(plan)} > 0 unless on ({ns}) group by ({ns}) ({up})"
    for m in plan.matchers:
        if m.label not in replicas.keys(plan):
            # The selector's labels, as absent() sets them: the alert text names the targets.
            wanted = f'label_replace({wanted}, {quote(m.label)}, {quote(m.value)}, "", "")'
    expr = replicas.unless_scaled_to_zero(plan, wanted, plan.startup_grace_ms)
    if plan.replicas >= 1:
        # Neither a target nor kube-state-metrics' desired count anywhere: one absent() over
        # both (it answers for the whole selector, every cluster), with the selector's labels
        # absent() would set for ``up`` alone.
        missing = f"absent({up} or {replicas.desired_selector(plan)})"
        for m in plan.matchers:
            if m.op == "=":
                missing = f'label_replace({missing}, {quote(m.label)}, {quote(m.value)}, "", "")'
        expr += f"\nor\n{missing}"
    return expr


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelTargetDown``: critical when no target was up for ``for`` in total within the
    alert's ``window`` (:func:`held_for`, so a crash loop's short restarts do not reset it),
    or when none exists for ``for`` while the workload wants pods (:func:`no_target`); a
    warning for each target down that long while others are up. Value: seconds down within
    the window (the desired replicas for the no-target rule).

    Scale to zero (:mod:`generator.parts.replicas`): no time is counted while
    kube-state-metrics' desired replicas are 0, nor for ``spec.scaleToZero.startupGrace``
    after they leave 0 (a pod scheduled, pulling its image, loading weights): a start from
    zero pages ``for`` after its grace when nothing is up by then."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    window = params(alert).window_ms
    grace = plan.startup_grace_ms
    up = selector("up", plan.matchers)
    keys = ", ".join(plan.keeping(*(m.label for m in plan.matchers)))

    def counted(expr: str) -> str:
        # Steps at zero or within a start's grace are not counted: a pod that loaded for
        # minutes inside the grace must not page once the grace is over.
        return held_for(
            plan, replicas.unless_scaled_to_zero(plan, expr, grace), alert.for_ms, window
        )

    all_down = counted(f"sum by ({keys}) ({up}) == 0")
    some_down = f"{counted(f'{up} == 0')}\nunless on ({keys}) ({all_down})"
    targets = ", ".join(f"{m.label}={{{{ $labels.{m.label} }}}}" for m in plan.matchers)
    text = {
        "targets": targets,
        "held": format_duration_ms(max(alert.for_ms, plan.scrape_interval_ms)),
        "window": format_duration_ms(window),
        "grace": format_duration_ms(grace),
        "workload": f"{plan.workload_kind}/{plan.deployment_name}",
    }
    # `window` tells the windowed rules from the no-target one (same name and severity).
    windowed = {naming.WINDOW: text["window"]}
    return [
        alert_rule(
            plan,
            ALERT,
            all_down,
            0,
            alert.severity,
            windowed,
            scope="all",
            **text,
        ),
        alert_rule(
            plan,
            ALERT,
            no_target(plan),
            alert.for_ms,
            alert.severity,
            None,
            scope="absent",
            **text,
        ),
        alert_rule(plan, ALERT, some_down, 0, "warning", windowed, scope="some", **text),
        *role_rules(plan, counted, keys, alert.severity, windowed, text),
    ]


def role_rules(
    plan: ServicePlan,
    counted: Callable[[str], str],
    keys: str,
    severity: str,
    windowed: Mapping[str, str],
    text: Mapping[str, str],
) -> list[Rule]:
    """With ``spec.roles`` (:mod:`generator.roles`): one ``ModelTargetDown`` per role (label
    ``role``: ``prefill``, ``decode``, ``router``) while some target of the service is up but
    no target of that role is, down or gone (some target with a role label up: without the
    label on any target, nothing), for ``for`` in total within the window; at the
    alert's severity (a page by default): a disaggregated service without its prefill or
    decode pods fails every request. Nothing while no target of the service is up (``scope:
    all`` says that) nor while it is scaled to zero. ``up`` carries the role through the
    PodMonitor's ``podTargetLabels`` (:mod:`generator.builders.kube`). Value: seconds within
    the window."""
    if plan.roles is None:
        return []
    # Some target carrying a role up: a PodMonitor that does not copy the role label (every
    # role-scoped SLI input missing: ModelSignalMissing) raises no role alert.
    up = selector("up", (*plan.matchers, Matcher(plan.roles.label, "=~", ".+")))
    out = []
    for name, value in plan.roles.named:
        role_up = selector("up", plan.roles.matchers_for(value, plan.matchers))
        expr = (
            f"group by ({keys}) ({up} == 1)\nunless on ({keys}) group by ({keys}) ({role_up} == 1)"
        )
        out.append(
            alert_rule(
                plan,
                ALERT,
                counted(expr),
                0,
                severity,
                {**windowed, "role": name},
                scope="role",
                role=name,
                role_label=plan.roles.label,
                role_value=value,
                **text,
            )
        )
    return out


def role_cases(plan: ServicePlan, at: int, length: int, window: int) -> list[dict[str, Any]]:
    """With ``spec.roles``: every role's target up stays quiet; the first role's targets down
    pages for it (and no other role; the target itself tickets as any down target does); its
    targets gone pages for it too."""
    if plan.roles is None:
        return []
    alert = plan.alerts[KEY]
    least = max(alert.for_ms, plan.scrape_interval_ms) / 1000
    some, role_rules_ = rules(plan)[2], rules(plan)[3:]
    up = up_labels(plan)
    keys = {k: up[k] for k in plan.keeping(*(m.label for m in plan.matchers))}
    named = plan.roles.named
    role_label = plan.roles.label

    def series(down: str | None, gone: bool) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)], length)
        without(s, "up", lambda labels: all(selected(m, labels) for m in plan.matchers))
        for name, value in named:
            labels = target(name, value)
            if name == down and gone:
                continue
            s.gauge("up", labels, values_text([0.0 if name == down else 1.0] * length))
        return s

    def target(name: str, value: str) -> dict[str, str]:
        return {**up, role_label: value, "instance": f"{name}.example:8000"}

    first = named[0][0]
    value = held_seconds(plan, lambda _: True, at, window)
    if value < least:
        raise ValueError(f"{ALERT} role case would not fire at {at} ms")
    fired = [expected_alert(role_rules_[0], keys, value)]
    # The down target also tickets on its own (scope some); a gone one has no up series.
    down = [*fired, expected_alert(some, target(first, named[0][1]), value)]
    return [
        gauge_group(
            f"{ALERT}: every role ({', '.join(n for n, _ in named)}) with a target up stays quiet",
            series(None, False),
            length,
            [alert_test(at, ALERT, [])],
        ),
        gauge_group(
            f"{ALERT}: every {first} target down while the other roles are up pages for {first}",
            series(first, False),
            length,
            [alert_test(at, ALERT, down)],
        ),
        gauge_group(
            f"{ALERT}: no {first} target at all while the other roles are up pages for {first}",
            series(first, True),
            length,
            [alert_test(at, ALERT, fired)],
        ),
    ]


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """``ModelTargetDown``: every target down pages, no target at all pages, one of two down
    tickets, targets up stay quiet; a single replica crash-looping (down 3 of every 4 minutes,
    and with a short back-off 1 of every 2 — a ``for`` would be reset by every restart)
    pages; a healthy restart (the pod replaced, its successor up within two minutes) stays
    quiet."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    window = params(alert).window_ms
    least = max(alert.for_ms, plan.scrape_interval_ms) / 1000
    every, absent_rule, some = rules(plan)[:3]  # all, absent, some (then one per role)
    up = up_labels(plan)
    keys = {k: up[k] for k in plan.keeping(*(m.label for m in plan.matchers))}
    # absent() carries the selector's equality labels only: no cluster label.
    absent_keys = {m.label: up[m.label] for m in plan.matchers}
    at = after_for(plan, KEY)
    length = steps_until(at + window)

    def with_up(*targets: tuple[dict[str, str], Minutes]) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)], length)
        without(s, "up", lambda labels: all(selected(m, labels) for m in plan.matchers))
        for labels, values in targets:
            s.gauge("up", labels, values_text(values))
        return s

    def none_up(*targets: Minutes) -> Callable[[int], bool]:
        def held(t: int) -> bool:
            seen = [v for v in (sample(x, t) for x in targets) if v is not None]
            return bool(seen) and sum(seen) == 0

        return held

    def check(
        t: int, rule: Rule | None, labels: Mapping[str, str], held: Callable[[int], bool] | None
    ) -> dict[str, Any]:
        if rule is None:
            return alert_test(t, ALERT, [])
        value = None if held is None else held_seconds(plan, held, t, window)
        if value is not None and value < least:
            raise ValueError(f"{ALERT} case would not fire at {t} ms")
        return alert_test(t, ALERT, [expected_alert(rule, labels, value)])

    down: Minutes = [0.0] * length
    healthy_up: Minutes = [1.0] * length
    other = {**up, "instance": "10.0.0.2:8000", "pod": example_pods(plan, 2)[1][0]}
    groups = [
        gauge_group(
            "ModelTargetDown: every target down pages",
            with_up((up, down)),
            length,
            [check(at, every, keys, none_up(down))],
        ),
        gauge_group(
            "ModelTargetDown: no target at all while kube-state-metrics desires replicas pages",
            with_up(),
            length,
            [
                alert_test(
                    at,
                    ALERT,
                    [
                        expected_alert(
                            absent_rule,
                            {**absent_keys, **identity_labels(plan)},
                            healthy_replicas(plan),
                        )
                    ],
                )
            ],
        ),
        gauge_group(
            "ModelTargetDown: one target of two down tickets",
            with_up((up, healthy_up), (other, down)),
            length,
            [check(at, some, other, lambda t: sample(down, t) == 0)],
        ),
        gauge_group(
            "ModelTargetDown: targets up stay quiet",
            with_up((up, healthy_up)),
            length,
            [check(at, None, {}, None)],
        ),
    ]

    def later(fire: int, held: Callable[[int], bool]) -> list[int]:
        # The first firing step, and three minutes on while it still holds.
        after = fire + 3 * INTERVAL_MS
        return [fire] + ([after] if held_seconds(plan, held, after, window) >= least else [])

    for down_min, up_min in ((3, 1), (1, 1)):
        loop = cycle(5, 0.0, 1.0, down_min, up_min, length)
        held = none_up(loop)
        fire = first_firing(plan, held, window, least, length)
        groups.append(
            gauge_group(
                f"ModelTargetDown: a crash-looping replica, down {down_min} of every "
                f"{down_min + up_min} minutes, pages (each restart would reset a for)",
                with_up((up, loop)),
                length,
                [check(t, every, keys, held) for t in later(fire, held)],
            )
        )
    # A healthy restart: the pod replaced at 20m, its successor loading for two minutes.
    gap = 2
    old: Minutes = [1.0] * 20 + [None] * (length - 20)
    new: Minutes = [None] * 20 + [0.0] * gap + [1.0] * (length - 20 - gap)
    if held_seconds(plan, none_up(old, new), (20 + gap) * INTERVAL_MS, window) < least:
        replaced = {**up, "instance": "10.0.0.2:8000", "pod": example_pods(plan, 2)[1][0]}
        groups.append(
            gauge_group(
                "ModelTargetDown: a pod replaced, its successor up within two minutes, stays quiet",
                with_up((up, old), (replaced, new)),
                length,
                [check(t * INTERVAL_MS, None, {}, None) for t in (21, 22, 25, 30)],
            )
        )
    no_ksm = with_up()
    for metric in replica_metrics(plan)[:2]:
        without(no_ksm, metric)
    if plan.replicas >= 1:
        groups.append(
            gauge_group(
                f"ModelTargetDown: without kube-state-metrics, no target at all pages "
                f"(spec.deployment.replicas allows no fewer than {plan.replicas})",
                no_ksm,
                length,
                [check(at, absent_rule, absent_keys, None)],
            )
        )
    else:
        groups.append(
            gauge_group(
                "ModelTargetDown: without kube-state-metrics, no target at all stays quiet "
                "(replicas may be 0: nothing tells it from a service scaled to zero)",
                no_ksm,
                length,
                [check(at, None, {}, None)],
            )
        )
    return groups + zero_cases(plan) + role_cases(plan, at, length, window)


def zero_cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Scale to zero: desired 0 with no series of the model at all stays quiet; a start from
    zero whose pod is up within the startup grace stays quiet (its loading inside the grace
    is not counted); one with no target, or with its target down, past the grace pages
    ``for`` after it; a scale-down to zero whose last pod's target is down longer than
    ``for`` while it terminates stays quiet."""
    alert = plan.alerts[KEY]
    window = params(alert).window_ms
    least = max(alert.for_ms, plan.scrape_interval_ms) / 1000
    every, no_target_rule, _ = rules(plan)[:3]
    up = up_labels(plan)
    keys = {k: up[k] for k in plan.keeping(*(m.label for m in plan.matchers))}
    n = healthy_replicas(plan)
    # The no-target rule's labels: the selector's (as absent() sets them) and the cluster's.
    targets = {**{m.label: up[m.label] for m in plan.matchers}, **identity_labels(plan)}
    grace = plan.startup_grace_ms
    start = start_minute(plan, 5)
    t0 = start * INTERVAL_MS
    for_steps = -(-alert.for_ms // INTERVAL_MS)
    length = steps_until(t0 + grace + 2 * alert.for_ms + window)
    end = (length - 5) * INTERVAL_MS
    name = ALERT

    def zero_series(desired: Minutes, available: Minutes, *ups: Minutes) -> Series:
        s = Series()
        set_replicas(s, plan, desired, available)
        for i, values in enumerate(ups):
            labels = {**up, "pod": example_pods(plan, 2)[i][0]}
            if i:
                labels["instance"] = "10.0.0.2:8000"
            s.gauge("up", labels, values_text(values))
        return s

    def quiet(*times: int) -> list[dict[str, Any]]:
        return [alert_test(t, name, []) for t in times]

    def suppressed(t: int) -> bool:
        # Silenced on both lines (Prometheus 3 lifts the silence first).
        return starting(plan, t0, t)

    groups = [
        gauge_group(
            f"{name}: scaled to zero (desired 0), no target and no up series at all, stays quiet",
            zero_series(steady(0, length), steady(0, length)),
            length,
            quiet(after_for(plan, KEY), end),
        )
    ]
    # A start from zero: desired n from t0; the pod pending 2 minutes, then loading.
    rising = switch(0, n, start, length)
    # The last whole minute well inside the grace (one minute before its edge).
    inside = max(
        (m for m in range(start, length) if suppressed((m + 1) * INTERVAL_MS)),
        default=start,
    )
    if inside >= start + 3:
        loading: Minutes = [
            *([None] * (start + 2)),
            *([0.0] * (inside - start - 2)),
            *([1.0] * (length - inside)),
        ]
        groups.append(
            gauge_group(
                f"{name}: a start from zero whose pod is up within the startup grace "
                f"({format_duration_ms(grace)}; pending 2m, loading "
                f"{inside - start - 2}m) stays quiet",
                zero_series(rising, switch(0, n, inside, length), loading),
                length,
                quiet(
                    inside * INTERVAL_MS,
                    (inside + 2) * INTERVAL_MS,
                    t0 + grace + alert.for_ms + INTERVAL_MS,
                    end,
                ),
            )
        )
    # No pod ever scheduled: the no-target rule, pending from the grace's end on each line.
    lifted = [first_unsuppressed(plan, t0, length, closed) for closed in (False, True)]
    fire = max(lifted) + for_steps * INTERVAL_MS
    early = [t for t in (t0 + alert.for_ms + INTERVAL_MS,) if suppressed(t)]
    groups.append(
        gauge_group(
            f"{name}: a start from zero with no target past the startup grace "
            f"({format_duration_ms(grace)}) pages {format_duration_ms(alert.for_ms)} after it",
            zero_series(rising, steady(0, length)),
            length,
            [
                *quiet(*early, min(lifted) - INTERVAL_MS),
                *(
                    alert_test(t, name, [expected_alert(no_target_rule, targets, n)])
                    for t in (fire, fire + INTERVAL_MS)
                ),
            ],
        )
    )
    # The pod up for scraping from t0 + 1m but never ready: the windowed rule counts from
    # the grace's end.
    loading_forever: Minutes = [None] * (start + 1) + [0.0] * (length - start - 1)
    fire, value = agreed_firing(
        plan, lambda t: sample(loading_forever, t) == 0, t0, window, least, length
    )
    early = [t for t in (t0 + alert.for_ms + 2 * INTERVAL_MS,) if suppressed(t)]
    groups.append(
        gauge_group(
            f"{name}: a start from zero whose target stays down past the startup grace "
            f"({format_duration_ms(grace)}) pages once {format_duration_ms(alert.for_ms)} "
            "after it are counted",
            zero_series(rising, steady(0, length), loading_forever),
            length,
            [
                *quiet(*early),
                alert_test(fire, name, [expected_alert(every, keys, value)]),
            ],
        )
    )
    # A scale-down to zero at 10m: the last pod's target down for `for` + 2m, then gone.
    gone = 10 + for_steps + 2
    terminating: Minutes = [1.0] * 10 + [0.0] * (gone - 10) + [None] * (length - gone)
    groups.append(
        gauge_group(
            f"{name}: a scale-down to zero (desired 0), its last target down "
            f"{for_steps + 2}m while the pod terminates, then gone, stays quiet",
            zero_series(switch(n, 0, 10, length), switch(n, 0, gone, length), terminating),
            length,
            quiet(gone * INTERVAL_MS, (gone + 2) * INTERVAL_MS, end),
        )
    )
    return groups


FAMILY = Family(
    key=KEY,
    spec_field="targetDown",
    alerts=(ALERT,),
    for_ms=300_000,
    severity="critical",
    params={},
    role=Role.TARGETS_DOWN,
    group="targets",
    rules=rules,
    cases=cases,
    windowed=True,
)
