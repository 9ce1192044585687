"""``spec.roles``: which role of a disaggregated service owns each signal, so that a request
served by two pods (a prefill pod, then a decode pod) counts once: the outcome and end-to-end
latency from the router or decode, TTFT and queue time from prefill, per-token signals from
decode; saturation gauges stay on every role.

The ownership table: docs/rules.md, "Roles: who owns each signal".
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from generator.promql import Matcher
from generator.spec_workload import Roles

if TYPE_CHECKING:
    from generator.plan import HistogramPlan

OUTCOME = "outcome"
FIRST_TOKEN = "first-token"
DECODE = "decode"

# spec.metrics histogram key -> which owner reads it (module docstring).
HISTOGRAM_OWNER = {
    "requestDuration": OUTCOME,
    "timeToFirstToken": FIRST_TOKEN,
    "requestQueueTime": FIRST_TOKEN,
    "interTokenLatency": DECODE,
    "timePerOutputToken": DECODE,
}

_NOT_LABEL_CHAR = re.compile(r"[^a-zA-Z0-9_]")


def series_label(roles: Roles) -> str:
    """The series label naming the role: ``seriesLabel``, else the pod label sanitised as the
    Prometheus Operator's ``podTargetLabels`` writes it (``llm-d.ai/role`` → ``llm_d_ai_role``)."""
    return roles.series_label or _NOT_LABEL_CHAR.sub("_", roles.label)


@dataclass(frozen=True)
class RolePlan:
    """``spec.roles``, resolved: ``label`` the series label; ``values`` role name → its value
    (``prefill``, ``decode``, ``router``; only those declared); ``pod_label`` the Kubernetes
    pod label it comes from."""

    label: str
    pod_label: str
    values: Mapping[str, str]

    def value_of(self, owner: str) -> str:
        """The role label's value of ``owner`` (:data:`OUTCOME`, :data:`FIRST_TOKEN`,
        :data:`DECODE`)."""
        if owner == OUTCOME:
            return self.values.get("router") or self.values["decode"]
        if owner == FIRST_TOKEN:
            return self.values.get("prefill") or self.value_of(OUTCOME)
        return self.values["decode"]

    def matchers(self, owner: str, base: tuple[Matcher, ...]) -> tuple[Matcher, ...]:
        """``base`` with the owner's role matcher (replacing any matcher of the role label)."""
        return self.matchers_for(self.value_of(owner), base)

    def matchers_for(self, value: str, base: tuple[Matcher, ...]) -> tuple[Matcher, ...]:
        """``base`` with the matcher of the role whose label value is ``value``."""
        kept = [m for m in base if m.label != self.label]
        return tuple(sorted((*kept, Matcher(self.label, "=", value))))

    @property
    def named(self) -> tuple[tuple[str, str], ...]:
        """(role name, value) of every declared role, in the order prefill, decode, router."""
        return tuple(
            (n, self.values[n]) for n in ("prefill", "decode", "router") if n in self.values
        )


def resolve(roles: Roles | None) -> RolePlan | None:
    """The plan of ``spec.roles``; None for a service of one role."""
    if roles is None:
        return None
    values = {
        name: value
        for name, value in (
            ("prefill", roles.prefill),
            ("decode", roles.decode),
            ("router", roles.router),
        )
        if value is not None
    }
    return RolePlan(series_label(roles), roles.label, values)


def selector_problem(role: RolePlan, selector: Mapping[str, str]) -> str | None:
    """Why the service's selector cannot be combined with roles, or None."""
    if role.label in selector:
        return (
            f"label {role.label!r} is spec.roles' series label: the selector must match every "
            "role's pods; remove it from the selector"
        )
    return None


def group_by_problem(role: RolePlan, group_by: list[str]) -> str | None:
    """Why ``spec.groupBy`` cannot be combined with roles, or None: grouping by the role label
    would split every service aggregation by role, and the per-role ``ModelTargetDown`` rule
    compares roles within one group."""
    if role.label in group_by:
        return (
            f"cannot group by {role.label!r}: it is spec.roles' series label; each SLI reads "
            "one role already, and the role alerts compare the roles of one service"
        )
    return None


def scoped(role: RolePlan | None, owner: str, base: tuple[Matcher, ...]) -> tuple[Matcher, ...]:
    """``base`` restricted to ``owner``'s role, or ``base`` without roles."""
    return base if role is None else role.matchers(owner, base)


def scope_histogram(role: RolePlan | None, key: str, histogram: HistogramPlan) -> HistogramPlan:
    """A :class:`generator.plan.HistogramPlan` with its matchers restricted to the owner of
    ``key`` (:data:`HISTOGRAM_OWNER`)."""
    if role is None:
        return histogram
    owner = HISTOGRAM_OWNER.get(key, OUTCOME)
    return dataclasses.replace(histogram, matchers=role.matchers(owner, histogram.matchers))
