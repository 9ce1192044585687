"""Resolve the request and failure counters from the preset and ``spec.metrics``, and the
checks that a threshold falls on a bucket bound (the latency histograms themselves resolve in
:mod:`generator.signals.histograms`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from generator import failures as failures_mod
from generator import naming
from generator.plan_types import (
    FailureSourcePlan,
    HistogramPlan,
    RequestsPlan,
    _merge,
    _Problems,
)
from generator.presets import (
    PRESETS,
    HistogramDef,
    Preset,
    layouts,
)
from generator.promql import (
    Matcher,
)
from generator.release_bounds import Releases, Test
from generator.spec_metrics import (
    FailureDefinition,
    Metrics,
)
from generator.units import decimal_str, format_duration_ms


def _requests(
    preset: Preset,
    metrics: Metrics,
    base: tuple[Matcher, ...],
    p: _Problems,
    failure_spec: FailureDefinition | None = None,
) -> RequestsPlan:
    """The request counters: the preset's, or the override's name.

    A name that is one of the server's known request counters (``preset.other_requests``, e.g.
    vLLM's ``vllm:request_success_total``) keeps that counter's own matchers, error matchers
    and failure counter. Any other name keeps nothing written for the preset's counter: the
    spec states ``errorMatchers`` or ``metrics.failures`` (else an error). The spec's
    ``errorMatchers``, ``failures`` and ``selector`` apply on top. Error matchers that can
    never match the counter as its library exposes it (:mod:`generator.presets.layouts`) are
    errors naming the fix.
    """
    override, failures = metrics.requests, metrics.failures
    definition = failure_spec or FailureDefinition()
    known = {r.name: r for r in (preset.requests, *preset.other_requests)}
    name = override.name if override and override.name else preset.requests.name
    default = known.get(name)
    stated_matchers = override.error_matchers if override else None
    stated = stated_matchers is not None
    if failures is not None:
        for attr, what in (("selector", "selector"), ("error_matchers", "errorMatchers")):
            if getattr(failures, attr) is not None:
                p.add(
                    f"spec.metrics.failures.{what}",
                    f"the failure counter is read with spec.metrics.requests' selector and "
                    f"counts failures only: remove {what}",
                )
        if failures.name is None:
            p.add("spec.metrics.failures.name", "expected the failure counter's metric name")
        if stated:
            p.add(
                "spec.metrics.requests.errorMatchers",
                "with spec.metrics.failures, failed requests are that counter's: remove "
                "errorMatchers (or metrics.failures)",
            )
        if override is not None and override.exclude_matchers is not None:
            p.add(
                "spec.metrics.requests.excludeMatchers",
                "with spec.metrics.failures, failed requests are that counter's: move "
                "excludeMatchers to spec.metrics.failures.excludeMatchers",
            )
    if default is None and not stated and failures is None:
        written = preset.requests.failure_name or ", ".join(
            f"{k}=~{v!r}" for k, v in preset.requests.error_matchers
        )
        p.add(
            "spec.metrics.requests.name",
            f"{name} is not {preset.server}'s request counter {preset.requests.name}: its "
            f"failures ({written}) were written for that counter and would silently count "
            f"nothing here; state spec.metrics.requests.errorMatchers for {name} (e.g. "
            '{status: "5.."}), or name its failure counter in spec.metrics.failures.name',
        )
    if stated_matchers is not None:
        errors = _regex_matchers(stated_matchers.items())
    elif failures is not None:
        errors = ()
    else:
        source = default or preset.requests
        errors = _regex_matchers(source.error_matchers)
    failure = default.failure_name if default else None
    if failures is not None:
        failure = failures.name
    if failure is None:
        field = "errorMatchers" if stated else "name"
        for m in errors:
            problem = layouts.matcher_problem(preset.server, name, m.label, m.value)
            if problem is not None:
                p.add(f"spec.metrics.requests.{field}", problem)
    own = tuple(Matcher(k, "=~", v) for k, v in default.matchers) if default else ()
    merged = _merge(base, override.selector if override else None)
    kept = {m.label: m for m in own}
    kept.update({m.label: m for m in merged})
    matchers = tuple(sorted(kept.values()))
    # Exclusions: the spec's (on its failure counter where it names one), else the counter's
    # own unless the spec restated its errorMatchers (which then say all there is).
    own_excludes = default.exclude_matchers if default is not None else ()
    excluded: tuple[tuple[str, str], ...]
    if failures is not None:
        given = failures.exclude_matchers
        same = default is not None and failures.name == default.failure_name
        excluded = tuple(given.items()) if given is not None else own_excludes if same else ()
    elif override is not None and override.exclude_matchers is not None:
        excluded = tuple(override.exclude_matchers.items())
    else:
        excluded = () if stated else own_excludes
    if definition.statuses and not any(m.label in failures_mod.STATUS_LABELS for m in errors):
        p.add(
            "spec.failure.statuses",
            f"{failure or name} tells failures by no HTTP status label "
            f"({', '.join(failures_mod.STATUS_LABELS)}), so the statuses would change nothing; "
            "remove them, or read a counter by status in spec.metrics.requests",
        )
    errors, excludes = _apply_statuses(errors, excluded, definition, stated)
    sources = _failure_sources(preset, name, base, definition)
    return RequestsPlan(name, matchers, errors, failure, excludes, sources, definition.combine)


def _regex_matchers(
    pairs: Iterable[tuple[str, str]], *, negate: bool = False
) -> tuple[Matcher, ...]:
    """``label → regex`` pairs as sorted matchers (:meth:`Matcher.regex`: ``=~``/``!~``, or
    ``=``/``!=`` for a plain value)."""
    return tuple(sorted(Matcher.regex(k, v, negate=negate) for k, v in pairs))


def _apply_statuses(
    errors: tuple[Matcher, ...],
    excluded: tuple[tuple[str, str], ...],
    definition: FailureDefinition,
    stated: bool,
) -> tuple[tuple[Matcher, ...], tuple[Matcher, ...]]:
    """Error and exclusion matchers with the status table applied to a status label
    (:func:`generator.failures.status_regexes`): the defaults with ``spec.failure.statuses``
    over them; error matchers the spec states are taken as written unless it states
    ``statuses`` too."""
    table = {
        **({} if stated else failures_mod.DEFAULT_STATUSES),
        **(definition.statuses or {}),
    }
    out, drop = [], dict(excluded)
    for m in errors:
        if m.label in failures_mod.STATUS_LABELS:
            regex, gone = failures_mod.status_regexes(m.value, table)
            out.append(Matcher.regex(m.label, regex))
            if gone is not None:
                drop[m.label] = "|".join(x for x in (drop.get(m.label), gone) if x)
        else:
            out.append(m)
    return tuple(sorted(out)), _regex_matchers(drop.items(), negate=True)


def _failure_sources(
    preset: Preset,
    name: str,
    base: tuple[Matcher, ...],
    definition: FailureDefinition,
) -> tuple[FailureSourcePlan, ...]:
    """The preset's engine failure sources, beside the preset's own request counter only
    (unless ``spec.failure.engine`` is false), and the spec's ``spec.failure.sources``."""
    out = []
    if definition.engine and name == preset.requests.name:
        for src in preset.failure_sources:
            out.append(
                FailureSourcePlan(
                    src.name,
                    _merge(base, None),
                    _regex_matchers(src.error_matchers),
                    _regex_matchers(src.exclude_matchers, negate=True),
                    "spec.failure.engine",
                )
            )
    for i, item in enumerate(definition.sources):
        out.append(
            FailureSourcePlan(
                item.name,
                _merge(base, item.selector),
                _regex_matchers(item.error_matchers.items()),
                _regex_matchers((item.exclude_matchers or {}).items(), negate=True),
                f"spec.failure.sources[{i}]",
            )
        )
    return tuple(out)


def _no_histogram(
    server: str,
    key: str,
    histograms: Mapping[str, HistogramPlan],
    releases: Releases | None = None,
) -> str:
    """Error text for a latency indicator the server lacks: why (in the declared release, and
    from which release on it has one), and what it has instead."""
    entries = PRESETS.get(server, [])
    if releases is not None:
        reason = releases.absent(key)
    else:
        reason = entries[-1].absent.get(key) if entries else None
    has = ", ".join(
        f"{k} ({naming.INDICATOR_LABEL[k]})" for k in naming.INDICATOR_LABEL if k in histograms
    )
    declare = f"declare spec.metrics.{key} with name and buckets"
    return (
        f"server {server} has no {key} ({naming.INDICATOR_LABEL[key]}) histogram"
        + (f": {reason}" if reason else "")
        + (
            f"; it has {has}. Use one of those, or {declare}"
            if has
            else f"; it has none: {declare}"
        )
    )


def _as_threshold(histogram: HistogramPlan, seconds: float) -> str:
    """A bucket bound written as a spec duration that names it (whole milliseconds:
    TGI's 5.6815… s bound is ``5s682ms``), else in seconds."""
    milliseconds = round(seconds * 1000)
    whole = abs(milliseconds - seconds * 1000) <= 1e-6 * max(1.0, seconds * 1000)
    if not whole and milliseconds > 0 and histogram.bound_for(milliseconds / 1000) is not None:
        return format_duration_ms(milliseconds)
    return f"{decimal_str(seconds)}s"


# What a latency threshold that selects no bucket does, per use (release_bounds.Test.effect).
_SLI_EFFECT = "the SLI would select no bucket and its alerts could never fire"
_SLOW_EFFECT = "the alert would select no bucket and could never fire"
_P99_EFFECT = "histogram_quantile never reports more than the largest bound, so it could never fire"


def _in_unit(histogram: HistogramPlan, other: HistogramDef) -> HistogramPlan:
    """``histogram`` with ``other``'s bounds (another release's), in ``histogram``'s unit."""
    factor = other.seconds_per_unit / histogram.seconds_per_unit
    if factor == 1:
        return replace(histogram, buckets=other.buckets)
    return replace(histogram, buckets=tuple(float(decimal_str(b * factor)) for b in other.buckets))


def _below_top(seconds: float) -> Callable[[HistogramDef], bool]:
    """Whether ``seconds`` is below a histogram's largest finite bound (in seconds)."""

    def holds(other: HistogramDef) -> bool:
        return seconds < other.buckets[-1] * other.seconds_per_unit

    return holds


def _release_checks(
    histogram: HistogramPlan,
    seconds: float,
    path: str,
    p: _Problems,
    releases: Releases,
    test: Test,
) -> None:
    """Refuse ``seconds`` where the declared version names a line of releases on some of
    whose bounds it fails; warn where no version is declared and an older release's fail."""
    shown = _as_threshold(histogram, seconds)
    problem = releases.line_problem(histogram.key, test, shown)
    if problem is not None:
        p.add(path, problem)
    for warning in (
        releases.upgrade_warning(histogram.key, test, shown),
        releases.unset_warning(histogram.key, test, shown),
    ):
        if warning is not None:
            p.warn(path, warning)


def _check_bound(
    histogram: HistogramPlan,
    seconds: float,
    path: str,
    p: _Problems,
    releases: Releases | None = None,
    effect: str = _SLI_EFFECT,
) -> float | None:
    if not histogram.bounded:
        return seconds / histogram.seconds_per_unit
    bound = histogram.bound_for(seconds)
    per_release = releases is not None and histogram.key in releases.preset_keys
    test = Test(
        lambda other: _in_unit(histogram, other).bound_for(seconds) is not None,
        "a bucket bound",
        effect,
    )
    if bound is None:
        below, above = histogram.neighbours(seconds)
        near = ", ".join(
            f"{word} {_as_threshold(histogram, v)}"
            for word, v in (("below", below), ("above", above))
            if v is not None
        )
        fix = (
            releases.refusal(histogram.key, test)
            if releases is not None and per_release
            else "use a bucket bound or add it to the buckets"
        )
        p.add(
            path,
            f"{decimal_str(seconds)}s is not a bucket bound of {histogram.metric} "
            f"(nearest: {near}); {effect} — {fix}",
        )
    elif releases is not None and per_release:
        _release_checks(histogram, seconds, path, p, releases, test)
    return bound
