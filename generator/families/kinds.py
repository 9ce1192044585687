"""The alerts obsgen emits that are not one ``spec.alerts`` family each (:class:`Kind`): the SLO
alerts, rendered per SLO tier or budget level, the per-model alerts of ``spec.models``, and the
input guard ``ModelSignalMissing``, which reads every family's inputs.

Each says how its runbook page is rendered (``page``), its routing role and, for the one with
a ``spec.alerts`` entry (``signalMissing``), its defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generator import naming
from generator.families.base import Role

SLO_BUDGET = "slo_budget"  # rendered per SLO budget level
GOODPUT = "goodput"  # rendered per goodput SLO tier
GOODPUT_BUDGET = "goodput_budget"  # rendered per goodput SLO budget level
MODELS_BURN = "models_burn"  # spec.models: rendered per SLO tier and named model
MODELS = "models"  # spec.models: the unwatched-traffic ticket


@dataclass(frozen=True)
class Kind:
    """One alert that is not a family's.

    Attributes:
        alert: its name (``ModelErrorBudgetBurn``).
        page: how its runbook page is rendered (:data:`generator.builders.runbooks.ALERTS`):
            None per SLO tier, else one of the constants above, or its ``spec.alerts`` key.
        role: its routing role (:mod:`generator.builders.alertmanager_routing`).
        key: its ``spec.alerts`` key, where it has one; then ``for_ms``, ``severity`` and
            ``params`` are its defaults (:data:`generator.plan.ALERT_DEFAULTS`).
    """

    alert: str
    page: str | None
    role: Role
    key: str | None = None
    for_ms: int = 0
    severity: str = ""
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def defaults(self) -> tuple[int, str, dict[str, Any]]:
        """(``for`` in ms, severity, a copy of the params): an entry of ``ALERT_DEFAULTS``."""
        return self.for_ms, self.severity, dict(self.params)


KINDS: tuple[Kind, ...] = (
    Kind(naming.ALERT_ERROR_BUDGET_BURN, None, Role.SYMPTOM),
    Kind(naming.ALERT_ERROR_BUDGET_LOW, SLO_BUDGET, Role.SYMPTOM),
    Kind(naming.ALERT_GOODPUT_BURN, GOODPUT, Role.SYMPTOM),
    Kind(naming.ALERT_GOODPUT_BUDGET_LOW, GOODPUT_BUDGET, Role.SYMPTOM),
    # Input guards: at least SIGNAL_MISSING_MIN_SCRAPES scrape intervals (resolve() raises it).
    Kind(
        naming.ALERT_SIGNAL_MISSING,
        "signal_missing",
        Role.GUARD,
        key="signal_missing",
        for_ms=900_000,
        severity="warning",
        params={"ignore": ()},
    ),
    Kind(naming.ALERT_BURN_BY_MODEL, MODELS_BURN, Role.SYMPTOM),
    Kind(naming.ALERT_MODELS_UNWATCHED, MODELS, Role.GUARD),
)
