"""What one guarded input is: :class:`SignalInput`, its :class:`Source` selectors and gates.

``ModelSignalMissing`` (:mod:`generator.builders.guard_rules`) emits one rule per input; alert
families (:mod:`generator.families`) say which inputs their alerts read with these types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from generator.parts.pods import owned
from generator.promql import Matcher, selector

if TYPE_CHECKING:
    from generator.plan import ServicePlan

SERVICE_KEYS = ("namespace",)
POD_KEYS = ("namespace", "pod")
GPU_KEYS = ("namespace", "pod", "uuid")


@dataclass(frozen=True)
class Source:
    """One selector of a series; ``owned``: kept to the service's pods (cAdvisor and
    kube-state-metrics series, which carry no label of the service's targets)."""

    metric: str
    matchers: tuple[Matcher, ...]
    owned: bool = False

    def expr(self, plan: ServicePlan) -> str:
        """The selector as PromQL (joined with the pod owner record when ``owned``)."""
        text = selector(self.metric, self.matchers)
        return owned(plan, text) if self.owned else text


@dataclass(frozen=True)
class Condition:
    """Part of a gate: one of ``sources`` (a metric's names across releases) has a series,
    with value ``equals`` when set (``up == 1``)."""

    sources: tuple[Source, ...]
    equals: float | None = None


@dataclass(frozen=True)
class SignalInput:
    """One input of the plan's alerts and SLOs, and how to tell it is missing.

    Attributes:
        signal: the ``signal`` label (``spec.metrics`` key, or ``pods``, ``memoryWorkingSet``, …).
        metric: the ``metric`` label: the series name a user would look for.
        keys: labels the guard keeps (``namespace``; ``pod`` and ``uuid`` for GPU inputs).
        needs: present when, for every tuple, any of its sources has a series (Triton's KV cache
            needs its ``used`` and its ``max`` series; GPU memory is whole-GPU or per MIG instance).
        gate: conditions under which the input must be present (all must hold).
        readers: what reads it (``ModelKVCacheNearFull``, ``ErrorBudgetBurn (SLO latency)``).
        covers: selectors read beside it that may be absent on a healthy service.
        excused: sources whose series (per key set) say the input is absent on purpose (the
            exporter reports the reading unsupported on that GPU): no guard there.
        le: the bucket bound (metric unit, as text) of a bucket input, else None.
        remedy: where to look when it is missing.
    """

    signal: str
    metric: str
    keys: tuple[str, ...]
    needs: tuple[tuple[Source, ...], ...]
    gate: tuple[Condition, ...]
    readers: tuple[str, ...]
    covers: tuple[Source, ...] = ()
    excused: tuple[Source, ...] = ()
    le: str | None = None
    remedy: str = ""

    @property
    def sources(self) -> tuple[Source, ...]:
        """Every source of :attr:`needs`, in order."""
        return tuple(s for group in self.needs for s in group)


def targets_up(plan: ServicePlan) -> Condition:
    """The gate of a target's own inputs: one of the service's targets is up."""
    return Condition((Source("up", plan.matchers),), 1)


def server_remedy(key: str) -> str:
    """Where to look when the server's ``spec.metrics.<key>`` input is missing."""
    return (
        f"A server upgrade may have renamed it: compare spec.serverVersion and "
        f"spec.metrics.{key} with what the server exposes (obsgen verify lists both)."
    )
