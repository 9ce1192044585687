"""Generated ``promtool test rules`` files: proof that every rendered alert fires and stays quiet.

For each plan this builds ``rules/<service>.test.yaml`` (promtool unit-test format, rule file
named relative to the test file). Every series name, selector, ``le`` spelling and threshold is
read from the plan, so the tests follow any spec and preset.

The traffic model, the cases of each tier and guard, and why their expectations are exact:
docs/architecture.md, "Generated promtool tests".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from generator import naming, slo
from generator.builders.common import Group, Rule
from generator.builders.guard_inputs import SignalInput, Source
from generator.builders.guard_rules import CARRIES, signal_inputs
from generator.builders.memory_rules import POD_LABELS
from generator.builders.pods import (
    KSM_POD_OWNER,
    KSM_REPLICASET_OWNER,
    OWNER_RECORD,
    example_pods,
    replica_metrics,
)
from generator.builders.promtool_series import (
    BASE_PER_MIN,
    CHECK_MS,
    INTERVAL_MS,
    MARGIN,
    TIE_BREAK,
    UUID,
    Klass,
    Series,
    after_for,
    agg_of,
    alert_test,
    container_labels,
    expected_alert,
    family_case,
    fire_and_quiet,
    healthy,
    labels_of,
    mixed,
    promtool_group,
    series_text,
    sidecar_labels,
    slow_class,
    steps_until,
    traffic,
    up_labels,
)
from generator.builders.rulefile import alert_rules, rule_groups
from generator.builders.test_merge import merge_cases, reads
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
from generator.errors import Diagnostic, ObsgenError
from generator.families import FAMILIES
from generator.families.gpu import GPU_LABELS
from generator.plan import ServicePlan, SLOPlan
from generator.promql import Matcher, go_float
from generator.slo import Tier
from generator.units import decimal_str, format_duration_ms, seconds_text
from generator.yamlio import dump_yaml, generated_header


def slo_bad_ratio(s: SLOPlan, classes: Sequence[Klass]) -> tuple[Fraction, float]:
    """(bad-event ratio, events per second) the SLI ``s`` sees for ``classes``."""
    total = sum(Fraction(k.per_min) for k in classes)
    if total == 0:
        return Fraction(0), 0.0
    if s.histogram is None:
        bad = sum(Fraction(k.per_min) for k in classes if k.error)
    else:
        h, limit = s.histogram, s.threshold_seconds or 0.0
        bad = sum(Fraction(k.per_min) for k in classes if k.duration(h) > limit)
    return bad / total, float(total) / 60


def _burn_alerts(
    plan: ServicePlan, classes: Sequence[Klass], fires: Callable[[SLOPlan, Tier], bool]
) -> list[dict[str, Any]]:
    """Expected ``ErrorBudgetBurn`` alerts of the tiers for which ``fires(slo, tier)`` holds.

    SLOs on native histograms have no input series in promtool 2.42, so they never fire here.
    """
    rules = [r for r in alert_rules(plan) if r["alert"] == naming.ALERT_ERROR_BUDGET_BURN]
    found = []
    for s in plan.slos:
        if s.histogram is not None and s.histogram.native:
            continue
        for tier in s.tiers:
            if not fires(s, tier):
                continue
            rule = next(
                r
                for r in rules
                if r["labels"][naming.SLO] == s.name
                and r["labels"][naming.LONG_WINDOW] == naming.window(tier.long_window_ms)
                and r["labels"][naming.SHORT_WINDOW] == naming.window(tier.short_window_ms)
            )
            series = {**agg_of(plan, plan.requests.matchers), naming.SERVICE: plan.name}
            found.append(expected_alert(rule, {**series, naming.SLO: s.name}, None))
    return sorted(found, key=lambda a: sorted(a["exp_labels"].items()))


def expected_burns(plan: ServicePlan, classes: Sequence[Klass], at_ms: int) -> list[dict[str, Any]]:
    """Every ``ErrorBudgetBurn`` alert (labels, annotations) that steady ``classes`` traffic,
    counted from 0 at time 0, fires ``at_ms`` later (1m evaluations and scrapes).

    A tier fires when the SLI's bad ratio exceeds its threshold and the minimum-events guard
    counts enough events in its long window (:func:`generator.slo.recorded_events`: no credit
    for history the series does not have yet).
    """
    return burns_for_phases(plan, [(0, classes)], at_ms, INTERVAL_MS, INTERVAL_MS)


def sampling(plan: ServicePlan, step_ms: int, scrape_ms: int) -> slo.Sampling:
    """How a test file samples ``plan``'s SLO rules: promtool evaluates every ``step_ms``
    (the file's ``evaluation_interval``), series are scraped every ``scrape_ms``, and each
    increment spans the rules' own evaluation interval."""
    return slo.Sampling(plan.evaluation_interval_ms, scrape_ms, step_ms)


def burns_for_phases(
    plan: ServicePlan,
    phases: Sequence[tuple[int, Sequence[Klass]]],
    at_ms: int,
    evaluation_interval_ms: int,
    scrape_ms: int,
) -> list[dict[str, Any]]:
    """``ErrorBudgetBurn`` alerts ``at_ms`` after counters began at 0, for traffic that runs as
    each phase's classes from its start (ms) on, at one total rate, scraped every
    ``scrape_ms`` and evaluated every ``evaluation_interval_ms``.

    Both windows follow :func:`generator.slo.window_ratio` (our rules' increments, evaluation
    and scrape steps, partial history); the guard follows :func:`generator.slo.recorded_events`.
    """
    how = sampling(plan, evaluation_interval_ms, scrape_ms)

    def fires(s: SLOPlan, tier: Tier) -> bool:
        shares = [(start, slo_bad_ratio(s, classes)[0]) for start, classes in phases]
        per_s = Fraction(slo_bad_ratio(s, phases[-1][1])[1])
        events = slo.recorded_events(per_s, at_ms, tier.long_window_ms, how)
        return events >= s.min_events and all(
            slo.window_ratio(shares, at_ms, w, how) > tier.threshold
            for w in (tier.long_window_ms, tier.short_window_ms)
        )

    return _burn_alerts(plan, phases[-1][1], fires)


def _ties(plan: ServicePlan, ratio: Fraction) -> bool:
    """Whether ``ratio`` is exactly the threshold of one of ``plan``'s burn-rate tiers."""
    return 0 < ratio < 1 and any(ratio == t.threshold for s in plan.slos for t in s.tiers)


def _slo_mix(plan: ServicePlan, ratio: Fraction, bad: Klass) -> list[Klass]:
    """SLO case traffic: ``ratio`` of ``BASE_PER_MIN × 100`` events a minute are ``bad``,
    moved off an exact tie with a tier's threshold (:data:`TIE_BREAK`)."""
    return mixed(BASE_PER_MIN * 100, ratio, bad, tie_break=_ties(plan, ratio))


# --- test groups ---------------------------------------------------------------------------


def burn_check_ms(plan: ServicePlan) -> int:
    """When a steady burn-rate case is checked (ms after its counters start): once the
    fastest tier's short window holds only the case's increments (the rules' evaluation
    interval after the window), on a test step. Steady traffic gives every window the same
    ratio from the first increment on, and :func:`expected_burns` counts the guard's events
    at that time; later checks would prove the same thresholds over more evaluations."""
    shortest = min((t.short_window_ms for s in plan.slos for t in s.tiers), default=5 * 60_000)
    ready = shortest + plan.evaluation_interval_ms
    return max(2 * INTERVAL_MS, -(-ready // INTERVAL_MS) * INTERVAL_MS)


def _burn_group(
    plan: ServicePlan, name: str, classes: list[Klass], reset: bool = False
) -> dict[str, Any]:
    check = CHECK_MS + 30 * 60_000 if reset else burn_check_ms(plan)
    steps = steps_until(check)
    series = healthy(plan, classes).render(
        steps, reset_at=check // INTERVAL_MS - 10 if reset else None
    )
    tests = [
        alert_test(check, naming.ALERT_ERROR_BUDGET_BURN, expected_burns(plan, classes, check))
    ]
    return promtool_group(name, series, tests)


def new_service_group(plan: ServicePlan) -> dict[str, Any] | None:
    """A new service whose every request is bad, at a trickle: by 5m it has counted fewer than
    ``min_events`` events and must not page, though a guard that extrapolated its short history
    (the mean rate × the window) would credit its fastest long window with several times that;
    by 30m it has enough and pages. Expectations follow :func:`generator.slo.recorded_events`.
    None without burn-rate tiers."""
    slos = [s for s in plan.slos if s.tiers and not (s.histogram and s.histogram.native)]
    if not slos:
        return None
    durations: dict[str, float] = {}
    for s in slos:
        for key, d in bad_class(s).durations:
            durations[key] = max(d, durations.get(key, 0.0))
    per_min = Fraction(min(s.min_events for s in slos), 10)  # min_events / 2 by 5 minutes
    bad = [Klass(float(per_min), True, tuple(sorted(durations.items())))]
    early, late = 5 * 60_000, 30 * 60_000
    series = traffic(plan, bad).render(steps_until(late))
    fastest = min((t for s in slos for t in s.tiers), key=lambda t: t.long_window_ms)
    mean = per_min * Fraction(fastest.long_window_ms, 60_000)
    tests = [
        alert_test(
            at,
            naming.ALERT_ERROR_BUDGET_BURN,
            burns_for_phases(plan, [(0, bad)], at, INTERVAL_MS, INTERVAL_MS),
        )
        for at in (early, late)
    ]
    name = (
        f"a new service, every request bad at {decimal_str(per_min)}/min: "
        f"{decimal_str(per_min * 5)} events by 5m do not page (its mean rate alone credits the "
        f"{naming.window(fastest.long_window_ms)} window with {decimal_str(mean)}); by 30m it pages"
    )
    return promtool_group(name, series, tests)


def distinct_slos(plan: ServicePlan) -> list[SLOPlan]:
    """The SLOs of ``plan`` that need their own burn cases, in spec order.

    Every case expects the alerts of *all* SLOs (promtool compares all alerts of a name), so
    an SLO with the same SLI, tier thresholds and windows and minimum events as an earlier one
    is proved by that one's cases already; its own would repeat them, each listing every
    SLO's alerts — test files quadratic in the number of such SLOs (issue 15, case 10).
    """
    seen: set[tuple[Any, ...]] = set()
    distinct = []
    for s in plan.slos:
        key = (
            s.histogram.key if s.histogram is not None else None,
            s.threshold_seconds,
            s.min_events,
            tuple((t.long_window_ms, t.short_window_ms, t.threshold) for t in s.tiers),
        )
        if key not in seen:
            seen.add(key)
            distinct.append(s)
    return distinct


def restart_outage_group(plan: ServicePlan) -> dict[str, Any] | None:
    """A process that has run for a day restarts just after a scrape and every request fails
    from then on: its counters start again from 0 and the first scrape after the restart
    already holds a minute of bad events. The increments count those (the new value, as each
    counter dropped), so the tiers a minute of outage is enough for fire at that scrape's
    evaluation — and nothing fires one evaluation earlier. A rule that drops the reset (or
    keeps the negative difference) misses them. Expectations follow
    :func:`generator.slo.window_ratio` (no events are lost to this restart). None without
    burn-rate tiers."""
    slos = [s for s in plan.slos if s.tiers and not (s.histogram and s.histogram.native)]
    if not slos:
        return None
    durations: dict[str, float] = {}
    for s in slos:
        for key, d in bad_class(s).durations:
            durations[key] = max(d, durations.get(key, 0.0))
    good = [Klass(BASE_PER_MIN * 100)]
    bad = [Klass(BASE_PER_MIN * 100, True, tuple(sorted(durations.items())))]
    fastest = min(t.long_window_ms for s in slos for t in s.tiers)
    how = sampling(plan, INTERVAL_MS, INTERVAL_MS)
    restart = how.aligned(fastest + plan.evaluation_interval_ms)
    onset = restart + INTERVAL_MS  # the first scrape after the restart
    series = _onset_series(
        plan, good, bad, restart // INTERVAL_MS, onset // INTERVAL_MS + 2, INTERVAL_MS, True
    )
    phases = [(0, good), (restart, bad)]
    tests = [
        alert_test(
            at,
            naming.ALERT_ERROR_BUDGET_BURN,
            burns_for_phases(plan, phases, at, INTERVAL_MS, INTERVAL_MS),
        )
        for at in (restart, onset)
    ]
    name = (
        "a pod restart, then every request bad: the restarted counters' first scrape counts "
        f"(at {format_duration_ms(onset)} the tiers a minute of outage trips fire, at "
        f"{format_duration_ms(restart)} none)"
    )
    return promtool_group(name, series, tests)


@dataclass(frozen=True)
class _ThresholdCase:
    """One SLO's case of one tier: its own bad class (:func:`bad_class`) at ``share``."""

    slo: SLOPlan
    tier: Tier
    share: Fraction
    name: str


def _threshold_mix(plan: ServicePlan, cases: Sequence[_ThresholdCase]) -> list[Klass] | None:
    """The traffic of ``cases`` (one per SLO) in one input block: :func:`_shares_mix`, or None."""
    if len({c.slo.name for c in cases}) < len(cases):
        return None
    return _shares_mix(plan, [(c.slo, c.tier) for c in cases], [c.share for c in cases])


def _threshold_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """Per SLO and tier, 5 % above the threshold fires and 5 % below stays quiet, with the
    cases of several SLOs in one group where one traffic mix gives each SLO its own case's
    share (:func:`_shares_mix`: each SLO's bad events are its own class, one no other SLO
    counts). Each SLO then sees exactly the traffic of its own case, and the check expects
    the alerts of every SLO for the joint mix, so no assertion is weaker; the steps are paid
    once per group instead of once per case. Cases are packed per tier windows and side, in
    spec order, each into the first group of its key it fits (one case per SLO a group)."""
    packed: dict[tuple[int, int, bool], list[list[_ThresholdCase]]] = {}
    for s in distinct_slos(plan):
        if s.histogram is not None and s.histogram.native:
            continue
        for tier in s.tiers:
            where = f"{s.name} {naming.window(tier.long_window_ms)}/{naming.window(tier.short_window_ms)}"
            factor = decimal_str(tier.factor)
            high = min(Fraction(1), tier.threshold * (1 + MARGIN))
            low = tier.threshold * (1 - MARGIN)
            sides = [(False, low, f"{where}: burning 5% below {factor}x stays quiet")]
            if high > tier.threshold:
                sides.insert(0, (True, high, f"{where}: burning 5% above {factor}x fires"))
            for above, share, name in sides:
                case = _ThresholdCase(s, tier, share, name)
                groups = packed.setdefault((tier.long_window_ms, tier.short_window_ms, above), [])
                fitting = (g for g in groups if _threshold_mix(plan, [*g, case]) is not None)
                group = next(fitting, None)
                if group is None:
                    groups.append([case])
                else:
                    group.append(case)
    out = []
    for groups in packed.values():
        for cases in groups:
            first = cases[0]
            mix = _threshold_mix(plan, cases) if len(cases) > 1 else None
            out.append(
                _burn_group(
                    plan,
                    " | ".join(c.name for c in cases),
                    mix or _slo_mix(plan, first.share, bad_class(first.slo)),
                )
            )
    return out


def _joint_mix(
    plan: ServicePlan, parts: Sequence[tuple[SLOPlan, Fraction, Klass]]
) -> list[Klass] | None:
    """One traffic mix of ``BASE_PER_MIN × 100`` events a minute holding each part's class at
    its share, where part ``(slo, share, klass)`` stands for the case ``_slo_mix(plan, share,
    klass)``; None when the shares do not fit or some part's SLO would see a bad share other
    than in its own case (one class counts against another part's SLO)."""
    total = BASE_PER_MIN * 100
    own = [_slo_mix(plan, share, k) for _, share, k in parts]
    bad = [Klass(k.per_min, k.error, k.durations) for mix in own for k in mix[1:]]
    good = total - sum(Fraction(k.per_min) for k in bad)
    if good < 0:
        return None
    mix = [Klass(float(good)), *bad]
    if Fraction(mix[0].per_min) != good or any(
        slo_bad_ratio(s, mix)[0] != slo_bad_ratio(s, alone)[0]
        for (s, _, _), alone in zip(parts, own, strict=True)
    ):
        return None
    return mix


def _all_bad(slos: Sequence[SLOPlan], per_min: float) -> Klass:
    """``per_min`` events a minute that each SLO of ``slos`` counts as bad when it can: failures,
    slow on every latency SLO's histogram (check with :func:`slo_bad_ratio`)."""
    durations: dict[str, float] = {}
    for s in slos:
        for key, d in bad_class(s).durations:
            durations[key] = max(d, durations.get(key, 0.0))
    return Klass(per_min, True, tuple(sorted(durations.items())))


def expected_budget_lows(
    plan: ServicePlan, classes: Sequence[Klass], at_ms: int
) -> list[dict[str, Any]]:
    """Every ``ErrorBudgetLow`` alert that steady ``classes`` traffic, counted from 0 at time
    0, fires ``at_ms`` later: per SLO, the lowest level above the budget left over the SLO
    window (:func:`generator.slo.window_ratio`), once the window counted ``min_events``."""
    rules = [r for r in alert_rules(plan) if r["alert"] == naming.ALERT_ERROR_BUDGET_LOW]
    how = sampling(plan, INTERVAL_MS, INTERVAL_MS)
    found = []
    for s in plan.slos:
        if not s.budget_levels or (s.histogram is not None and s.histogram.native):
            continue
        ratio, per_s = slo_bad_ratio(s, classes)
        events = slo.recorded_events(Fraction(per_s), at_ms, s.window_ms, how)
        left = 1 - slo.window_ratio([(0, ratio)], at_ms, s.window_ms, how) / s.error_budget
        crossed = [lvl for lvl in s.budget_levels if left < Fraction(str(lvl))]
        if events < s.min_events or not crossed:
            continue
        percent = decimal_str(Fraction(str(crossed[-1])) * 100)
        rule = next(
            r
            for r in rules
            if r["labels"][naming.SLO] == s.name and r["labels"][naming.BUDGET_LEFT] == percent
        )
        series = {**agg_of(plan, plan.requests.matchers), naming.SERVICE: plan.name}
        found.append(expected_alert(rule, {**series, naming.SLO: s.name}, None))
    return sorted(found, key=lambda a: sorted(a["exp_labels"].items()))


def budget_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """``ErrorBudgetLow``: every request bad spends every SLO's budget (its lowest level
    tickets); per SLO, bad events at 62.5 % of its budget leave 37.5 % (the level above
    tickets, between 50 % and 25 % by default); a healthy service keeps its budget (none)."""
    slos = [s for s in plan.slos if s.budget_levels and not (s.histogram and s.histogram.native)]
    if not slos:
        return []
    cases = [
        (
            "every request bad: each SLO's lowest budget level tickets",
            [_all_bad(slos, BASE_PER_MIN)],
        ),
        ("healthy traffic keeps every budget: no ErrorBudgetLow", [Klass(BASE_PER_MIN)]),
    ]
    for s in distinct_slos(plan):
        if s not in slos or len(s.budget_levels) < 2:
            continue
        top, below = (Fraction(str(x)) for x in s.budget_levels[:2])
        ratio = (1 - (top + below) / 2) * s.error_budget
        cases.append(
            (
                f"{s.name}: {decimal_str((1 - (top + below) / 2) * 100)}% of its budget spent "
                f"leaves {decimal_str((top + below) / 2 * 100)}%: the "
                f"{decimal_str(top * 100)}% level tickets",
                _slo_mix(plan, ratio, bad_class(s)),
            )
        )
    groups = []
    for name, classes in cases:
        series = healthy(plan, classes).render(steps_until(CHECK_MS))
        tests = [
            alert_test(
                CHECK_MS,
                naming.ALERT_ERROR_BUDGET_LOW,
                expected_budget_lows(plan, classes, CHECK_MS),
            )
        ]
        groups.append(promtool_group(name, series, tests))
    return groups


def slo_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """Per SLO and tier: 5 % above the threshold fires, 5 % below stays quiet (several SLOs'
    cases of one tier in one group when they fit: :func:`_threshold_groups`); latency SLOs:
    slow requests just above the threshold bucket burn, just below do not (the latency SLOs'
    cases of one side in one group when they fit: :func:`_joint_mix`); a low-traffic case for
    the minimum-events guard (SLOs with the same rate in one group, every event bad for each
    of them); a counter reset raises nothing."""
    groups = _threshold_groups(plan)
    slos = [s for s in distinct_slos(plan) if not (s.histogram and s.histogram.native)]
    for above in (True, False):
        word = "just above" if above else "just below"
        packed: list[list[tuple[SLOPlan, Fraction, Klass]]] = []
        for s in slos:
            if s.histogram is None or not s.tiers:
                continue
            ratio = min(Fraction(1), max(t.threshold for t in s.tiers) * 2)
            part = (s, ratio, slow_class(s.histogram, s.threshold_seconds or 0.0, above))
            for members in packed:
                if _joint_mix(plan, [*members, part]) is not None:
                    members.append(part)
                    break
            else:
                packed.append([part])
        for members in packed:
            mix = _joint_mix(plan, members) if len(members) > 1 else None
            groups.append(
                _burn_group(
                    plan,
                    " | ".join(
                        f"{s.name}: slow requests {word} the threshold bucket "
                        + ("burn budget" if above else "do not burn budget")
                        for s, _, _ in members
                    ),
                    mix or _slo_mix(plan, members[0][1], members[0][2]),
                )
            )
    # Only bad events, but so few that the fastest tier's long window misses min_events.
    few: dict[Fraction, list[tuple[SLOPlan, int]]] = {}
    for s in slos:
        if s.tiers:
            fastest = min(t.long_window_ms for t in s.tiers)
            few.setdefault(Fraction(s.min_events, 2) * 60_000 / fastest, []).append((s, fastest))
    for per_min, owners in few.items():
        joint = _all_bad([s for s, _ in owners], float(per_min))
        fits = len(owners) > 1 and all(slo_bad_ratio(s, [joint])[0] == 1 for s, _ in owners)
        for case in [owners] if fits else [[m] for m in owners]:
            k = joint if fits else bad_class(case[0][0])
            groups.append(
                _burn_group(
                    plan,
                    " | ".join(
                        f"{s.name}: fewer than {s.min_events} events in "
                        f"{naming.window(fastest)} do not page"
                        for s, fastest in case
                    ),
                    [Klass(float(per_min), k.error, k.durations)],
                )
            )
    start = new_service_group(plan)
    if start is not None:
        groups.append(start)
    restart = restart_outage_group(plan)
    if restart is not None:
        groups.append(restart)
    groups += budget_groups(plan)
    lowest = [t.threshold for s in plan.slos for t in s.tiers]
    if lowest:
        ratio = min(lowest) / 2
        groups.append(
            _burn_group(
                plan,
                "a counter reset (pod restart) raises no burn alert",
                _slo_mix(plan, ratio, Klass(0, True)),
                reset=True,
            )
        )
    return groups


# --- detection time ------------------------------------------------------------------------

# Evaluation intervals of detection cases, finest first; each interval gets its own test file
# (``evaluation_interval`` is per file). promtool evaluates every rule at every step, so a 3d
# tier at 1m would take thousands of steps; the coarsest interval that leaves at least
# MIN_WINDOW_SAMPLES evaluations in the long window keeps each case near 50–150 steps.
DETECTION_INTERVALS_MS = (60_000, 600_000, 3_600_000, 10_800_000)
MIN_WINDOW_SAMPLES = 24
# Scrape interval of the coarser cases (days of 15s samples would dominate promtool's time).
# At a coarse step the rules' increments cover only the scrape interval before each
# evaluation; :class:`generator.slo.Sampling` models that, and piecewise-constant traffic
# that changes on evaluations keeps every window ratio exact.
SLOW_SCRAPE_MS = 150_000


def detection_interval_ms(tier: Tier) -> int:
    """Evaluation interval (ms) of ``tier``'s detection case (see DETECTION_INTERVALS_MS)."""
    fitting = [e for e in DETECTION_INTERVALS_MS if tier.long_window_ms // e >= MIN_WINDOW_SAMPLES]
    return max(fitting, default=DETECTION_INTERVALS_MS[0])


def _scrape_ms(plan: ServicePlan, e: int) -> int:
    """Series step of a detection case: the spec's scrape interval in the 1m file (what
    ``obsgen explain`` assumes), SLOW_SCRAPE_MS in the coarser files."""
    return plan.scrape_interval_ms if e == INTERVAL_MS else SLOW_SCRAPE_MS


def _onset_series(
    plan: ServicePlan,
    before: Sequence[Klass],
    after: Sequence[Klass],
    onset_steps: int,
    steps: int,
    scrape_ms: int,
    restart: bool = False,
) -> list[dict[str, str]]:
    """Counters scraped every ``scrape_ms``, growing as ``before`` until step ``onset_steps``,
    then as ``after``. ``restart``: the process had run for a day before the series begin
    (every counter starts at a day of the whole traffic, failures and buckets included) and
    restarts after step ``onset_steps``, counting from 0 again."""
    a, b = traffic(plan, before), traffic(plan, after)
    out = []
    per_step = scrape_ms / 60_000  # Klass rates are per minute
    base = BASE_PER_MIN * 100 * 1440 if restart else 0
    for key in sorted(set(a.counters) | set(b.counters)):
        x, y = a.counters.get(key, 0.0) * per_step, b.counters.get(key, 0.0) * per_step
        first = y if restart else x * onset_steps + y
        values = (
            f"{base}+{go_float(x)}x{onset_steps} "
            f"{go_float(first)}+{go_float(y)}x{steps - onset_steps - 1}"
        )
        out.append({"series": series_text(key[0], dict(key[1])), "values": values})
    return out


def _shares_mix(
    plan: ServicePlan, members: Sequence[tuple[SLOPlan, Tier]], targets: Sequence[Fraction]
) -> list[Klass] | None:
    """Traffic giving each member SLO its target bad share, every SLO by its own bad class;
    None when the shares do not fit or one class counts against another SLO."""
    total = BASE_PER_MIN * 100
    shares = [r + (TIE_BREAK / total if _ties(plan, r) else 0) for r in targets]
    if sum(shares) > 1:
        return None
    bad = [
        Klass(float(r * total), k.error, k.durations)
        for r, (s, _) in zip(shares, members, strict=True)
        for k in [bad_class(s)]
    ]
    mix = [Klass(float(total - sum(r * total for r in shares))), *bad]
    if any(slo_bad_ratio(s, mix)[0] != r for r, (s, _) in zip(shares, members, strict=True)):
        return None
    return mix


def _outage_mix(plan: ServicePlan, slos: Sequence[SLOPlan]) -> list[Klass] | None:
    """A total outage for every SLO of ``slos`` at once: one class of events that each of them
    counts as bad (:func:`_all_bad`); None when one of them would not count it so."""
    mix = [_all_bad(slos, BASE_PER_MIN * 100)]
    if any(slo_bad_ratio(s, mix)[0] != 1 for s in slos):
        return None
    return mix


def detection_group(
    plan: ServicePlan, members: Sequence[tuple[SLOPlan, Tier]], outage: bool = False
) -> tuple[int, dict[str, Any]] | None:
    """(evaluation interval, case) for tiers with the same windows (one per SLO): healthy
    traffic for the long window + one evaluation interval, then every SLO burning 5 % above
    its tier's threshold; silent one evaluation before the detection time our rules give
    (:func:`generator.slo.detection_ms`, at the spec's scrape interval in the 1m file), firing
    at it. None when the members cannot share a case (different detection times, or their
    bad shares do not fit) or a threshold leaves no room above it.

    ``outage`` (1m file only): every event bad for every member SLO at once
    (:func:`_outage_mix`); each member's tier is asserted silent one evaluation before its own
    detection time and firing at it, and every assertion expects the alerts of every SLO at
    that time (:func:`burns_for_phases`). None when one class cannot be bad for all members."""
    tier = members[0][1]
    e = detection_interval_ms(tier)
    if outage and e != INTERVAL_MS:
        return None
    targets = [
        Fraction(1) if outage else min(Fraction(1), t.threshold * (1 + MARGIN)) for _, t in members
    ]
    after = (
        _outage_mix(plan, [s for s, _ in members])
        if outage and len(members) > 1
        else _shares_mix(plan, members, targets)
    )
    if after is None:
        return None
    scrape = _scrape_ms(plan, e)
    how = sampling(plan, e, scrape)
    found = [slo.detection_ms(t, slo_bad_ratio(s, after)[0], how) for s, t in members]
    detects = [d for d in found if d is not None]
    if len(detects) != len(members) or (not outage and len(set(detects)) != 1):
        return None
    history = how.aligned(tier.long_window_ms + plan.evaluation_interval_ms)
    healthy_traffic = [Klass(BASE_PER_MIN * 100)]
    checks = sorted({history + d - since for d in detects for since in (e, 0)})
    steps = checks[-1] // scrape + 2
    series = _onset_series(plan, healthy_traffic, after, history // scrape, steps, scrape)
    tests = [
        alert_test(
            at,
            naming.ALERT_ERROR_BUDGET_BURN,
            burns_for_phases(plan, [(0, healthy_traffic), (history, after)], at, e, scrape),
        )
        for at in checks
    ]

    def name(part: Sequence[int]) -> str:
        """The case of members ``part`` (indexes), which share one detection time."""
        detect = detects[part[0]]
        # One evaluation earlier the short window is normally over already: a fresh spike that
        # a lowered long-window threshold would let through.
        spike = all(
            slo.window_ratio(
                [(0, Fraction(0)), (history, slo_bad_ratio(members[i][0], after)[0])],
                history + detect - e,
                members[i][1].short_window_ms,
                how,
            )
            > members[i][1].threshold
            for i in part
        )
        workbook = min(members[i][1].detection_seconds(targets[i]) for i in part)
        what = "every event bad" if outage else "5% above the threshold"
        return (
            f"{', '.join(members[i][0].name for i in part)} "
            f"{naming.window(tier.long_window_ms)}/{naming.window(tier.short_window_ms)}: "
            f"{what} after a healthy {format_duration_ms(history)} fires "
            f"{format_duration_ms(detect)} in, not {seconds_text(Fraction(detect - e, 1000))}"
            f"{' (short window over, long under)' if spike else ''} "
            f"(Workbook: {seconds_text(workbook)})"
        )

    # A total outage names each SLO's case apart (each its own time); else one time for all.
    parts = [[i] for i in range(len(members))] if outage else [list(range(len(members)))]
    return e, promtool_group(" | ".join(map(name, parts)), series, tests, scrape)


def outage_group(
    plan: ServicePlan, members: Sequence[tuple[SLOPlan, Tier]]
) -> tuple[int, dict[str, Any]] | None:
    """:func:`detection_group` for a total outage: the time ``obsgen explain`` prints."""
    return detection_group(plan, members, outage=True)


def burst_ended_group(
    plan: ServicePlan, members: Sequence[tuple[SLOPlan, Tier]]
) -> tuple[int, dict[str, Any]] | None:
    """(evaluation interval, case) for tiers with the same windows: every SLO burns at twice its
    threshold, then drops to 5 % below it; once the short window holds only the low share
    (its ratio is exactly 95 % of the threshold) the long window is still over, and the tier
    must stay silent. A lowered short-window threshold fires here. None when the shares do not
    fit or the long window would not be over."""
    tier = members[0][1]
    e = detection_interval_ms(tier)
    burst = _shares_mix(plan, members, [min(Fraction(1), t.threshold * 2) for _, t in members])
    low = _shares_mix(plan, members, [t.threshold * (1 - MARGIN) for _, t in members])
    if burst is None or low is None:
        return None
    scrape = _scrape_ms(plan, e)
    how = sampling(plan, e, scrape)
    # Long enough for the short window to hold only the low phase.
    switch = how.aligned(tier.short_window_ms + plan.evaluation_interval_ms)
    at = 2 * switch
    for s, t in members:
        shares = [(0, slo_bad_ratio(s, burst)[0]), (switch, slo_bad_ratio(s, low)[0])]
        if slo.window_ratio(shares, at, t.long_window_ms, how) <= t.threshold:
            return None
    series = _onset_series(plan, burst, low, switch // scrape, at // scrape + 2, scrape)
    expected = burns_for_phases(plan, [(0, burst), (switch, low)], at, e, scrape)
    name = (
        f"{', '.join(s.name for s, _ in members)} "
        f"{naming.window(tier.long_window_ms)}/{naming.window(tier.short_window_ms)}: "
        f"a burst that ended (2x the threshold for {format_duration_ms(switch)}, then 5% below) "
        "stays silent: long window over, short window under"
    )
    return e, promtool_group(
        name, series, [alert_test(at, naming.ALERT_ERROR_BUDGET_BURN, expected)], scrape
    )


def detection_groups(plan: ServicePlan) -> dict[int, list[dict[str, Any]]]:
    """Detection-time (5 % above; a total outage in the 1m file) and burst-ended cases of every
    tier, by evaluation interval (ms). Tiers with the same windows share one case when they
    can (fewer promtool steps); otherwise one case each."""
    by_windows: dict[tuple[int, int], list[tuple[SLOPlan, Tier]]] = {}
    for s in distinct_slos(plan):
        if s.histogram is not None and s.histogram.native:
            continue
        for tier in s.tiers:
            by_windows.setdefault((tier.long_window_ms, tier.short_window_ms), []).append((s, tier))
    out: dict[int, list[dict[str, Any]]] = {}
    for _, members in sorted(by_windows.items()):
        for build in (detection_group, outage_group, burst_ended_group):
            shared = build(plan, members)
            cases = [shared] if shared else [build(plan, [m]) for m in members]
            for case in cases:
                if case is not None:
                    out.setdefault(case[0], []).append(case[1])
    return out


def bad_class(s: SLOPlan) -> Klass:
    """A request the SLI counts as bad: a failure, or one just above the latency threshold."""
    if s.histogram is None:
        return Klass(0, True)
    return slow_class(s.histogram, s.threshold_seconds or 0.0, above=True)


def _rule(plan: ServicePlan, alert: str, severity: str | None = None) -> Rule:
    return next(
        r
        for r in alert_rules(plan)
        if r["alert"] == alert and (severity is None or r["labels"][naming.SEVERITY] == severity)
    )


def family_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """A firing and a quiet case for every non-SLO alert family the plan enables."""
    base = [Klass(BASE_PER_MIN)]
    groups: list[dict[str, Any]] = []
    alerts = plan.alerts

    def case(
        key: str, alert: str, fire: Series, quiet: Series, expected: list[dict[str, Any]]
    ) -> None:
        groups.extend(fire_and_quiet(plan, key, alert, fire, quiet, expected))

    for family in FAMILIES:
        if family.group != "gpu":
            groups += family.cases(plan)
    groups += target_down_groups(plan)
    groups += crash_loop_groups(plan)
    groups += replicas_groups(plan)
    if plan.gpu_exporter:
        gpu = sidecar_labels(plan)
        gpu_out = {k: gpu[k] for k in plan.keeping(*GPU_LABELS) if k in gpu} | {"uuid": UUID}
        for family in FAMILIES:
            if family.group == "gpu":
                groups += family.cases(plan)
        if "gpu_xid_errors" in alerts:
            fire = healthy(plan, base)
            fire.gauge(naming.GPU_XID_ERRORS, {**gpu, "uuid": UUID, "xid": "79"}, "0x10 1x50")
            rule = _rule(plan, naming.ALERT_GPU_XID)
            case(
                "gpu_xid_errors",
                rule["alert"],
                fire,
                healthy(plan, base),
                [expected_alert(rule, gpu_out | {"xid": "79"}, None)],
            )
        if "gpu_exporter_down" in alerts:
            fire = healthy(plan, base)
            fire.gauge(naming.GPU_EXPORTER_UP, gpu, "0+0x60")
            rule = _rule(plan, naming.ALERT_GPU_EXPORTER_DOWN)
            out: dict[str, str] = {k: gpu[k] for k in plan.keeping("namespace", "pod") if k in gpu}
            case(
                "gpu_exporter_down",
                rule["alert"],
                fire,
                healthy(plan, base),
                [expected_alert(rule, out, None)],
            )
        if "gpu_device_lost" in alerts:
            groups += device_lost_groups(plan)
        groups += slowdown_groups(plan)
        groups += unsupported_reading_groups(plan)
    return groups


# --- capacity, GPU devices and MIG ----------------------------------------------------------


def target_down_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """``ModelTargetDown``: every target down pages, no target at all pages, one of two down
    tickets, targets up stay quiet; a single replica crash-looping (down 3 of every 4 minutes,
    and with a short back-off 1 of every 2 — a ``for`` would be reset by every restart)
    pages; a healthy restart (the pod replaced, its successor up within two minutes) stays
    quiet."""
    alert = plan.alerts.get("target_down")
    if alert is None:
        return []
    window = int(alert.params["window_ms"])
    least = max(alert.for_ms, plan.scrape_interval_ms) / 1000
    rules = [r for r in alert_rules(plan) if r["alert"] == naming.ALERT_TARGET_DOWN]
    every, absent_rule, some = rules  # target_down_alerts' order: all, absent, some
    up = up_labels(plan)
    keys = {k: up[k] for k in plan.keeping(*(m.label for m in plan.matchers))}
    # absent() carries the selector's equality labels only: no cluster label.
    absent_keys = {m.label: up[m.label] for m in plan.matchers}
    at = after_for(plan, "target_down")
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
            return alert_test(t, naming.ALERT_TARGET_DOWN, [])
        value = None if held is None else held_seconds(plan, held, t, window)
        if value is not None and value < least:
            raise ValueError(f"{naming.ALERT_TARGET_DOWN} case would not fire at {t} ms")
        return alert_test(t, naming.ALERT_TARGET_DOWN, [expected_alert(rule, labels, value)])

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


def replicas_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """``ModelReplicasUnavailable``: one replica short by kube-state-metrics fires; without
    kube-state-metrics, fewer targets up than ``deployment.replicas`` fires (two or more
    replicas); a replica that flaps between available and crashed (short 3 of every 4
    minutes) fires although a ``for`` would be reset; a rolling restart (each pod back within
    two minutes, one at a time) stays quiet. All replicas available stays quiet although only
    one target is scraped: :func:`long_healthy_group`."""
    alert = plan.alerts.get("replicas_unavailable")
    if alert is None:
        return []
    window = int(alert.params["window_ms"])
    least = max(alert.for_ms, plan.scrape_interval_ms) / 1000
    at = alert.for_ms + INTERVAL_MS  # gauges from the first sample: one evaluation past `for`
    # Long enough for the flapping and rolling-restart cases whatever the window.
    length = steps_until(max(at + window, 30 * INTERVAL_MS))
    rule = _rule(plan, naming.ALERT_REPLICAS_UNAVAILABLE)
    name = rule["alert"]
    ns = {k: v for k, v in up_labels(plan).items() if k in plan.keeping("namespace")}
    _, available, workload = replica_metrics(plan)
    series_labels = {**ns, workload: plan.deployment_name}
    r = float(plan.replicas)

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
    return groups


def crash_loop_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """``ModelContainerCrashLooping``: ``minRestarts`` restarts within the window fires; fewer
    restarts while kube-state-metrics shows the container waiting in ``CrashLoopBackOff``
    (a back-off longer than the restarts' pace) fires; one restart without a back-off (an
    OOM kill, a rollout's new container) stays quiet."""
    alert = plan.alerts.get("crash_loop")
    if alert is None:
        return []
    window = int(alert.params["window_ms"])
    minimum = int(alert.params["min_restarts"])
    rule = _rule(plan, naming.ALERT_CRASH_LOOP)
    pod = container_labels(plan)
    out = {k: pod[k] for k in plan.keeping(*POD_LABELS) if k in pod}
    # The window holds two healthy minutes and every restart (one a minute from 5m on; at
    # most window − 2 minutes of them, which resolve() checks).
    at = 3 * INTERVAL_MS + window
    length = steps_until(at)

    def restarting(counts: Minutes, waiting: Minutes = ()) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)], length)
        s.gauge(naming.KSM_RESTARTS, pod, values_text(counts))
        if waiting:
            labels = {**pod, "reason": naming.CRASH_LOOP_REASON}
            s.gauge(naming.KSM_WAITING_REASON, labels, values_text(waiting))
        return s

    def restarts(count: int) -> Minutes:
        values = [0.0] * 5 + [float(c) for c in range(1, count + 1)]
        return values + [float(count)] * (length - len(values))

    few = max(minimum - 1, 1)
    waiting: Minutes = ([None] * 5 + [1.0, None] * length)[:length]
    name = rule["alert"]
    one = "fires" if minimum == 1 else "stays quiet"
    return [
        gauge_group(
            f"{name}: {minimum} restart(s) within {format_duration_ms(window)} fires",
            restarting(restarts(minimum)),
            length,
            [alert_test(at, name, [expected_alert(rule, out, float(minimum))])],
        ),
        gauge_group(
            f"{name}: {few} restart(s) while waiting in {naming.CRASH_LOOP_REASON} fires",
            restarting(restarts(few), waiting),
            length,
            [alert_test(at, name, [expected_alert(rule, out, float(few))])],
        ),
        gauge_group(
            f"{name}: one restart without a back-off {one}",
            restarting(restarts(1)),
            length,
            [alert_test(at, name, [] if minimum > 1 else [expected_alert(rule, out, 1.0)])],
        ),
    ]


def slowdown_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """``GPUHardwareSlowdown``: a power brake active 2 of every 3 minutes fires (a ``for``
    would be reset each time it lifts); a brake of two minutes once, and a software power cap
    held throughout, stay quiet."""
    alert = plan.alerts.get("gpu_hardware_slowdown")
    if alert is None:
        return []
    window = int(alert.params["window_ms"])
    least = max(alert.for_ms, plan.scrape_interval_ms) / 1000
    rule = _rule(plan, naming.ALERT_GPU_SLOWDOWN)
    name = rule["alert"]
    gpu = {**sidecar_labels(plan), "uuid": UUID}
    length = steps_until(5 * INTERVAL_MS + 2 * window)

    def braking(values: Minutes, reason: str = "hw_power_brake_slowdown") -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)], length)
        s.gauge(naming.GPU_CLOCK_EVENT_ACTIVE, {**gpu, "reason": reason}, values_text(values))
        return s

    flapping = cycle(5, 1.0, 0.0, 2, 1, length)

    def held(t: int) -> bool:
        return sample(flapping, t) == 1

    fire = first_firing(plan, held, window, least, length)
    labels = {k: v for k, v in gpu.items() if k in plan.keeping(*GPU_LABELS)}
    labels["reason"] = "hw_power_brake_slowdown"
    once: Minutes = [0.0] * 5 + [1.0] * 2 + [0.0] * (length - 7)
    quiet = braking(once)
    quiet.gauge(naming.GPU_CLOCK_EVENT_ACTIVE, {**gpu, "reason": "sw_power_cap"}, f"1+0x{length}")
    groups = [
        gauge_group(
            f"{name}: a power brake active 2 of every 3 minutes fires",
            braking(flapping),
            length,
            [
                alert_test(
                    fire,
                    name,
                    [expected_alert(rule, labels, held_seconds(plan, held, fire, window))],
                )
            ],
        )
    ]
    if held_seconds(plan, lambda t: sample(once, t) == 1, 7 * INTERVAL_MS, window) < least:
        groups.append(
            gauge_group(
                f"{name}: a brake of two minutes once, and a software power cap, stay quiet",
                quiet,
                length,
                [alert_test(t * INTERVAL_MS, name, []) for t in (7, 10, 20)],
            )
        )
    return groups


def unsupported_reading_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """A unified-memory GPU (GB10): no frame-buffer memory series, and the exporter reports
    ``memory_info`` unsupported there: the ``gpuMemory`` guard stays quiet (its missing
    series with no such report fires it: :func:`guard_groups`). Likewise a GPU without a
    temperature reading and one without clock event reasons."""
    inputs = {i.signal: i for i in signal_inputs(plan)}
    readings = {
        "gpuMemory": ("memory_info", (naming.GPU_MEMORY_FREE, naming.GPU_MEMORY_TOTAL)),
        "gpuTemperature": ("temperature", (naming.GPU_TEMPERATURE,)),
        "gpuClockEvents": ("supported_reasons", (naming.GPU_CLOCK_EVENT_ACTIVE,)),
    }
    found = [(signal, readings[signal]) for signal in readings if signal in inputs]
    if not found:
        return []
    gpu = {**sidecar_labels(plan), "uuid": UUID}
    s = healthy(plan, [Klass(BASE_PER_MIN)])
    for _signal, (reading, metrics) in found:
        for metric in metrics:
            without(s, metric)
        s.gauge(naming.GPU_READING_UNSUPPORTED, {**gpu, "reading": reading}, "1+0x60")
    expected = expected_guards(plan, s)
    if any(a["exp_labels"].get(naming.SIGNAL) in readings for a in expected):
        raise ValueError("a guard would fire on a reading the exporter reports unsupported")
    at = plan.alerts["signal_missing"].for_ms + INTERVAL_MS
    names = ", ".join(f"{r} ({sig})" for sig, (r, _) in found)
    return [
        family_case(
            plan,
            f"{naming.ALERT_SIGNAL_MISSING}: readings the exporter reports unsupported on a GPU "
            f"(memory_info on a unified-memory GB10; {names}) stay quiet",
            s,
            naming.ALERT_SIGNAL_MISSING,
            expected,
            at,
        )
    ]


def device_lost_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """``GPUDeviceLost``: NVML reports the GPU lost (its readings gone, identity kept) under a
    working exporter — fires; the same with NVML itself down — quiet (GPUExporterDown's).
    Every GPU up stays quiet: :func:`long_healthy_group`."""
    rule = _rule(plan, naming.ALERT_GPU_LOST)
    gpu = sidecar_labels(plan)
    up_steps = 5
    lost_at = (up_steps + 1) * INTERVAL_MS  # `1x5` is six samples: the first 0 is at 6m
    # Pending from the evaluation that first sees the loss; firing at the first one at least
    # `for` later (a `for` that is no whole number of test steps rounds up to one).
    at = lost_at + -(-plan.alerts["gpu_device_lost"].for_ms // INTERVAL_MS) * INTERVAL_MS

    def lost(nvml_up: int) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)])
        for metric in (naming.GPU_MEMORY_FREE, naming.GPU_MEMORY_TOTAL, naming.GPU_TEMPERATURE):
            without(s, metric)
        s.gauge(naming.GPU_DEVICE_UP, {**gpu, "uuid": UUID}, f"1x{up_steps} 0x{60 - up_steps}")
        s.gauge(naming.GPU_EXPORTER_UP, gpu, f"{nvml_up}+0x60")
        return s

    out = {k: v for k, v in {**gpu, "uuid": UUID}.items() if k in plan.keeping(*GPU_LABELS)}
    return [
        family_case(
            plan,
            f"{rule['alert']}: a GPU lost under a healthy exporter fires",
            lost(1),
            rule["alert"],
            [expected_alert(rule, out, None)],
            at,
        ),
        family_case(
            plan,
            f"{rule['alert']}: NVML down (no device readings to trust) stays quiet",
            lost(0),
            rule["alert"],
            [],
            at,
        ),
    ]


# --- input guards ----------------------------------------------------------------------------
# Which ModelSignalMissing alerts a set of synthetic series raises is predicted here from the
# plan's inputs (generator.builders.guard_rules.signal_inputs), the way promtool will evaluate
# the rules: gate conditions and needs are matched against the series' labels and first
# values, the pod owner record is derived from the owner series and targets as its rule does.

_FIRST_VALUE = re.compile(r"\s*(-?[0-9.]+(?:e[-+]?[0-9]+)?)")


def _first_value(values: str) -> float:
    match = _FIRST_VALUE.match(values)
    return float(match.group(1)) if match else float("nan")


def _items(s: Series) -> list[tuple[str, dict[str, str], float]]:
    """(name, labels, first value) of every synthetic series; counters start at 0."""
    out = [(name, dict(labels), 0.0) for name, labels in s.counters]
    out += [(name, dict(labels), _first_value(v)) for (name, labels), v in s.gauges.items()]
    return out


def _select(
    s: Series, metric: str, matchers: Sequence[Matcher]
) -> list[tuple[dict[str, str], float]]:
    return [
        (labels, first)
        for name, labels, first in _items(s)
        if name == metric and all(selected(m, labels) for m in matchers)
    ]


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


def _expressible(plan: ServicePlan, item: SignalInput) -> bool:
    """Whether promtool 2.42's series notation can hold the input's series (not a native
    histogram's)."""
    native = {name for h in plan.histograms.values() if h.native for name in h.names}
    return not any(s.metric in native for s in item.sources)


def expected_guards(
    plan: ServicePlan, s: Series, items: Sequence[SignalInput] | None = None
) -> list[dict[str, Any]]:
    """Every ``ModelSignalMissing`` alert (labels, annotations) the series ``s`` raise (of
    ``items``; every input of the plan by default)."""
    found = [
        expected_alert(_guard_rule(plan, item), labels, None)
        for item in (signal_inputs(plan) if items is None else items)
        for labels in guard_firing(plan, item, s)
    ]
    return sorted(found, key=lambda a: sorted(a["exp_labels"].items()))


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


def _missing(plan: ServicePlan, classes: Sequence[Klass], items: Sequence[SignalInput]) -> Series:
    """Healthy series without the first needed series of each of ``items``."""
    s = healthy(plan, classes)
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
    items = [i for i in signal_inputs(plan) if _expressible(plan, i)]
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
    for item in items:
        for members in cases:
            if all(
                _own_alert(plan, m, _missing(plan, base, [*members, item]))
                for m in (*members, item)
            ):
                members.append(item)
                break
        else:
            if not _own_alert(plan, item, _missing(plan, base, [item])):
                raise ValueError(f"{_guard_name(item)} would not fire with its series missing")
            cases.append([item])
    groups = []
    for members in cases:
        s = _missing(plan, base, members)
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
    return groups


LONG_HEALTHY_MS = 120 * 60_000


def long_healthy_group(plan: ServicePlan) -> dict[str, Any]:
    """2 hours of a healthy service with every input series present: no alert of any name
    fires at 30m, 1h or 2h (guards, capacity, GPU and every other alert included). A native
    histogram has no series in promtool 2.42's notation, so its guard is the one expected."""
    names = sorted({r["alert"] for r in alert_rules(plan)})
    p99 = plan.alerts.get("latency_p99")
    if p99 is not None:
        h = plan.histograms[p99.params["indicator"]]
        if 0.99 * h.buckets[0] * h.seconds_per_unit > p99.params["threshold_seconds"]:
            names.remove(naming.ALERT_LATENCY_P99)  # even the fastest bucket is over it
    steps = LONG_HEALTHY_MS // INTERVAL_MS
    s = healthy(plan, [Klass(BASE_PER_MIN)], length=steps)
    checks = [
        alert_test(at, name, _quiet_except_native(plan, name, s))
        for at in (30 * 60_000, 60 * 60_000, LONG_HEALTHY_MS)
        for name in names
    ]
    series = s.render(steps)
    return promtool_group(
        "a healthy service over 2h, every input series present, raises no alert",
        series,
        checks,
    )


def _quiet_except_native(plan: ServicePlan, alert: str, s: Series) -> list[dict[str, Any]]:
    """No alert, but for ``ModelSignalMissing`` the guards of native histograms, whose series
    promtool 2.42 cannot express (the guards checked after ``for`` has passed)."""
    if alert != naming.ALERT_SIGNAL_MISSING:
        return []
    return expected_guards(plan, s, [i for i in signal_inputs(plan) if not _expressible(plan, i)])


def zero_traffic_group(plan: ServicePlan) -> dict[str, Any]:
    """Counters that never move (and no native-histogram series): every alert stays quiet
    (the guard of a native histogram, which has no series here, excepted)."""
    at = CHECK_MS + max([a.for_ms for a in plan.alerts.values()] + [0])
    names = sorted({r["alert"] for r in alert_rules(plan)})
    s = healthy(plan, [Klass(0)])
    series = s.render(steps_until(at))
    return promtool_group(
        "zero traffic raises no alert",
        series,
        [alert_test(at, n, _quiet_except_native(plan, n, s)) for n in names],
    )


def native_note(plan: ServicePlan) -> list[str]:
    """Names of SLOs whose burn cases promtool 2.42 cannot express (native histograms)."""
    return [s.name for s in plan.slos if s.histogram is not None and s.histogram.native]


def rule_test_files(plan: ServicePlan) -> dict[str, dict[str, Any]]:
    """The promtool test documents for ``plan`` by repository path: the main file (1m) and one
    per coarser evaluation interval of the detection cases."""
    detection = detection_groups(plan)
    rules_file = naming.rules_file(plan.name).split("/")[-1]
    out = {
        naming.rule_tests_file(plan.name): {
            "rule_files": [rules_file],
            "evaluation_interval": format_duration_ms(INTERVAL_MS),
            "tests": [
                zero_traffic_group(plan),
                long_healthy_group(plan),
                *slo_groups(plan),
                *detection.pop(INTERVAL_MS, []),
                *family_groups(plan),
                *guard_groups(plan),
            ],
        }
    }
    for e, groups in sorted(detection.items()):
        out[naming.rule_tests_file(plan.name, format_duration_ms(e))] = {
            "rule_files": [rules_file],
            "evaluation_interval": format_duration_ms(e),
            "tests": groups,
        }
    return out


def service_rule_tests(plan: ServicePlan, groups: list[Group] | None = None) -> dict[str, str]:
    """``rules/<service>.test.yaml`` (and ``rules/<service>.slow-<interval>.test.yaml``) of one
    plan, cases that can share an input block merged (:mod:`generator.builders.test_merge`).
    ``groups``: the plan's rule groups when already built.

    Raises:
        ObsgenError: an error matcher with no printable example value.
    """
    header = generated_header(plan.source)
    skipped = native_note(plan)
    if skipped:
        header += (
            "\nNative-histogram SLOs "
            + ", ".join(skipped)
            + ": promtool 2.42 test series cannot express native histograms,\n"
            "so only the zero-traffic case covers them; their burn cases are not generated,\n"
            "and their input guard is expected to fire (no series) where others stay quiet."
        )
    alert_rules(plan, groups)  # kept on the plan from the groups the caller already built
    try:
        files = rule_test_files(plan)
    except ValueError as err:  # an error matcher with no printable example value
        raise ObsgenError(
            [Diagnostic(plan.source, "spec.metrics", f"cannot generate promtool tests: {err}")]
        ) from None
    alert_reads = reads(rule_groups(plan) if groups is None else groups)
    for doc in files.values():
        doc["tests"] = merge_cases(doc["tests"], alert_reads)
    return {path: dump_yaml(doc, header=header) for path, doc in files.items()}


def rule_tests_outputs(plans: Sequence[ServicePlan]) -> dict[str, str]:
    """``rules/<service>.test.yaml`` (and ``rules/<service>.slow-<interval>.test.yaml``) per plan."""
    out = {}
    for p in plans:
        out.update(service_rule_tests(p))
    return out
