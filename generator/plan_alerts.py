"""Resolve ``spec.alerts``: each family's defaults, the spec's overrides and their checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic.alias_generators import to_camel

from generator.families import FAMILIES
from generator.families.base import Resolving
from generator.plan_defaults import (
    _GPU_ALERTS,
    _SPEC_PARAM,
    ALERT_DEFAULTS,
    SIGNAL_MISSING_MIN_SCRAPES,
    WINDOW_FACTOR,
)
from generator.plan_types import AlertPlan, HistogramPlan, _Problems
from generator.presets import (
    Preset,
)
from generator.release_bounds import Releases
from generator.spec import (
    ModelServiceSpec,
)
from generator.units import format_duration_ms


def _resolve_alerts(
    spec: ModelServiceSpec,
    plan_hist: Mapping[str, HistogramPlan],
    preset: Preset,
    p: _Problems,
    releases: Releases | None = None,
) -> dict[str, AlertPlan]:
    body = spec.spec
    available: dict[str, bool] = {}
    missing: dict[str, str] = {}
    for f in FAMILIES:
        if f.unavailable is not None:
            given = getattr(body.alerts, f.key)
            why = f.unavailable(Resolving(body, given, "", p, plan_hist, releases))
            if why is not None:
                available[f.key] = False
                missing[f.key] = why
        if f.needs is None:
            continue
        declared = getattr(body.metrics, f.needs.attribute, None) if f.needs.declarable else None
        if getattr(preset, f.needs.attribute) is None and not (declared and declared.name):
            available[f.key] = False
            missing[f.key] = f.needs.left_out(f.alerts[0], body.server)
    alerts: dict[str, AlertPlan] = {}
    for key, (for_ms, severity, params) in ALERT_DEFAULTS.items():
        if key in _GPU_ALERTS and body.gpu.exporter == "none":
            continue
        given = getattr(body.alerts, key)
        family = _FAMILIES.get(key)
        off = family is not None and family.default_on is not None and not family.default_on(body)
        if given is None and off:
            continue
        if not available.get(key, True):
            if given is not None and given.enabled and key in missing:
                p.warn(f"spec.alerts.{to_camel(key)}", missing[key])
            continue
        if given is not None and not given.enabled:
            continue
        merged: dict[str, Any] = dict(params)
        path = f"spec.alerts.{to_camel(key)}"
        resolving = Resolving(body, given, path, p, plan_hist, releases, merged)
        if family is not None and family.inherit is not None:
            family.inherit(resolving)
        if given is not None:
            for attr, param in _SPEC_PARAM.items():
                value = getattr(given, attr, None)
                if value is not None:
                    merged[param] = value / 1000 if param == "threshold_seconds" else value
        if family is not None and family.check is not None and not family.check(resolving):
            continue
        if key == "signal_missing":
            for_ms = _signal_missing_for(given, for_ms, body.prometheus.scrape_interval, p)
            merged["ignore"] = tuple(merged["ignore"])
        if given is not None and given.for_ is not None:
            for_ms = given.for_
        if family is not None and family.windowed:
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


_FAMILIES = {f.key: f for f in FAMILIES}


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
