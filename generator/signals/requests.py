"""The request counter (``spec.metrics.requests``, its failures and ``spec.failure``'s further
sources): how it resolves from the preset and the spec (:func:`resolve`), its rates and
records (:func:`records`, the first of the ``traffic`` group) and the series
``ModelSignalMissing`` guards for the alerts and SLOs counting requests (:func:`guard`). Who
reads it: :func:`generator.builders.guard_rules.signal_inputs`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from generator import failures as failures_mod
from generator import naming, regexes
from generator.parts.common import counter_target, record_rule, recorded
from generator.parts.guard_inputs import (
    SERVICE_KEYS,
    Condition,
    SignalInput,
    Source,
    server_remedy,
    targets_up,
)
from generator.plan_types import FailureSourcePlan, RequestsPlan, _merge
from generator.presets import layouts
from generator.promql import Matcher, quote, selector, sum_rate
from generator.signals.base import RATE_WINDOW, RATE_WINDOW_SECONDS

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import ServicePlan
    from generator.plan_types import _Problems
    from generator.presets import Preset
    from generator.spec_metrics import FailureDefinition, Metrics


def resolve(
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


def _counter_rate(plan: ServicePlan) -> Callable[[str], str]:
    """Selector of a request counter → its summed rate over :data:`RATE_WINDOW`, series born
    during their target's life included (:func:`generator.promql.born_rate`)."""
    target = counter_target(plan, plan.requests.matchers)
    seconds = RATE_WINDOW_SECONDS
    return lambda series: sum_rate(series, RATE_WINDOW, plan.agg_labels, target, seconds)


def requests_rate(plan: ServicePlan) -> str:
    """All finished requests per second, summed by the service's aggregation labels."""
    return requests_sum(plan, _counter_rate(plan))


def errors_rate(plan: ServicePlan) -> str:
    """Failed requests per second; 0 (not absent) while requests flow without errors."""
    return errors_sum(plan, _counter_rate(plan))


def requests_sum(plan: ServicePlan, summed: Callable[[str], str]) -> str:
    """All finished requests, as ``summed`` turns one counter selector into an aggregate
    (a summed rate, or summed increments)."""
    req = plan.requests
    if req.failure_name is None:
        return summed(selector(req.name, req.matchers))
    ok = summed(selector(req.name, req.matchers))
    failed = summed(selector(req.failure_name, req.matchers))
    # Either counter may not exist yet (created on first increment): count it as 0.
    return f"({ok} or 0 * {failed}) + ({failed} or 0 * {ok})"


def errors_sum(plan: ServicePlan, summed: Callable[[str], str]) -> str:
    """Failed requests as :func:`requests_sum` counts them; 0 (not absent) while requests
    flow without errors."""
    # Parenthesised: a two-counter total is a sum, and `+` binds tighter than `or`.
    return f"{failures_sum(plan, summed)} or 0 * ({requests_sum(plan, summed)})"


def failures_sum(plan: ServicePlan, summed: Callable[[str], str]) -> str:
    """Failed requests as :func:`requests_sum` counts them; absent while no failure has been
    counted (the failure series is created on the first one).

    The counter's failures less its exclusions (``!~``, which keep series without the label),
    and with further failure sources (the engine's finish reasons) their combination per
    ``plan.requests.combine``, capped at the total (:func:`generator.failures.combine`)."""
    req = plan.requests
    if req.failure_name is not None:
        own = summed(selector(req.failure_name, (*req.matchers, *req.exclude_matchers)))
    else:
        own = summed(
            selector(req.name, (*req.matchers, *req.error_matchers, *req.exclude_matchers))
        )
    if not req.sources:
        return own
    parts = [own, *(summed(selector(src.name, src.failures)) for src in req.sources)]
    return failures_mod.combine(parts, requests_sum(plan, summed), req.combine, plan.agg_labels)


def records(plan: ServicePlan) -> list[Rule]:
    """Request rate, error rate (per second, 5m) and error ratio (0–1), first in the
    ``traffic`` group: ``<groupBy>:model_requests:rate5m``,
    ``<groupBy>:model_request_errors:rate5m`` and ``…:ratio_rate5m``."""
    g = plan.group_by
    requests = naming.record(g, naming.REQUESTS, "rate5m")
    errors = naming.record(g, naming.REQUEST_ERRORS, "rate5m")
    return [
        record_rule(plan, requests, requests_rate(plan)),
        record_rule(plan, errors, errors_rate(plan)),
        record_rule(
            plan,
            naming.record(g, naming.REQUEST_ERRORS, "ratio_rate5m"),
            f"{recorded(plan, errors)} / ({recorded(plan, requests)} > 0)",
        ),
    ]


def guard(
    plan: ServicePlan, readers: tuple[str, ...], counted: tuple[str, ...]
) -> list[SignalInput]:
    """The request counter read by ``readers`` (none: nothing); for ``counted``, the readers
    that count failures, each error-matcher label successes carry too and each further
    failure source."""
    if not readers:
        return []
    out: list[SignalInput] = []
    req = plan.requests
    failed = (*req.matchers, *req.error_matchers, *req.exclude_matchers)
    covers = [Source(req.name, failed)] if req.error_matchers else []
    if req.failure_name is not None:
        covers.append(Source(req.failure_name, req.matchers))
        if req.exclude_matchers:
            covers.append(Source(req.failure_name, (*req.matchers, *req.exclude_matchers)))
    out.append(
        SignalInput(
            "requests",
            req.name,
            SERVICE_KEYS,
            ((Source(req.name, req.matchers),),),
            (targets_up(plan),),
            readers,
            tuple(covers),
            remedy=server_remedy("requests"),
        )
    )
    _error_label_inputs(plan, counted, out)
    _failure_source_inputs(plan, counted, out)
    return out


def _failure_source_inputs(
    plan: ServicePlan, readers: tuple[str, ...], out: list[SignalInput]
) -> None:
    """A guard per further failure source (``spec.failure``: the engine's finish reasons):
    requests flow, but the source's counter has no series, so failures only it sees (a stream
    that fails after its 200) are never counted. Its failure series (absent while healthy)
    are read beside it."""
    if not readers:
        return
    req = plan.requests
    for src in plan.requests.sources:
        out.append(
            SignalInput(
                "failureSources",
                src.name,
                SERVICE_KEYS,
                ((Source(src.name, src.matchers),),),
                (targets_up(plan), Condition((Source(req.name, req.matchers),))),
                readers,
                covers=(Source(src.name, src.failures),),
                remedy=f"Requests are counted, but {src.name} ({src.field}) has no series: "
                "failures only it sees (a streamed response that fails after its HTTP 200) "
                "are not counted. Check that the server exposes it (obsgen verify), or set "
                f"{src.field}: false / remove the source if the server has none.",
            )
        )


CARRIES = ".+"
"""The regex of a meaning guard's source: the series must carry the label at all."""


def _error_label_inputs(
    plan: ServicePlan, readers: tuple[str, ...], out: list[SignalInput]
) -> None:
    """A meaning guard per error-matcher label that successes carry too (``status="200"``):
    request series exist, but none carries the label, so no failure can ever be counted.

    A label only failures carry (``errorMatchers: {error: ".+"}``) is absent on a healthy
    service and gets none; nor does a separate failure counter (``metrics.failures``).
    """
    req = plan.requests
    if req.failure_name is not None:
        return
    if not readers:
        return
    errors = Source(req.name, (*req.matchers, *req.error_matchers, *req.exclude_matchers))
    for m in req.error_matchers:
        if regexes.fullmatch(m.value, "x") and regexes.fullmatch(m.value, "200"):
            continue  # matches any value: a label of failures only
        layout = layouts.layout_of(plan.server, req.name)
        if layout is not None and layout.carrier is not None:
            hint = (
                f"{layout.library} puts {m.label} on {layout.carrier}: set "
                f"spec.metrics.requests.name: {layout.carrier}"
            )
        else:
            hint = (
                f"Name the counter that carries {m.label} in spec.metrics.requests.name, or a "
                "separate failure counter in spec.metrics.failures"
            )
        out.append(
            SignalInput(
                "requestErrors",
                f"{req.name}{{{m.label}}}",
                SERVICE_KEYS,
                ((Source(req.name, (*req.matchers, Matcher(m.label, "=~", CARRIES))),),),
                (targets_up(plan), Condition((Source(req.name, req.matchers),))),
                readers,
                covers=(errors,),
                remedy=f"Requests are counted, but no series of {req.name} carries the label "
                f"{m.label} that spec.metrics.requests.errorMatchers tells failures by "
                f"({m.label}=~{quote(m.value)}): no failure can ever be counted. {hint}.",
            )
        )
