"""``promptTokens`` and ``generationTokens``: tokens read and written (counters), read from the
decode role of a disaggregated service; the efficiency families divide them by GPU time
(:mod:`generator.builders.efficiency_rules`), so neither records nor adds healthy series here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.signals.base import Needs, Scope, Signal, counter

if TYPE_CHECKING:
    from generator.plan import CounterPlan


def _prompt(scope: Scope) -> CounterPlan | None:
    """The preset's ``prompt_tokens`` counter, or ``spec.metrics.promptTokens``'."""
    return counter(scope.preset.prompt_tokens, scope.metrics.prompt_tokens, scope.decode)


def _generation(scope: Scope) -> CounterPlan | None:
    """The preset's ``generation_tokens`` counter, or ``spec.metrics.generationTokens``'."""
    return counter(scope.preset.generation_tokens, scope.metrics.generation_tokens, scope.decode)


def reads(c: CounterPlan) -> tuple[str, ...]:
    return (c.name,)


PROMPT = Signal(
    "prompt_tokens",
    "promptTokens",
    _prompt,
    reads,
    needs=Needs("promptTokens", "prompt_tokens", "counter"),
    verified="prompt tokens",
)
GENERATION = Signal(
    "generation_tokens",
    "generationTokens",
    _generation,
    reads,
    needs=Needs("generationTokens", "generation_tokens", "counter"),
    verified="generation tokens",
)
