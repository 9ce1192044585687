"""The spec's ``slos`` section: objectives, burn-rate tiers, budget alerts and goodput targets."""

from __future__ import annotations

import itertools
from typing import Annotated

from pydantic import (
    AfterValidator,
    Field,
    field_validator,
    model_validator,
)

from generator.spec_types import (
    DNS1123_LABEL,
    INDICATOR_ALIASES,
    MAX_OBJECTIVE,
    MAX_TIERS,
    AlertFor,
    DurationMs,
    MinEvents,
    PlainText,
    Severity,
    SLOWindow,
    StrictModel,
    _number,
    _pattern,
)
from generator.units import (
    decimal_str,
)


class BurnRateTier(StrictModel):
    """One multi-window burn-rate alert tier (SRE Workbook ch. 5, table 5-8).

    ``budget`` is the share (0–1) of the SLO window's error budget this tier lets burn in
    ``longWindow`` before it fires.
    """

    budget: Annotated[float, Field(gt=0, le=1)]
    long_window: DurationMs
    short_window: DurationMs
    severity: Severity


def _budget_levels(levels: list[float] | None) -> list[float] | None:
    if levels is not None:
        if any(not 0 < x < 1 for x in levels):
            raise ValueError("expected shares of the budget left, each above 0 and below 1")
        if any(b >= a for a, b in itertools.pairwise(levels)):
            raise ValueError("expected levels in strictly descending order, e.g. [0.5, 0.25]")
    return levels


class SLOAlerting(StrictModel):
    """``spec.slos[].alerting``: burn-rate tiers, the minimum-events guard and the
    remaining-budget levels (``budgetLeft``, shares of the budget left over the SLO window at
    which ``ErrorBudgetLow`` tickets, descending; default 0.5 and 0.25; ``[]`` for none).
    ``keepFiringFor`` keeps a firing burn-rate alert firing that long after its condition
    clears (Prometheus 2.42+), so a burn near the threshold does not resolve and re-page."""

    enabled: bool = True
    budget_left: Annotated[
        list[float] | None, Field(max_length=4), AfterValidator(_budget_levels)
    ] = None
    tiers: Annotated[list[BurnRateTier], Field(max_length=MAX_TIERS)] | None = None
    min_events: MinEvents | None = None
    keep_firing_for: AlertFor | None = None


# Goodput targets: the per-request latency histograms a goodput SLO may combine. Every share in
# the union bound must be a share of *requests*; interTokenLatency counts token gaps (one
# observation per generated token), so its share bounds nothing about requests.
GOODPUT_SIGNALS = ("requestDuration", "timeToFirstToken", "requestQueueTime", "timePerOutputToken")
MIN_GOODPUT_TARGETS, MAX_GOODPUT_TARGETS = 2, 4


class GoodputTarget(StrictModel):
    """``spec.slos[].targets[]``: one latency target a good request must meet: ``signal``
    (a per-request latency histogram: ``ttft``, ``tpot``, ``e2e``, ``queue`` or their long
    names) no slower than ``threshold`` (a bucket bound of it, as a duration)."""

    signal: str
    threshold: DurationMs

    @field_validator("signal")
    @classmethod
    def _per_request(cls, value: str) -> str:
        key = INDICATOR_ALIASES.get(value)
        if key == "interTokenLatency":
            raise ValueError(
                f"{value!r} counts token gaps, not requests: a goodput bound needs the share "
                "of requests over each target; use tpot (timePerOutputToken, the per-request "
                "mean; declare spec.metrics.timePerOutputToken where the preset has none)"
            )
        if key is None:
            names = ", ".join(k for k, v in INDICATOR_ALIASES.items() if v in GOODPUT_SIGNALS)
            raise ValueError(
                f"{value!r} is not a per-request latency signal; expected one of {names}"
            )
        return value


class SLO(StrictModel):
    """``spec.slos[]``: one service-level objective.

    Without ``indicator`` it is an availability SLO (good = requests not matching
    ``metrics.requests.errorMatchers``); with ``indicator`` a latency SLO (good = requests
    no slower than ``threshold``, which must be a bucket bound of that histogram); with
    ``targets`` a goodput SLO (good = requests meeting every target; recorded as the union
    bound's lower bound, :mod:`generator.builders.goodput_rules`).
    ``objective`` is in percent, 0 < objective < 100.
    """

    name: Annotated[str, Field(max_length=63), _pattern(DNS1123_LABEL, "a DNS-1123 label")]
    indicator: str | None = None
    threshold: DurationMs | None = None
    targets: (
        Annotated[
            list[GoodputTarget],
            Field(min_length=MIN_GOODPUT_TARGETS, max_length=MAX_GOODPUT_TARGETS),
        ]
        | None
    ) = None
    objective: float
    window: SLOWindow = 30 * 86_400_000
    alerting: SLOAlerting = SLOAlerting()
    description: PlainText | None = None

    @field_validator("objective")
    @classmethod
    def _objective_range(cls, value: float) -> float:
        if not 0 < value < 100:
            raise ValueError(
                f"{decimal_str(value)} is out of range; expected a percentage with 0 < objective < 100 (e.g. 99.9)"
            )
        if value > MAX_OBJECTIVE:
            raise ValueError(
                f"{_number(value)} leaves an error budget under one in a million, which "
                "float64 ratios cannot tell from zero; expected at most "
                f"{decimal_str(MAX_OBJECTIVE)}"
            )
        return value

    @field_validator("indicator")
    @classmethod
    def _known_indicator(cls, value: str | None) -> str | None:
        if value is not None and value not in INDICATOR_ALIASES:
            raise ValueError(
                f"{value!r} is not a latency indicator; expected one of {', '.join(INDICATOR_ALIASES)}"
            )
        return value

    @model_validator(mode="after")
    def _targets_alone(self) -> SLO:
        if self.targets is None:
            return self
        if self.indicator is not None or self.threshold is not None:
            raise ValueError(
                "targets (a goodput SLO) replaces indicator and threshold; give either "
                "targets or indicator with threshold"
            )
        keys = [INDICATOR_ALIASES[t.signal] for t in self.targets]
        if len(set(keys)) != len(keys):
            raise ValueError("each goodput target needs its own signal (ttft, tpot, e2e, queue)")
        return self

    @model_validator(mode="after")
    def _threshold_iff_indicator(self) -> SLO:
        if self.indicator is not None and self.threshold is None:
            raise ValueError(
                "a latency SLO (with indicator) needs threshold: one of the bucket bounds of "
                "the indicator's histogram, as a duration"
            )
        if self.indicator is None and self.threshold is not None:
            raise ValueError(
                "threshold needs indicator (the latency histogram), e.g. indicator: requestDuration"
            )
        return self
