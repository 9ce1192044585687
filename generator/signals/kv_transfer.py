"""Disaggregated prefill/decode KV transfer: (transfer-time histogram, failed-transfer counter),
exported by the role that pulls the KV cache (the decode role), from the preset only.

The server exports them only with a NIXL KV connector: unguarded, and ``obsgen verify`` warns
when absent. Their records belong to :mod:`generator.families.kv_transfer`, their one reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator import roles
from generator.signals.base import Needs, Presence, Scope, Signal

if TYPE_CHECKING:
    from generator.plan import ServicePlan

KEY = "kv_transfer"


def resolve(scope: Scope) -> tuple[str, str] | None:
    """The preset's (histogram, counter) names."""
    return scope.preset.kv_transfer


def verify(plan: ServicePlan, readers: tuple[str, ...]) -> list[Presence]:
    """The histogram's count and the counter on the decode role, which ``obsgen verify``
    expects (``readers`` stay silent without them)."""
    if plan.kv_transfer is None:
        return []
    histogram, failed = plan.kv_transfer
    sel = roles.scoped(plan.roles, roles.DECODE, plan.matchers)
    why = (
        f"{' and '.join(readers)} stay silent; the server exports it only with a NIXL "
        "KV connector on the decode role"
    )
    return [Presence("kv transfer", metric, sel, why) for metric in (histogram + "_count", failed)]


SIGNAL = Signal(
    KEY,
    None,
    resolve,
    needs=Needs("kvTransfer", KEY, "KV-transfer series", declarable=False),
    verify=verify,
)
