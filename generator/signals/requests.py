"""The request counter (``spec.metrics.requests``, its failures and ``spec.failure``'s further
sources): the series ``ModelSignalMissing`` guards for the alerts and SLOs counting requests
(:func:`guard`). Who reads it: :func:`generator.builders.guard_rules.signal_inputs`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator import regexes
from generator.parts.guard_inputs import (
    SERVICE_KEYS,
    Condition,
    SignalInput,
    Source,
    server_remedy,
    targets_up,
)
from generator.presets import layouts
from generator.promql import Matcher, quote

if TYPE_CHECKING:
    from generator.plan import ServicePlan


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
