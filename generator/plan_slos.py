"""Resolve ``spec.slos``: objectives, windows, burn-rate tiers and goodput targets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from generator import slo, targets
from generator.plan_defaults import BUDGET_LEVELS
from generator.plan_metrics import _SLI_EFFECT, _check_bound, _no_histogram
from generator.plan_types import GoodputTargetPlan, HistogramPlan, SLOPlan, _Problems
from generator.release_bounds import Releases
from generator.spec import (
    INDICATOR_ALIASES,
    SLO,
    BurnRateTier,
    ModelServiceSpec,
    PrometheusSettings,
)
from generator.units import decimal_str, format_duration_ms


def _resolve_slos(
    spec: ModelServiceSpec,
    histograms: Mapping[str, HistogramPlan],
    p: _Problems,
    releases: Releases | None = None,
) -> tuple[SLOPlan, ...]:
    body = spec.spec
    plans = []
    for i, item in enumerate(body.slos):
        path = f"spec.slos[{i}]"
        histogram = None
        bound = None
        threshold_s = None
        targets = _goodput_targets(item, path, histograms, body.server, p, releases)
        if item.indicator is not None:
            key = INDICATOR_ALIASES[item.indicator]
            histogram = histograms.get(key)
            threshold_s = (item.threshold or 0) / 1000
            if histogram is None:
                p.add(f"{path}.indicator", _no_histogram(body.server, key, histograms, releases))
            else:
                bound = _check_bound(
                    histogram, threshold_s, f"{path}.threshold", p, releases, _SLI_EFFECT
                )
        evaluation = body.prometheus.evaluation_interval
        if item.window % evaluation:
            p.add(
                f"{path}.window",
                f"SLO window {format_duration_ms(item.window)} is not a multiple of "
                f"spec.prometheus.evaluationInterval {format_duration_ms(evaluation)}; the SLI "
                "sums one increment per evaluation",
            )
        retention = body.prometheus.retention
        if retention is not None and item.window > retention:
            p.add(
                f"{path}.window",
                f"SLO window {format_duration_ms(item.window)} is longer than spec.prometheus.retention {format_duration_ms(retention)}; the SLI could never cover it",
            )
        tiers: list[slo.Tier] = []
        if item.alerting.enabled:
            explicit = item.alerting.tiers is not None
            for j, tier in enumerate(_bind_tiers(item.alerting.tiers, item.objective, item.window)):
                for problem in slo.tier_problems(
                    tier,
                    item.objective,
                    item.window,
                    body.prometheus.scrape_interval,
                    body.prometheus.evaluation_interval,
                ):
                    if explicit:
                        remedy = (
                            " — lower the tier's budget, lengthen its longWindow or raise the "
                            "objective"
                            if problem.cause == "objective"
                            else ""
                        )
                        p.add(f"{path}.alerting.tiers[{j}]", problem.message + remedy)
                        continue
                    label = (
                        f"default tier {format_duration_ms(tier.long_window_ms)}/"
                        f"{format_duration_ms(tier.short_window_ms)}: "
                    )
                    example = _working_tier(
                        item.objective, item.window, body.prometheus.scrape_interval
                    )
                    where, remedy = _default_tier_fix(problem.cause, path, example)
                    p.add(where, label + problem.message + remedy)
                tiers.append(tier)
        plans.append(
            SLOPlan(
                name=item.name,
                kind="goodput"
                if item.targets
                else "latency"
                if histogram is not None or item.indicator
                else "availability",
                objective=item.objective,
                error_budget=slo.error_budget(item.objective),
                window_ms=item.window,
                histogram=histogram,
                threshold_seconds=threshold_s,
                threshold_bound=bound,
                tiers=tuple(tiers),
                min_events=item.alerting.min_events
                if item.alerting.min_events is not None
                else slo.DEFAULT_MIN_EVENTS,
                description=item.description,
                budget_levels=tuple(
                    BUDGET_LEVELS
                    if item.alerting.budget_left is None
                    else item.alerting.budget_left
                )
                if item.alerting.enabled
                else (),
                keep_firing_for_ms=_keep_firing_for(item, body.prometheus.floor, path, p),
                targets=targets,
                path=path,
            )
        )
    return tuple(plans)


def _goodput_targets(
    item: SLO,
    path: str,
    histograms: Mapping[str, HistogramPlan],
    server: str,
    p: _Problems,
    releases: Releases | None,
) -> tuple[GoodputTargetPlan, ...]:
    """``spec.slos[].targets`` resolved: each signal's histogram and the bucket bound of its
    threshold (refused, naming ``targets[j].threshold``, when it is not one)."""
    found = []
    for j, target in enumerate(item.targets or ()):
        key = INDICATOR_ALIASES[target.signal]
        histogram = histograms.get(key)
        if histogram is None:
            p.add(f"{path}.targets[{j}].signal", _no_histogram(server, key, histograms, releases))
            continue
        seconds = target.threshold / 1000
        where = f"{path}.targets[{j}].threshold"
        bound = _check_bound(histogram, seconds, where, p, releases, _SLI_EFFECT)
        if bound is not None:
            found.append(GoodputTargetPlan(histogram, seconds, bound))
    return tuple(found)


def _query_offset(prometheus: PrometheusSettings, p: _Problems) -> int:
    """``spec.prometheus.queryOffset`` in ms (0 unset), refused when the declared Prometheus
    cannot load it or it is not whole evaluations."""
    given = prometheus.query_offset
    if not given:
        return 0
    why = targets.missing(targets.QUERY_OFFSET, prometheus.floor)
    if why is not None:
        p.add("spec.prometheus.queryOffset", why)
        return 0
    if given % prometheus.evaluation_interval:
        p.add(
            "spec.prometheus.queryOffset",
            f"{format_duration_ms(given)} is not a multiple of spec.prometheus.evaluationInterval "
            f"{format_duration_ms(prometheus.evaluation_interval)}: the SLO increments would "
            "no longer tile the window",
        )
        return 0
    return given


def _keep_firing_for(item: SLO, floor: tuple[int, int], path: str, p: _Problems) -> int:
    """``spec.slos[].alerting.keepFiringFor`` in ms (0 unset), refused when the declared
    Prometheus cannot load it."""
    given = item.alerting.keep_firing_for
    if not given or not item.alerting.enabled:
        return 0
    why = targets.missing(targets.KEEP_FIRING_FOR, floor)
    if why is not None:
        p.add(f"{path}.alerting.keepFiringFor", why)
        return 0
    return given


def _bind_tiers(
    given: Sequence[BurnRateTier] | None, objective: float, window_ms: int
) -> list[slo.Tier]:
    """The SLO's tiers: the spec's as written, or the defaults (budget raised to reach 1×)."""
    if given is not None:
        return [
            slo.bind_tier(
                slo.TierSpec(Fraction(str(t.budget)), t.long_window, t.short_window, t.severity),
                objective,
                window_ms,
            )
            for t in given
        ]
    return [slo.bind_default_tier(t, objective, window_ms) for t in slo.DEFAULT_TIERS]


def _working_tier(objective: float, window_ms: int, scrape_ms: int) -> str | None:
    """A custom tier that this SLO accepts, quoted when the default tiers do not fit it: the
    first Workbook tier (1d/2h at 3×, 6h/30m at 6×, 1h/5m at 14.4×, 3d/6h at 1×) whose
    windows suit the scrape interval and SLO window, at its factor or else at 1×, the budget
    rounded up to 4 decimals. ``None`` when none fits."""
    week = slo.TierSpec(Fraction(1), 7 * slo.DAY_MS, 12 * slo.HOUR_MS, "warning")
    first, second, third, fourth = slo.DEFAULT_TIERS
    for spec in (third, second, first, fourth, week):
        workbook = slo.burn_rate_factor(spec.budget, 30 * slo.DAY_MS, spec.long_window_ms)
        for factor in (workbook, Fraction(1)):
            exact = factor * Fraction(spec.long_window_ms, window_ms)
            budget = Fraction(-(-exact.numerator * 10_000 // exact.denominator), 10_000)
            if not 0 < budget <= 1:
                continue
            candidate = slo.TierSpec(budget, spec.long_window_ms, spec.short_window_ms, "warning")
            tier = slo.bind_tier(candidate, objective, window_ms)
            if not slo.tier_problems(tier, objective, window_ms, scrape_ms):
                return (
                    f"tiers: [{{budget: {decimal_str(budget)}, longWindow: "
                    f"{format_duration_ms(spec.long_window_ms)}, shortWindow: "
                    f"{format_duration_ms(spec.short_window_ms)}, severity: warning}}]"
                )
    return None


def _default_tier_fix(cause: str, slo_path: str, example: str | None) -> tuple[str, str]:
    """Where a default tier's problem is reported, and the remedy appended to it."""
    custom = f"set your own tiers in {slo_path}.alerting.tiers" + (
        f", e.g. {example}" if example else ""
    )
    if cause == "scrape_interval":
        return "spec.prometheus.scrapeInterval", f" — scrape more often, or {custom}"
    if cause == "evaluation_interval":
        return "spec.prometheus.evaluationInterval", f" — use a divisor of 5m, or {custom}"
    if cause == "slo_window":
        return f"{slo_path}.window", f" — lengthen the SLO window, or {custom}"
    return f"{slo_path}.objective", f" — raise the objective, or {custom}"
