"""``spec.alerts.efficiencyRegression`` (off unless the spec sets it): ``ModelEfficiencyRegressed``,
a ticket when the service's energy per 1,000 output tokens (``measure: energy``, J) or its
GPU-seconds per million output tokens (``measure: gpuSeconds``) over the last hour is more than
``maxIncrease`` (a ratio: 0.2 is 20 %) above the same hour ``baseline`` ago (``1d`` default, or
``7d``), for ``for`` (1h); silent when either hour averages under ``minTokensPerSecond``. Reads
the records of :mod:`generator.builders.efficiency_rules`. Why the same hour (energy per token
follows the daily load) and how shared GPUs are attributed: docs/spec.md, "Efficiency".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from generator import naming
from generator.families.base import Family, Resolving, Role
from generator.parts import gpu_series
from generator.parts.common import alert_rule, recorded
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    expected_alert,
    family_case,
    labels_of,
)
from generator.promql import by, go_float, selector
from generator.signals.healthy import healthy
from generator.spec_alerts import MAX_THRESHOLD, AlertBase
from generator.units import decimal_str, format_duration_ms

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "efficiency_regression"
ALERT = naming.ALERT_EFFICIENCY_REGRESSED
WINDOW = "1h"
# The records this family reads; :mod:`generator.builders.efficiency_rules` writes them.
ENERGY_PER_1K = naming.record((), "model_energy_per_1k_output_tokens_joules", "rate5m")
GPU_SECONDS_PER_1M = naming.record((), "model_gpu_seconds_per_1m_output_tokens", "rate5m")

# What each measure is, for the alert's text.
WHAT = {
    "energy": "energy per 1,000 output tokens",
    "gpuSeconds": "GPU-seconds per million output tokens",
}


class EfficiencyRegressionAlert(AlertBase):
    """``alerts.efficiencyRegression`` (off unless set): a ticket when energy per 1,000 output
    tokens (``measure: energy``) or GPU-seconds per million output tokens (``gpuSeconds``)
    over the last hour is more than ``maxIncrease`` (ratio, 0.2 = 20 %) above the same hour
    ``baseline`` ago (``1d`` or ``7d``), while both hours averaged at least
    ``minTokensPerSecond`` output tokens a second (docs/spec.md, "Efficiency")."""

    max_increase: Annotated[float, Field(gt=0, le=10)] | None = None
    baseline: Literal["1d", "7d"] | None = None
    min_tokens_per_second: Annotated[float, Field(gt=0, le=MAX_THRESHOLD)] | None = None
    measure: Literal["energy", "gpuSeconds"] | None = None


@dataclass(frozen=True)
class Params:
    """``max_increase``: the share (0–1) the measure may rise over its baseline;
    ``baseline_ms``: how long ago the baseline hour is (1d or 7d); ``min_tokens_per_second``:
    the output tokens under which it stays silent; ``measure``: ``energy`` or ``gpuSeconds``."""

    max_increase: float
    baseline_ms: int
    min_tokens_per_second: float
    measure: str


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``efficiency_regression`` alert."""
    return Params(
        float(alert.params["max_increase"]),
        int(alert.params["baseline_ms"]),
        float(alert.params["min_tokens_per_second"]),
        str(alert.params["measure"]),
    )


def _record(measure: str) -> str:
    """The efficiency record of ``measure``."""
    return {"energy": ENERGY_PER_1K, "gpuSeconds": GPU_SECONDS_PER_1M}[measure]


def _tokens(plan: ServicePlan, offset: str) -> str:
    tokens = plan.generation_tokens
    assert tokens is not None
    per = by(plan.keeping("namespace"))
    shift = f" offset {offset}" if offset else ""
    return f"sum{per} (rate({selector(tokens.name, tokens.matchers)}[{WINDOW}]{shift}))"


def expr(plan: ServicePlan) -> str:
    """The hour's average of the measure over the same hour ``baseline`` ago, above
    1 + ``max_increase``, where both hours averaged at least ``min_tokens_per_second``."""
    p = params(plan.alerts[KEY])
    record = recorded(plan, _record(p.measure))
    baseline = format_duration_ms(p.baseline_ms)
    least = decimal_str(p.min_tokens_per_second)
    on = f"on ({', '.join(plan.keeping('namespace'))})"
    return (
        f"(\n  avg_over_time({record}[{WINDOW}])\n/\n"
        f"  avg_over_time({record}[{WINDOW}] offset {baseline})\n"
        f") > {go_float(1 + p.max_increase)}\n"
        f"and {on} {_tokens(plan, '')} >= {least}\n"
        f"and {on} {_tokens(plan, baseline)} >= {least}"
    )


def rules(plan: ServicePlan) -> list[Rule]:
    """One rule, when the spec enables it and the service has a GPU source and a
    generation-token counter."""
    alert = plan.alerts.get(KEY)
    if alert is None or not plan.gpu_exporter or plan.generation_tokens is None:
        return []
    p = params(alert)
    return [
        alert_rule(
            plan,
            ALERT,
            expr(plan),
            alert.for_ms,
            alert.severity,
            what=WHAT[p.measure],
            increase=f"{p.max_increase * 100:g} %",
            baseline=format_duration_ms(p.baseline_ms),
        )
    ]


def _series(plan: ServicePlan, steps: int, watts: tuple[float, float], tokens_per_s: float) -> Any:
    """A healthy service for ``steps`` minutes generating ``tokens_per_s``; its GPU draws
    ``watts[0]`` for the first day and ``watts[1]`` after."""
    s = healthy(plan, [Klass(BASE_PER_MIN)], length=steps)
    day = 1440
    first, then = (w * 60 for w in watts)  # J a minute
    values = f"0+{go_float(first)}x{day} {go_float(first * day + then)}+{go_float(then)}x{steps - day - 1}"
    gpu_series.put(plan, s, naming.GPU_ENERGY, values)
    tokens = plan.generation_tokens
    assert tokens is not None
    s.add(tokens.name, labels_of(plan, tokens.matchers), tokens_per_s * 60)
    return s


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """None in the service's generated test file: the proof needs a day and more of
    evaluations (the baseline is a day back), which on the whole rule file takes minutes;
    tests/test_efficiency_regression.py runs :func:`proof_cases` on the rules the alert
    reads."""
    return []


def proof_cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """Energy up by half on the second day (350 W → 525 W, tokens steady) fires one ticket
    after a regressed hour and ``for``; steady energy stays quiet, and so does the same
    regression on too little traffic. The baseline is fixed at a day here (the 7d offset is
    the same expression with another offset)."""
    rule = next(iter(rules(plan)), None)
    if rule is None or params(plan.alerts[KEY]).baseline_ms != 86_400_000:
        return []
    p = params(plan.alerts[KEY])
    alert = plan.alerts[KEY]
    at = (1440 + 60 + 10) * 60_000 + alert.for_ms
    steps = at // 60_000 + 1
    busy = p.min_tokens_per_second * 100
    idle = p.min_tokens_per_second / 2
    labels = {**labels_of(plan, ()), naming.SERVICE: plan.name}
    labels = {k: v for k, v in labels.items() if k in (*plan.keeping("namespace"), naming.SERVICE)}
    expected = [expected_alert(rule, labels, None)]
    return [
        family_case(
            plan, f"{ALERT} fires", _series(plan, steps, (350, 525), busy), ALERT, expected, at
        ),
        family_case(
            plan, f"{ALERT} stays quiet", _series(plan, steps, (350, 350), busy), ALERT, [], at
        ),
        family_case(
            plan,
            f"{ALERT}: too little traffic to judge stays quiet",
            _series(plan, steps, (350, 525), idle),
            ALERT,
            [],
            at,
        ),
    ]


def runbook_queries(plan: ServicePlan, record: Any) -> dict[str, str | None]:
    """``efficiency_energy``: the energy record of the service (joules per 1,000 tokens)."""
    return {"efficiency_energy": recorded(plan, _record("energy"))}


_BASELINES_MS = {"1d": 86_400_000, "7d": 604_800_000}


def check(r: Resolving) -> bool:
    """``spec.alerts.efficiencyRegression.baseline`` (``1d`` or ``7d``) as ``baseline_ms``."""
    baseline = getattr(r.given, "baseline", None)
    if baseline is not None:
        r.params["baseline_ms"] = _BASELINES_MS[baseline]
    return True


FAMILY = Family(
    key=KEY,
    spec_field="efficiencyRegression",
    spec_model=EfficiencyRegressionAlert,
    alerts=(ALERT,),
    for_ms=3_600_000,
    severity="warning",
    params={
        "max_increase": 0.2,
        "baseline_ms": 86_400_000,
        "min_tokens_per_second": 1.0,
        "measure": "energy",
    },
    role=Role.GPU,
    group="gpu",
    rules=rules,
    cases=cases,
    signals=("generation_tokens",),
    sidecar=True,
    row="gpu",
    runbook_queries=runbook_queries,
    rank=40,
    check=check,
    default_on=lambda body: False,  # opt-in: its output would be new for every existing spec
)
