"""Resolve ``spec.alerts``: each family's defaults, the spec's overrides and their checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic.alias_generators import to_camel

from generator import naming
from generator.families import FAMILIES
from generator.plan_defaults import (
    _GPU_ALERTS,
    _OPT_IN,
    _SPEC_PARAM,
    ALERT_DEFAULTS,
    SIGNAL_MISSING_MIN_SCRAPES,
    WINDOW_FACTOR,
    WINDOWED,
)
from generator.plan_metrics import (
    _P99_EFFECT,
    _SLOW_EFFECT,
    _below_top,
    _check_bound,
    _no_histogram,
    _release_checks,
)
from generator.plan_types import AlertPlan, HistogramPlan, _Problems
from generator.presets import (
    Preset,
)
from generator.release_bounds import Releases, Test
from generator.spec import (
    INDICATOR_ALIASES,
    ModelServiceSpec,
)
from generator.units import decimal_str, format_duration_ms


def _resolve_alerts(
    spec: ModelServiceSpec,
    plan_hist: Mapping[str, HistogramPlan],
    preset: Preset,
    p: _Problems,
    releases: Releases | None = None,
) -> dict[str, AlertPlan]:
    body = spec.spec
    latency_slos = [s for s in body.slos if s.indicator is not None]
    available = {
        "latency_p99": bool(plan_hist),
        "slow_requests": bool(plan_hist),
    }
    missing: dict[str, str] = {}
    for f in FAMILIES:
        if f.needs is None:
            continue
        declared = getattr(body.metrics, f.needs.attribute, None) if f.needs.declarable else None
        if getattr(preset, f.needs.attribute) is None and not (declared and declared.name):
            available[f.key] = False
            missing[f.key] = f.needs.left_out(f.alerts[0], body.server)
    if not plan_hist:
        # No latency histogram in this release (Triton before 24.11): say why, and since when.
        for key, alert in (
            ("latency_p99", naming.ALERT_LATENCY_P99),
            ("slow_requests", naming.ALERT_SLOW_REQUESTS),
        ):
            wanted = getattr(body.alerts, key)
            indicator = INDICATOR_ALIASES.get(str(getattr(wanted, "indicator", None) or ""))
            indicator = indicator or _upcoming_histogram(releases) or "requestDuration"
            why = _no_histogram(body.server, indicator, plan_hist, releases)
            missing[key] = f"{alert} alert left out: {why}"
    alerts: dict[str, AlertPlan] = {}
    for key, (for_ms, severity, params) in ALERT_DEFAULTS.items():
        if key in _GPU_ALERTS and body.gpu.exporter == "none":
            continue
        if key == "cold_start" and body.scale_to_zero.activator is None:
            given = body.alerts.cold_start
            if given is not None and given.enabled:
                p.warn(
                    "spec.alerts.coldStart",
                    f"{naming.ALERT_COLD_START} alert left out: it reads where requests wait "
                    "while no pod is up; name it in spec.scaleToZero.activator",
                )
            continue
        given = getattr(body.alerts, key)
        if key in _OPT_IN and given is None:
            continue
        if key == "lora_pool" and given is None and body.models is None:
            continue  # on by default only where spec.models says several models share a server
        if key == "kv_transfer" and given is None and body.roles is None:
            continue  # on by default only for disaggregated (spec.roles) services
        if not available.get(key, True):
            if given is not None and given.enabled and key in missing:
                p.warn(f"spec.alerts.{to_camel(key)}", missing[key])
            continue
        if given is not None and not given.enabled:
            continue
        merged: dict[str, Any] = dict(params)
        if key == "slow_requests" and "threshold_seconds" not in merged and latency_slos:
            merged["threshold_seconds"] = (latency_slos[0].threshold or 0) / 1000
            if given is None or (given.indicator is None and given.threshold is None):
                # The SLO's threshold belongs to the SLO's histogram, not the default one.
                merged["indicator"] = latency_slos[0].indicator
        if given is not None:
            for attr, param in _SPEC_PARAM.items():
                value = getattr(given, attr, None)
                if value is not None:
                    merged[param] = value / 1000 if param == "threshold_seconds" else value
            baseline = getattr(given, "baseline", None) if key == "efficiency_regression" else None
            if baseline is not None:
                merged["baseline_ms"] = {"1d": 86_400_000, "7d": 604_800_000}[baseline]
        path = f"spec.alerts.{to_camel(key)}"
        if key in ("latency_p99", "slow_requests"):
            indicator = INDICATOR_ALIASES.get(str(merged["indicator"]))
            if indicator is None:
                p.add(
                    f"{path}.indicator",
                    f"{merged['indicator']!r} is not a latency indicator; expected one of {', '.join(INDICATOR_ALIASES)}",
                )
                continue
            merged["indicator"] = indicator
            histogram = plan_hist.get(indicator)
            if histogram is None and (given is None or given.indicator is None):
                # Default indicator missing (Triton has no e2e histogram): use the first
                # latency histogram the server has, e2e before ttft before itl.
                indicator = next(k for k in naming.INDICATOR_LABEL if k in plan_hist)
                merged["indicator"] = indicator
                histogram = plan_hist[indicator]
            if histogram is None:
                p.add(
                    f"{path}.indicator",
                    _no_histogram(body.server, indicator, plan_hist, releases),
                )
                continue
            if key == "slow_requests":
                if "threshold_seconds" not in merged:
                    continue  # no threshold to test against: disabled unless configured
                if (
                    given is None
                    and histogram.bounded
                    and histogram.bound_for(merged["threshold_seconds"]) is None
                ):
                    continue  # inherited from a latency SLO, whose own check reports it
                # Inherited from a latency SLO: that SLO's own check speaks of its releases.
                merged["bound"] = _check_bound(
                    histogram,
                    merged["threshold_seconds"],
                    f"{path}.threshold",
                    p,
                    releases if given is not None else None,
                    _SLOW_EFFECT,
                )
            elif histogram.bounded:
                top = histogram.buckets[-1] * histogram.seconds_per_unit
                seconds = float(merged["threshold_seconds"])
                test = Test(_below_top(seconds), "below the largest bucket bound", _P99_EFFECT)
                per_release = releases is not None and histogram.key in releases.preset_keys
                shown = f"{decimal_str(seconds)}s"
                if seconds < top and per_release and releases is not None:
                    if given is not None:
                        _release_checks(histogram, seconds, f"{path}.threshold", p, releases, test)
                    else:
                        # A default threshold: the line's other releases only warn.
                        for problem in filter(
                            None,
                            (
                                releases.line_problem(histogram.key, test, shown),
                                releases.upgrade_warning(histogram.key, test, shown),
                                releases.unset_warning(histogram.key, test, shown),
                            ),
                        ):
                            p.warn(path, f"default {naming.ALERT_LATENCY_P99}: {problem}")
                if merged["threshold_seconds"] >= top and given is None:
                    # An unconfigured default that could never fire: leave it out, and say so.
                    p.warn(
                        path,
                        f"default {naming.ALERT_LATENCY_P99} alert left out: its "
                        f"{decimal_str(merged['threshold_seconds'])}s threshold is not below "
                        f"the largest bucket bound {decimal_str(top)}s of {histogram.metric}, "
                        f"so it could never fire; enable it with {path}.threshold below "
                        f"{decimal_str(top)}s",
                    )
                    continue
                if merged["threshold_seconds"] >= top:
                    fix = (
                        f" — {releases.refusal(histogram.key, test)}"
                        if per_release and releases is not None
                        else ""
                    )
                    p.add(
                        f"{path}.threshold",
                        f"{decimal_str(merged['threshold_seconds'])}s is not below the largest bucket bound {decimal_str(top)}s; histogram_quantile never reports more than that bound, so the alert could never fire{fix}",
                    )
        if (
            key in ("memory_headroom", "memory_exhaustion", "oom_killed", "crash_loop")
            and not body.deployment
        ):
            continue
        if key == "signal_missing":
            for_ms = _signal_missing_for(given, for_ms, body.prometheus.scrape_interval, p)
            merged["ignore"] = tuple(merged["ignore"])
        if given is not None and given.for_ is not None:
            for_ms = given.for_
        if key in WINDOWED or key == "crash_loop":
            spec_window = getattr(given, "window", None) if given is not None else None
            _held_window(key, merged, for_ms, spec_window, body.prometheus.scrape_interval, p)
        alerts[key] = AlertPlan(
            key=key,
            for_ms=for_ms,
            severity=given.severity
            if given is not None and given.severity is not None
            else severity,
            params=merged,
        )
    return alerts


def _upcoming_histogram(releases: Releases | None) -> str | None:
    """The first latency histogram key a later release than the declared one exposes."""
    if releases is None:
        return None
    return next((k for k in naming.INDICATOR_LABEL if releases.upcoming(k) is not None), None)


def _held_window(
    key: str,
    params: dict[str, Any],
    for_ms: int,
    given: int | None,
    scrape_ms: int,
    p: _Problems,
) -> None:
    """Set ``params["window_ms"]`` of a windowed alert: ``given`` (the spec's), else the
    default (``params``' own, or WINDOW_FACTOR × ``for`` up to 6h, at least ``for``) raised to
    4 scrape intervals. A spec window shorter than ``for`` (the condition could never hold
    that long in it) or than 4 scrape intervals is reported, and so are more crash-loop
    restarts than its window has minutes (less two)."""
    path = f"spec.alerts.{to_camel(key)}.window"
    least = SIGNAL_MISSING_MIN_SCRAPES * scrape_ms
    if given is None:
        default = params.get("window_ms") or min(WINDOW_FACTOR * for_ms, 6 * 3_600_000)
        given = params["window_ms"] = max(least, for_ms, default)
    elif given < for_ms:
        p.add(
            path,
            f"{format_duration_ms(given)} is shorter than its for ({format_duration_ms(for_ms)}): "
            f"the condition could never hold that long within it; expected at least "
            f"{format_duration_ms(for_ms)} (default {WINDOW_FACTOR} × for)",
        )
    elif given < least:
        p.add(
            path,
            f"{format_duration_ms(given)} is shorter than {SIGNAL_MISSING_MIN_SCRAPES} × "
            f"spec.prometheus.scrapeInterval; expected at least {format_duration_ms(least)}",
        )
    most = given // 60_000 - 2
    if key == "crash_loop" and int(params["min_restarts"]) > most:
        p.add(
            f"spec.alerts.{to_camel(key)}.minRestarts",
            f"{params['min_restarts']} restarts within {format_duration_ms(given)} would never "
            f"fire: past its first back-offs a crash loop restarts less than once a minute (the "
            f"kubelet's back-off doubles from 10s to 5m); expected at most {max(most, 0)}, or a "
            f"longer window",
        )


def _signal_missing_for(given: Any, default_ms: int, scrape_ms: int, p: _Problems) -> int:
    """Default ``for`` of the input guards: ``default_ms``, raised to 4 scrape intervals; a
    spec's own ``for`` shorter than 4 scrape intervals is reported."""
    least = SIGNAL_MISSING_MIN_SCRAPES * scrape_ms
    if given is not None and given.for_ is not None and given.for_ < least:
        p.add(
            "spec.alerts.signalMissing.for",
            f"{format_duration_ms(given.for_)} is shorter than {SIGNAL_MISSING_MIN_SCRAPES} × "
            f"spec.prometheus.scrapeInterval ({format_duration_ms(least)}); a series is only "
            f"absent once it missed several scrapes — expected at least {format_duration_ms(least)}",
        )
    return max(default_ms, least)
