"""The LoRA adapter pool: an info gauge whose labels list the running and waiting adapters and
the pool's size (vLLM's ``vllm:lora_requests_info``), from the preset only.

The server sets it only with LoRA enabled: unguarded, and ``obsgen verify`` warns when absent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.signals.base import Needs, Presence, Scope, Signal

if TYPE_CHECKING:
    from generator.plan import ServicePlan

KEY = "lora_info"


def resolve(scope: Scope) -> str | None:
    """The preset's gauge name (read on the service's matchers)."""
    return scope.preset.lora_info


def verify(plan: ServicePlan, readers: tuple[str, ...]) -> list[Presence]:
    """The gauge, which ``obsgen verify`` expects (``readers`` stay silent without it)."""
    if plan.lora_info is None:
        return []
    why = (
        f"{' and '.join(readers)} stays silent; the server sets it only with LoRA "
        "enabled (vLLM --enable-lora)"
    )
    return [Presence("lora pool", plan.lora_info, plan.matchers, why)]


SIGNAL = Signal(
    KEY,
    None,
    resolve,
    needs=Needs("loraPool", KEY, "LoRA adapter gauge", declarable=False),
    verify=verify,
)
