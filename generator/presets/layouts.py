"""Default label layouts of the instrumentation the presets rely on: which labels a request
counter carries, the values its outcome label takes, and which counter carries the outcome
where this one does not. ``obsgen check`` reads them to refuse error matchers that can never
match (a label the series lack, a regex no value fits). Sources are cited per entry.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator import regexes


@dataclass(frozen=True)
class Layout:
    """One series family as a library exposes it by default.

    Attributes:
        labels: the label names the library puts on it (target labels come on top).
        values: per outcome label, every value it can take (absent: not enumerated).
        carrier: the counter of the same library that carries the outcome, where this one
            carries none (``http_requests_total`` beside the duration histogram).
        library: the library, release and file the layout was read from.
        servers: the ``spec.server`` values whose presets rely on that library.
    """

    labels: tuple[str, ...]
    values: dict[str, tuple[str, ...]]
    carrier: str | None
    library: str
    servers: tuple[str, ...]


_FASTAPI = (
    "prometheus-fastapi-instrumentator 8.1.0 (PyPI), prometheus_fastapi_instrumentator/"
    "metrics.py default(), with Instrumentator's should_group_status_codes=True"
)
# Grouped status codes ("2xx"), or the codes themselves with should_group_status_codes=False.
_HTTP_STATUS = tuple(f"{d}xx" for d in "12345") + tuple(str(c) for c in range(100, 600))
# The presets whose servers expose it through that library (vLLM's OpenAI server does).
_HTTP = ("openai-http", "vllm")
_TRTLLM = (
    "TensorRT-LLM 1.2, tensorrt_llm/metrics/collector.py (finished_reason from "
    "tensorrt_llm/executor/result.py)"
)
_TRTLLM_REASONS = ("stop", "length", "timeout", "cancelled")

LAYOUTS: dict[str, Layout] = {
    "http_requests_total": Layout(
        ("handler", "method", "status"), {"status": _HTTP_STATUS}, None, _FASTAPI, _HTTP
    ),
    "http_request_duration_seconds_count": Layout(
        ("handler", "method"), {}, "http_requests_total", _FASTAPI, _HTTP
    ),
    "http_request_duration_highr_seconds_count": Layout(
        (), {}, "http_requests_total", _FASTAPI, _HTTP
    ),
    **{
        f"{prefix}request_success_total": Layout(
            ("model_name", "engine_type", "finished_reason"),
            {"finished_reason": _TRTLLM_REASONS},
            None,
            _TRTLLM,
            ("trtllm",),
        )
        for prefix in ("", "trtllm_", "trtllm:")
    },
}


def layout_of(server: str, counter: str) -> Layout | None:
    """The default layout of ``counter`` under ``server``'s preset, or None when unknown."""
    layout = LAYOUTS.get(counter)
    return layout if layout is not None and server in layout.servers else None


def matcher_problem(server: str, counter: str, label: str, regex: str) -> str | None:
    """Why error matcher ``label=~regex`` can never match a series of ``counter`` as the
    library ``server``'s preset relies on exposes it by default, with the fix; None when it
    can (or the layout is unknown)."""
    layout = layout_of(server, counter)
    if layout is None:
        return None
    if label not in layout.labels:
        carried = ", ".join(layout.labels) or "no label of its own"
        where = (
            f"; {label} is on {layout.carrier}: set spec.metrics.requests.name: {layout.carrier}"
            if layout.carrier
            else ""
        )
        return (
            f"{counter} carries {carried} ({layout.library}), not {label}, so no request can "
            f"ever count as failed{where}, or name the failure counter in spec.metrics.failures"
        )
    values = layout.values.get(label)
    if values is not None and not any(regexes.fullmatch(regex, v) for v in values):
        shown = ", ".join(values[:8]) + (", …" if len(values) > 8 else "")
        return (
            f"{label}=~{regex!r} matches none of the values {counter} gives {label} "
            f"({shown}; {layout.library}): write errorMatchers that match its failures"
        )
    return None
