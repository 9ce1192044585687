"""Generated promtool cases of the SLOs: burn-rate tiers (fire, quiet, ties), threshold
edges, a new service, counter restarts and ErrorBudgetLow.

Part of :mod:`generator.cases.rule_tests`; why the expectations are exact:
docs/proof.md, "Generated promtool tests".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from generator import naming, slo
from generator.builders.rulefile import alert_rules
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    CHECK_MS,
    INTERVAL_MS,
    MARGIN,
    TIE_BREAK,
    Klass,
    agg_of,
    alert_test,
    expected_alert,
    mixed,
    promtool_group,
    series_text,
    slow_class,
    steps_until,
    traffic,
)
from generator.plan import ServicePlan, SLOPlan
from generator.promql import go_float
from generator.signals.healthy import healthy
from generator.slo import Tier
from generator.units import decimal_str, format_duration_ms


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
    """Expected ``ErrorBudgetBurn`` alerts of the tiers for which ``fires(slo, tier)`` holds
    (native histograms included: their series are promtool 3's, :mod:`native_series`)."""
    rules = [r for r in alert_rules(plan) if r["alert"] == naming.ALERT_ERROR_BUDGET_BURN]
    found = []
    for s in plan.slos:
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
    With ``keepFiringFor`` (K) an alert still fires while its condition held at an evaluation
    less than K + one interval ago (Prometheus resolves it at the first evaluation K after the
    first one without the condition).
    """
    how = sampling(plan, evaluation_interval_ms, scrape_ms)

    def holds(s: SLOPlan, tier: Tier, t_ms: int) -> bool:
        shares = [(start, slo_bad_ratio(s, classes)[0]) for start, classes in phases]
        per_s = Fraction(slo_bad_ratio(s, phases[-1][1])[1])
        events = slo.recorded_events(per_s, t_ms, tier.long_window_ms, how)
        return events >= s.min_events and all(
            slo.window_ratio(shares, t_ms, w, how) > tier.threshold
            for w in (tier.long_window_ms, tier.short_window_ms)
        )

    def fires(s: SLOPlan, tier: Tier) -> bool:
        kept = range(
            at_ms, at_ms - s.keep_firing_for_ms - evaluation_interval_ms, -evaluation_interval_ms
        )
        return any(holds(s, tier, t) for t in kept if t > 0)

    return _burn_alerts(plan, phases[-1][1], fires)


def ties(plan: ServicePlan, ratio: Fraction) -> bool:
    """Whether ``ratio`` is exactly the threshold of one of ``plan``'s burn-rate tiers."""
    return 0 < ratio < 1 and any(ratio == t.threshold for s in plan.slos for t in s.tiers)


def _slo_mix(plan: ServicePlan, ratio: Fraction, bad: Klass) -> list[Klass]:
    """SLO case traffic: ``ratio`` of ``BASE_PER_MIN × 100`` events a minute are ``bad``,
    moved off an exact tie with a tier's threshold (:data:`TIE_BREAK`)."""
    return mixed(BASE_PER_MIN * 100, ratio, bad, tie_break=ties(plan, ratio))


# --- test groups ---------------------------------------------------------------------------


def burn_check_ms(plan: ServicePlan) -> int:
    """When a steady burn-rate case is checked (ms after its counters start): once the
    fastest tier's short window holds only the case's increments (the rules' evaluation
    interval after the window), on a test step. Steady traffic gives every window the same
    ratio from the first increment on, and :func:`expected_burns` counts the guard's events
    at that time; later checks would prove the same thresholds over more evaluations. A tier
    whose long window sums hourly tiles (:func:`generator.slo.tiled`) reads nothing before the
    first tile, at 1h: then no earlier."""
    shortest = min((t.short_window_ms for s in plan.slos for t in s.tiers), default=5 * 60_000)
    ready = shortest + plan.evaluation_interval_ms
    if any(
        slo.tiled(t.long_window_ms, plan.evaluation_interval_ms) for s in plan.slos for t in s.tiers
    ):
        ready = max(ready, slo.TILE_MS)
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
    slos = [s for s in plan.slos if s.tiers]
    if not slos:
        return None
    per_min = Fraction(min(s.min_events for s in slos), 10)  # min_events / 2 by 5 minutes
    bad = [all_bad(slos, float(per_min))]
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
    SLO's alerts — test files quadratic in the number of such SLOs.
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
    slos = [s for s in plan.slos if s.tiers]
    if not slos:
        return None
    good = [Klass(BASE_PER_MIN * 100)]
    bad = [all_bad(slos, BASE_PER_MIN * 100)]
    fastest = min(t.long_window_ms for s in slos for t in s.tiers)
    how = sampling(plan, INTERVAL_MS, INTERVAL_MS)
    restart = how.aligned(fastest + plan.evaluation_interval_ms)
    onset = restart + INTERVAL_MS  # the first scrape after the restart
    series = onset_series(
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
    """The traffic of ``cases`` (one per SLO) in one input block: :func:`shares_mix`, or None."""
    if len({c.slo.name for c in cases}) < len(cases):
        return None
    return shares_mix(plan, [(c.slo, c.tier) for c in cases], [c.share for c in cases])


def _threshold_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """Per SLO and tier, 5 % above the threshold fires and 5 % below stays quiet, with the
    cases of several SLOs in one group where one traffic mix gives each SLO its own case's
    share (:func:`shares_mix`: each SLO's bad events are its own class, one no other SLO
    counts). Each SLO then sees exactly the traffic of its own case, and the check expects
    the alerts of every SLO for the joint mix, so no assertion is weaker; the steps are paid
    once per group instead of once per case. Cases are packed per tier windows and side, in
    spec order, each into the first group of its key it fits (one case per SLO a group)."""
    packed: dict[tuple[int, int, bool], list[list[_ThresholdCase]]] = {}
    for s in distinct_slos(plan):
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


def all_bad(slos: Sequence[SLOPlan], per_min: float) -> Klass:
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
        if not s.budget_levels:
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
    slos = [s for s in plan.slos if s.budget_levels]
    if not slos:
        return []
    cases = [
        (
            "every request bad: each SLO's lowest budget level tickets",
            [all_bad(slos, BASE_PER_MIN)],
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
    # The SLO window sums hourly tiles (:func:`generator.slo.tiled`): the first is at 1h.
    tiles = any(slo.tiled(s.window_ms, plan.evaluation_interval_ms) for s in slos)
    check = max(CHECK_MS, slo.TILE_MS) if tiles else CHECK_MS
    groups = []
    for name, classes in cases:
        series = healthy(plan, classes).render(steps_until(check))
        tests = [
            alert_test(
                check,
                naming.ALERT_ERROR_BUDGET_LOW,
                expected_budget_lows(plan, classes, check),
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
    slos = list(distinct_slos(plan))
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
        joint = all_bad([s for s, _ in owners], float(per_min))
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


def bad_class(s: SLOPlan) -> Klass:
    """A request the SLI counts as bad: a failure, or one just above the latency threshold."""
    if s.histogram is None:
        return Klass(0, True)
    return slow_class(s.histogram, s.threshold_seconds or 0.0, above=True)


def onset_series(
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


def shares_mix(
    plan: ServicePlan, members: Sequence[tuple[SLOPlan, Tier]], targets: Sequence[Fraction]
) -> list[Klass] | None:
    """Traffic giving each member SLO its target bad share, every SLO by its own bad class;
    None when the shares do not fit or one class counts against another SLO."""
    total = BASE_PER_MIN * 100
    shares = [r + (TIE_BREAK / total if ties(plan, r) else 0) for r in targets]
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
