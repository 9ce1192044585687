"""SLI recording rules and multi-window multi-burn-rate ``ErrorBudgetBurn`` alerts.

One record of bad and total events per evaluation, and why every window's ratio is exact:
docs/slo.md, "SLI records and burn-rate alerts". Windows of a day or more sum hourly
tiles of those increments (:func:`generator.slo.tiled`): docs/slo.md, "Hourly tiles (the long windows' cost)".
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from generator import naming, slo
from generator.parts import histogram_forms
from generator.parts.common import (
    Group,
    Rule,
    alert_rule,
    counter_target,
    group,
    keep_firing,
    record_rule,
    recorded,
)
from generator.plan import HistogramPlan, ServicePlan, SLOPlan
from generator.promql import Matcher, le_matcher, selector, sum_increments
from generator.signals.requests import errors_sum, requests_sum
from generator.units import decimal_str, format_duration_ms

FIVE_MINUTES_MS = 300_000  # every SLO also records its 5m ratio: dashboards read it


def _increments(plan: ServicePlan) -> Callable[[str], str]:
    """Selector → summed per-evaluation increments of that counter."""
    interval = naming.window(plan.evaluation_interval_ms)
    target = counter_target(plan, plan.requests.matchers)
    bridge = _bridge(plan)
    return lambda series: sum_increments(
        [lambda wrap: wrap(series)], interval, plan.agg_labels, target, bridge
    )


def _bridge(plan: ServicePlan) -> str | None:
    """The longest hole in a counter's samples the increments bridge
    (``spec.prometheus.maxGap``; :func:`generator.promql.increments`)."""
    return naming.window(plan.max_gap_ms) if plan.max_gap_ms else None


def _histogram_increments(plan: ServicePlan, h: HistogramPlan, suffix: str, *extra: Matcher) -> str:
    """Summed increments of a classic histogram's ``suffix`` series under any of its names."""
    selectors = [selector(name + suffix, (*h.matchers, *extra)) for name in h.names]
    ats = [lambda wrap, sel=sel: wrap(sel) for sel in selectors]
    interval = naming.window(plan.evaluation_interval_ms)
    target = counter_target(plan, h.matchers)
    return sum_increments(ats, interval, plan.agg_labels, target, _bridge(plan))


def _both(plan: ServicePlan, h: HistogramPlan, bound: float | None) -> str:
    """Summed increments of a histogram in both forms (a migration): per series native where
    it exists, else classic (:func:`generator.parts.histogram_forms.both_events`)."""
    interval = naming.window(plan.evaluation_interval_ms)
    target = counter_target(plan, h.matchers)
    return histogram_forms.both_events(
        h, bound, plan.le_version, interval, plan.agg_labels, target, _bridge(plan)
    )


def _native(plan: ServicePlan, h: HistogramPlan, bound: float | None) -> str:
    """Summed increments of a native histogram's count (all, or no slower than ``bound``),
    per series as a float: ``histogram_count`` and ``histogram_fraction`` of the series."""
    interval = naming.window(plan.evaluation_interval_ms)

    def at(name: str, wrap: Callable[[str], str]) -> str:
        series = wrap(selector(name, h.matchers))
        if bound is None:
            return f"histogram_count({series})"
        return histogram_forms.native_good(series, bound)

    ats = [lambda wrap, name=name: at(name, wrap) for name in h.names]
    target = counter_target(plan, h.matchers)
    return sum_increments(ats, interval, plan.agg_labels, target, _bridge(plan))


def good_events(plan: ServicePlan, s: SLOPlan) -> str:
    """Good events since the previous evaluation: requests no slower than the threshold, or
    requests not failing (request increments minus failure increments, both from the raw
    counters). Never from the total recorded earlier in the same evaluation: vmalert writes
    recordings to VictoriaMetrics and reads them back an evaluation or more later, so good
    events built on it are absent or one evaluation stale there and a healthy service pages
    (the e2e suite's healthy scenario on VictoriaMetrics)."""
    if s.histogram is not None and s.threshold_bound is not None:
        h = s.histogram
        if h.form == "both":
            return _both(plan, h, s.threshold_bound)
        if h.native:
            return _native(plan, h, s.threshold_bound)
        le = le_matcher(s.threshold_bound, plan.le_version)
        return _histogram_increments(plan, h, "_bucket", le)
    inc = _increments(plan)
    return f"({requests_sum(plan, inc)}) - ({errors_sum(plan, inc)})"


def bad_events(plan: ServicePlan, s: SLOPlan) -> str:
    """Bad events since the previous evaluation: :func:`total_events` minus
    :func:`good_events`, from the raw counters (absent while either is: a missing threshold
    bucket never reads as 0 bad events). An availability SLO counting requests reads its
    failure increments alone, which is the same count."""
    if s.histogram is None:
        return errors_sum(plan, _increments(plan))
    return f"({total_events(plan, s)}) - ({good_events(plan, s)})"


def total_events(plan: ServicePlan, s: SLOPlan) -> str:
    """All events of the SLO's SLI since the previous evaluation."""
    if s.histogram is not None:
        h = s.histogram
        if h.form == "both":
            return _both(plan, h, None)
        if h.native:
            return _native(plan, h, None)
        return _histogram_increments(plan, h, "_count")
    return requests_sum(plan, _increments(plan))


def _range(plan: ServicePlan, window_ms: int) -> str:
    """Range selector duration of a window: half an evaluation short (``59m30s`` for 1h)."""
    return naming.window(window_ms - plan.evaluation_interval_ms // 2)


def windows(s: SLOPlan) -> list[int]:
    """Every window (ms) an SLO needs an error ratio for: tier windows and the SLO window, sorted."""
    found = {s.window_ms, FIVE_MINUTES_MS}
    for tier in s.tiers:
        found.update((tier.long_window_ms, tier.short_window_ms))
    return sorted(found)


def _slo(s: SLOPlan) -> Matcher:
    return Matcher(naming.SLO, "=", s.name)


def error_ratio_record(plan: ServicePlan, window_ms: int) -> str:
    """Record name of the SLI error ratio over ``window_ms``."""
    return naming.record(plan.group_by, naming.SLI_ERROR, naming.ratio_rate(window_ms))


def events_record(plan: ServicePlan) -> str:
    """Record name of the per-evaluation bad and total increments."""
    return naming.record(
        plan.group_by, naming.SLI_EVENTS, naming.increase(plan.evaluation_interval_ms)
    )


def events_expr(plan: ServicePlan, s: SLOPlan) -> str:
    """The total and the bad increments of ``s`` in one expression, told apart by the
    ``events`` label (see the module docstring for why one)."""

    def labelled(expr: str, value: str) -> str:
        return f'label_replace({expr}, "{naming.EVENTS}", "{value}", "", "")'

    return (
        f"{labelled(total_events(plan, s), naming.EVENTS_TOTAL)}\n"
        f"or {labelled(bad_events(plan, s), naming.EVENTS_BAD)}"
    )


def events_selector(plan: ServicePlan, s: SLOPlan, events: str) -> str:
    """Selector of ``s``'s recorded bad or total increments (``events``)."""
    return recorded(plan, events_record(plan), _slo(s), Matcher(naming.EVENTS, "=", events))


def tiles_record(plan: ServicePlan) -> str:
    """Record name of the hourly tiles: the bad and total increments of the hour that ends at
    the evaluation in each hour's first interval, one sample an hour."""
    return naming.record(plan.group_by, naming.SLI_EVENTS, naming.increase(slo.TILE_MS) + "_hourly")


def tiles_expr(plan: ServicePlan, s: SLOPlan) -> str:
    """The hour's bad and total increments (``sum_over_time`` over the 1h range, half an
    evaluation short as every window's), kept only at the evaluation in the hour's first
    interval (``time() % 3600 < interval``): consecutive tiles are exactly an hour apart when
    evaluations are regular, so they tile the increments without gap or overlap."""
    every = recorded(plan, events_record(plan), _slo(s))
    first = decimal_str(Fraction(plan.evaluation_interval_ms, 1000))
    return (
        f"sum_over_time({every}[{_range(plan, slo.TILE_MS)}])\n"
        f"and on () (vector(time() % {slo.TILE_MS // 1000}) < {first})"
    )


def tiled(plan: ServicePlan, window_ms: int) -> bool:
    """Whether ``plan``'s rules sum ``window_ms`` from hourly tiles (:func:`generator.slo.tiled`)."""
    return slo.tiled(window_ms, plan.evaluation_interval_ms)


def window_sum(plan: ServicePlan, s: SLOPlan, events: str, window_ms: int) -> str:
    """``s``'s bad or total events (``events``) over ``window_ms``: the sum of its
    per-evaluation increments, or of its hourly tiles for a tiled window (ending at the
    newest tile, up to an hour before now)."""
    name = tiles_record(plan) if tiled(plan, window_ms) else events_record(plan)
    sel = recorded(plan, name, _slo(s), Matcher(naming.EVENTS, "=", events))
    return f"sum_over_time({sel}[{_range(plan, window_ms)}])"


def sli_records(plan: ServicePlan, s: SLOPlan) -> list[Rule]:
    """Recording rules of one SLO: bad/total increments, error ratio per window, SLI, budget,
    burn rate."""
    g = plan.group_by
    labels = {naming.SLO: s.name}
    rules = [record_rule(plan, events_record(plan), events_expr(plan, s), labels)]
    if any(tiled(plan, w) for w in windows(s)):
        rules.append(record_rule(plan, tiles_record(plan), tiles_expr(plan, s), labels))
    for window_ms in windows(s):
        bad_w, total_w = (
            f"sum without ({naming.EVENTS}) ({window_sum(plan, s, events, window_ms)})"
            for events in (naming.EVENTS_BAD, naming.EVENTS_TOTAL)
        )
        # Each sum drops the events label, so bad and total match and the ratio has one label
        # set. Nothing (not a healthy 0) when the bad series is missing. `+ 1e-300` leaves
        # every nonzero total unchanged (a count's float spacing is far wider), so the ratio
        # is exact, and makes 0 bad of 0 total a 0, not NaN. clamp_max: vmalert can make one
        # series of the pair searchable before the other, and a bad increment whose total is
        # not yet read must not read as more than every event bad.
        expr = f"clamp_max({bad_w} / ({total_w} + 1e-300), 1)"
        rules.append(record_rule(plan, error_ratio_record(plan, window_ms), expr, labels))
    slo_error = recorded(plan, error_ratio_record(plan, s.window_ms), _slo(s))
    budget = decimal_str(s.error_budget)
    rules += [
        record_rule(
            plan,
            naming.record(g, naming.SLO_SLI, naming.ratio_rate(s.window_ms)),
            f"1 - {slo_error}",
            labels,
        ),
        record_rule(plan, budget_record(plan), f"1 - {slo_error} / {budget}", labels),
        record_rule(
            plan,
            naming.record(g, naming.SLO_OBJECTIVE, "ratio"),
            f"vector({decimal_str(Fraction(str(s.objective)) / 100)})",
            labels,
        ),
    ]
    if s.tiers:
        fastest = min(t.long_window_ms for t in s.tiers)
        current = recorded(plan, error_ratio_record(plan, fastest), _slo(s))
        burn = naming.record(g, naming.SLO_BURN_RATE, naming.ratio_rate(fastest))
        rules.append(record_rule(plan, burn, f"{current} / {budget}", labels))
        # The budget left lasts left × window / burn rate (burn 1 spends it all in the window);
        # nothing while the budget is not burning (it would last forever).
        rules.append(
            record_rule(
                plan,
                exhaustion_record(plan, fastest),
                f"clamp_min({budget_remaining(plan, s)}, 0) * {s.window_ms // 1000}"
                f" / ({recorded(plan, burn, _slo(s))} > 0)",
                labels,
            )
        )
    return rules


def budget_record(plan: ServicePlan) -> str:
    """Record name of the share of the error budget left over the SLO window (1 − bad / budget)."""
    return naming.record(plan.group_by, naming.SLO_BUDGET_REMAINING, "ratio")


def budget_remaining(plan: ServicePlan, s: SLOPlan) -> str:
    """Selector of ``s``'s recorded budget left."""
    return recorded(plan, budget_record(plan), _slo(s))


def exhaustion_record(plan: ServicePlan, fastest_ms: int) -> str:
    """Record name of the seconds until the budget left is spent at the burn rate of the
    fastest tier's long window (``fastest_ms``)."""
    return naming.record(plan.group_by, naming.SLO_BUDGET_EXHAUSTION, naming.ratio_rate(fastest_ms))


def budget_low_alerts(plan: ServicePlan, s: SLOPlan) -> list[Rule]:
    """One ``ErrorBudgetLow`` rule per level of ``s.budget_levels`` (descending): level ``L``
    fires while the budget left over the SLO window is below ``L`` and not below the next
    level, so one ticket stands for the lowest level crossed; the window must have counted
    ``min_events`` events (a new service's first failures are no spent budget)."""
    on = ", ".join(sorted({*plan.agg_labels, naming.SERVICE, naming.SLO}))
    left = budget_remaining(plan, s)
    events = window_sum(plan, s, naming.EVENTS_TOTAL, s.window_ms)
    fastest = min((t.long_window_ms for t in s.tiers), default=None)
    rules = []
    for i, level in enumerate(s.budget_levels):
        below = s.budget_levels[i + 1] if i + 1 < len(s.budget_levels) else None
        cond = f"{left} < {decimal_str(level)}"
        if below is not None:
            cond = f"({cond}) >= {decimal_str(below)}"
        expr = f"{cond}\nand on ({on}) {events} >= {s.min_events}"
        percent = decimal_str(Fraction(str(level)) * 100)
        rules.append(
            alert_rule(
                plan,
                naming.ALERT_ERROR_BUDGET_LOW,
                expr,
                0,
                "warning",
                {naming.SLO: s.name, naming.BUDGET_LEFT: percent},
                slo=s.name,
                objective=decimal_str(s.objective),
                window=naming.window(s.window_ms),
                level=percent,
                below="0" if below is None else decimal_str(Fraction(str(below)) * 100),
                exhaustion=exhaustion_record(plan, fastest) if fastest is not None else "",
            )
        )
    return rules


def burn_rate_alerts(plan: ServicePlan, s: SLOPlan) -> list[Rule]:
    """One ``ErrorBudgetBurn`` rule per tier of ``s``."""
    rules: list[Rule] = []
    on = ", ".join(sorted({*plan.agg_labels, naming.SERVICE, naming.SLO}))
    for tier in s.tiers:
        threshold = decimal_str(tier.threshold)
        long_ratio = recorded(plan, error_ratio_record(plan, tier.long_window_ms), _slo(s))
        short_ratio = recorded(plan, error_ratio_record(plan, tier.short_window_ms), _slo(s))
        # Events the long window counted: the sum of its increments, never extrapolated.
        events = window_sum(plan, s, naming.EVENTS_TOTAL, tier.long_window_ms)
        expr = (
            f"{long_ratio} > {threshold}\n"
            f"and on ({on}) {short_ratio} > {threshold}\n"
            f"and on ({on}) {events} >= {s.min_events}"
        )
        rules.append(burn_alert(plan, naming.ALERT_ERROR_BUDGET_BURN, s, tier, expr))
    return rules


def slo_groups(plan: ServicePlan) -> list[Group]:
    """One group per SLO with its recording rules followed by its burn-rate alerts, evaluated
    every ``spec.prometheus.evaluationInterval`` (the group's ``interval``: the increments'
    ``offset`` must equal it for them to add up).

    Rules in a group are evaluated in order at the same timestamp, so the alerts read the
    ratios recorded in the same evaluation.
    """
    return [
        group(
            plan,
            f"slo.{s.name}",
            [*sli_records(plan, s), *burn_rate_alerts(plan, s), *budget_low_alerts(plan, s)],
            interval_ms=plan.evaluation_interval_ms,
        )
        for s in plan.slos
    ]


def burn_alert(
    plan: ServicePlan, alert: str, s: SLOPlan, tier: slo.Tier, expr: str, **extra: str
) -> Rule:
    """One burn-rate tier's alert rule for ``s``: the tier's labels (SLO, windows, burn rate)
    and the annotation values every burn template reads (objective, windows, threshold, the
    share of the budget the tier spends, the time to exhaust it at that rate), plus ``extra``.
    Shared by ``ErrorBudgetBurn`` and ``GoodputBudgetBurn``."""
    long_w, short_w = naming.window(tier.long_window_ms), naming.window(tier.short_window_ms)
    exhaustion = Fraction(s.window_ms, 1000) / tier.factor
    return keep_firing(
        alert_rule(
            plan,
            alert,
            expr,
            0,
            tier.severity,
            {
                naming.SLO: s.name,
                naming.LONG_WINDOW: long_w,
                naming.SHORT_WINDOW: short_w,
                naming.BURN_RATE: decimal_str(tier.factor),
            },
            slo=s.name,
            objective=decimal_str(s.objective),
            window=naming.window(s.window_ms),
            long_window=long_w,
            short_window=short_w,
            burn_rate=decimal_str(tier.factor),
            threshold=decimal_str(tier.threshold),
            budget_percent=decimal_str(tier.budget * 100),
            exhaustion=format_duration_ms(int(exhaustion * 1000)),
            **extra,
        ),
        s.keep_firing_for_ms,
    )
