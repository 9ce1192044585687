"""Speculative decoding's (draft tokens, accepted tokens) counters, from the preset only (vLLM
V1 creates them only while a draft model or method runs), read from the decode role.

The acceptance records belong to :mod:`generator.families.spec_decode`, their one reader.
"""

from __future__ import annotations

from generator.plan_types import CounterPlan
from generator.signals.base import Needs, Scope, Signal

KEY = "spec_decode"


def resolve(scope: Scope) -> tuple[CounterPlan, CounterPlan] | None:
    """The preset's two counters on the decode role's matchers."""
    pair = scope.preset.spec_decode
    if pair is None:
        return None
    return CounterPlan(pair[0], scope.decode), CounterPlan(pair[1], scope.decode)


# Unguarded: the server creates the counters only while speculative decoding is on
# (generator.builders.guard_rules lists them as such).
SIGNAL = Signal(
    KEY,
    None,
    resolve,
    needs=Needs("specDecode", KEY, "speculative-decoding counters", declarable=False),
)
