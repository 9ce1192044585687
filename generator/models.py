"""``spec.models``: the models (or adapters, where the server labels requests by them) of one
server that get their own SLIs; every other value of the model label rolls up into one
``other`` series, so per-model records stay bounded (``len(names) + 1`` per SLO).

Rules: :mod:`generator.builders.model_slo_rules`; users' view: docs/spec.md, "Per-model SLOs".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from generator.presets.layouts import LAYOUTS
from generator.promql import Matcher, regex_escape
from generator.spec_workload import OTHER_MODELS, Models

if TYPE_CHECKING:
    from generator.plan import RequestsPlan

OTHER = OTHER_MODELS


@dataclass(frozen=True)
class ModelsPlan:
    """``spec.models``, resolved: ``label`` the preset's model label (``model_name``);
    ``names`` the named models, sorted; ``max_unwatched_share`` the rollup's share (0–1) of
    requests over 1h above which ``ModelTrafficUnwatched`` tickets."""

    label: str
    names: tuple[str, ...]
    max_unwatched_share: float

    @property
    def pattern(self) -> str:
        """RE2 alternation matching exactly the named models."""
        return "|".join(regex_escape(n) for n in self.names)

    def named(self) -> tuple[Matcher, ...]:
        """Matchers of the named models' series."""
        return (Matcher.regex(self.label, self.pattern),)

    def unnamed(self) -> tuple[Matcher, ...]:
        """Matchers of every other model's series (the rollup): a model label, not named."""
        return (Matcher.regex(self.label, self.pattern, negate=True), self.any())

    def any(self) -> Matcher:
        """Matcher of every series with a model label."""
        return Matcher(self.label, "=~", ".+")


def resolve(models: Models | None, model_label: str | None) -> ModelsPlan | None:
    """The plan of ``spec.models`` (None without it); the caller checked ``model_label``."""
    if models is None or model_label is None:
        return None
    return ModelsPlan(model_label, tuple(sorted(models.names)), models.max_unwatched_share)


def problem(server: str, model_label: str | None, group_by: list[str]) -> str | None:
    """Why ``spec.models`` cannot be used with this server and ``spec.groupBy``, or None."""
    if model_label is None:
        return (
            f"the {server} preset reads no model label: its series do not say which model "
            "served a request, so there is nothing to break down; leave spec.models out"
        )
    if model_label in group_by:
        return (
            f"spec.groupBy already splits every SLO by {model_label!r} (unbounded); use either "
            f"groupBy or spec.models, which bounds the breakdown to the named models and "
            f"{OTHER!r}"
        )
    return None


def carries(name: str, label: str) -> bool:
    """Whether counter ``name`` carries ``label``: false only where its library's layout
    (:data:`generator.presets.layouts.LAYOUTS`) lists its labels without it
    (vLLM's ``http_requests_total``: handler, method, status)."""
    layout = LAYOUTS.get(name)
    return layout is None or label in layout.labels


def requests_by_model(requests: RequestsPlan, label: str) -> RequestsPlan | None:
    """The request counters a per-model availability SLI reads: the service's own where they
    carry ``label`` (failure sources without it dropped), else the first failure source that
    carries it, read as the total (every finish reason) and its failures (vLLM 0.13+:
    ``vllm:request_success_total`` by ``finished_reason``); None where no counter tells
    both a model's requests and its failures (vLLM before 0.13)."""
    own = [requests.name, *([requests.failure_name] if requests.failure_name else [])]
    if all(carries(n, label) for n in own):
        return replace(
            requests, sources=tuple(s for s in requests.sources if carries(s.name, label))
        )
    for src in requests.sources:
        if carries(src.name, label):
            return replace(
                requests,
                name=src.name,
                matchers=src.matchers,
                error_matchers=src.error_matchers,
                exclude_matchers=src.exclude_matchers,
                failure_name=None,
                sources=(),
            )
    return None
