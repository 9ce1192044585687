"""Efficiency records: energy per 1,000 output tokens (J) and GPU-seconds per million output
tokens, per service (namespace and cluster label; not per ``groupBy`` group: GPU series carry
no model label), over 5m rates, from the GPU source's energy counter in joules (the sidecar's
``gpu_energy_joules_total``, or dcgm-exporter's mJ field over 1000: :mod:`generator.families.dcgm`)
and the server's generation-token counter. Absent while no token is generated. A shared GPU
(time-slicing, MPS, MIG) reports the whole device's energy to every pod that sees it: docs/spec.md,
"Efficiency".
"""

from __future__ import annotations

from generator import naming
from generator.families import gpu
from generator.families.efficiency_regression import ENERGY_PER_1K as ENERGY_PER_1K
from generator.families.efficiency_regression import GPU_SECONDS_PER_1M as GPU_SECONDS_PER_1M
from generator.parts.common import Rule, record_rule
from generator.plan_types import ServicePlan
from generator.promql import by, selector


def _tokens(plan: ServicePlan) -> str:
    tokens = plan.generation_tokens
    if tokens is None:
        raise ValueError(f"plan {plan.name} has no generation-token counter")
    per = by(plan.keeping("namespace"))
    return f"(sum{per} (rate({selector(tokens.name, tokens.matchers)}[5m])) > 0)"


def energy_per_1k_tokens(plan: ServicePlan) -> str:
    """Joules the service's GPUs used per 1,000 output tokens: 1000 × J/s ÷ tokens/s."""
    per = by(plan.keeping("namespace"))
    energy = gpu.read(plan, naming.GPU_ENERGY)
    return f"1000 * sum{per} (rate({energy}[5m]))\n/ {_tokens(plan)}"


def gpu_seconds_per_1m_tokens(plan: ServicePlan) -> str:
    """GPU-seconds per million output tokens: 1e6 × GPUs held (each one device the service's
    pods report an energy counter for, a GPU-second per second) ÷ tokens/s."""
    per = by(plan.keeping("namespace"))
    energy = gpu.read(plan, naming.GPU_ENERGY)
    return f"1e+06 * count{per} ({energy})\n/ {_tokens(plan)}"


def records(plan: ServicePlan) -> list[Rule]:
    """Both records, or none without a GPU source or a generation-token counter."""
    if not plan.gpu_exporter or plan.generation_tokens is None:
        return []
    return [
        record_rule(plan, ENERGY_PER_1K, energy_per_1k_tokens(plan)),
        record_rule(plan, GPU_SECONDS_PER_1M, gpu_seconds_per_1m_tokens(plan)),
    ]
