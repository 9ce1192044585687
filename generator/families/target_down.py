"""``spec.alerts.targetDown``: ``ModelTargetDown``, the service's scrape targets down (all:
critical; some: warning) or absent, held within a window so restarts do not reset it.

Reads Prometheus' ``up`` series of the service's targets; page text in
``templates/runbooks/ModelTargetDown.md.j2``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from generator import naming
from generator.builders.common import alert_rule, held_for
from generator.builders.pods import example_pods
from generator.builders.promtool_series import (
    BASE_PER_MIN,
    INTERVAL_MS,
    Klass,
    Series,
    after_for,
    alert_test,
    expected_alert,
    healthy,
    steps_until,
    up_labels,
)
from generator.builders.windowed_series import (
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
from generator.families.base import Family, Role
from generator.promql import selector
from generator.units import format_duration_ms

if TYPE_CHECKING:
    from generator.builders.common import Rule
    from generator.plan import ServicePlan

KEY = "target_down"
ALERT = naming.ALERT_TARGET_DOWN


def rules(plan: ServicePlan) -> list[Rule]:
    """``ModelTargetDown``: critical when no target was up for ``for`` in total within the
    alert's ``window`` (:func:`held_for`, so a crash loop's short restarts do not reset it),
    or when no target exists for ``for``; a warning for each target down that long while
    others are up. Value: seconds down within the window (none for the no-target rule)."""
    alert = plan.alerts.get(KEY)
    if alert is None:
        return []
    window = int(alert.params["window_ms"])
    up = selector("up", plan.matchers)
    keys = ", ".join(plan.keeping(*(m.label for m in plan.matchers)))
    all_down = held_for(plan, f"sum by ({keys}) ({up}) == 0", alert.for_ms, window)
    some_down = (
        f"{held_for(plan, f'{up} == 0', alert.for_ms, window)}\nunless on ({keys}) ({all_down})"
    )
    targets = ", ".join(f"{m.label}={{{{ $labels.{m.label} }}}}" for m in plan.matchers)
    text = {
        "targets": targets,
        "held": format_duration_ms(max(alert.for_ms, plan.scrape_interval_ms)),
        "window": format_duration_ms(window),
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
            f"absent({up})",
            alert.for_ms,
            alert.severity,
            None,
            scope="absent",
            **text,
        ),
        alert_rule(plan, ALERT, some_down, 0, "warning", windowed, scope="some", **text),
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
    window = int(alert.params["window_ms"])
    least = max(alert.for_ms, plan.scrape_interval_ms) / 1000
    every, absent_rule, some = rules(plan)  # all, absent, some
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
            "ModelTargetDown: no target at all pages",
            with_up(),
            length,
            [check(at, absent_rule, absent_keys, None)],
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
)
