"""Every value a spec error suggests must be accepted when applied (issue 18, "every suggestion
works", spec errors included): suggested tiers, tier budgets, objectives, thresholds, ratios.

Each case breaks one field of a committed spec, reads the suggestion out of the error, writes
it into the spec and checks the spec again: it must pass. Lives with the lint tests because
the linter and the spec checks make the same promise.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.errors import Level, ObsgenError
from generator.render import load_plans
from tests.factories import REPO, set_path, write_spec

SPECS = sorted((REPO / "specs").glob("*.yaml"))


def _spec(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((REPO / "specs" / name).read_text())
    return data


def _errors(tmp: Path, data: dict[str, Any]) -> list[str]:
    path = write_spec(tmp, data)
    try:
        load_plans([path], tmp)
    except ObsgenError as err:
        return [str(d) for d in err.diagnostics if d.level is Level.ERROR]
    return []


def _one(messages: list[str], pattern: str) -> re.Match[str]:
    found = [m for m in (re.search(pattern, text) for text in messages) if m is not None]
    assert found, messages
    return found[0]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("spec.slos[0].objective", 90, id="objective 90: 14.4x cannot fire"),
        pytest.param("spec.slos[0].objective", 50, id="objective 50: only factors below 2"),
        pytest.param("spec.prometheus", {"scrapeInterval": "2m"}, id="scrape every 2m"),
        pytest.param("spec.prometheus", {"scrapeInterval": "1h"}, id="scrape every hour"),
        pytest.param("spec.slos[0].window", "1d", id="a 1d SLO window"),
    ],
)
def test_the_suggested_custom_tier_is_accepted(tmp_path: Path, field: str, value: Any) -> None:
    data = set_path(_spec("o1-preview.yaml"), field, value)
    errors = _errors(tmp_path, data)
    suggestion = _one(errors, r"e\.g\. (tiers: \[.*\])$").group(1)
    tiers = yaml.safe_load(suggestion)["tiers"]
    for slo in data["spec"]["slos"]:
        slo["alerting"] = {"tiers": tiers}
    assert _errors(tmp_path, data) == []


def test_the_suggested_tier_budget_is_accepted(tmp_path: Path) -> None:
    data = _spec("o1-preview.yaml")
    tier = {"budget": 0.01, "longWindow": "3d", "shortWindow": "6h", "severity": "warning"}
    data["spec"]["slos"][0]["alerting"] = {"tiers": [tier]}
    budget = _one(_errors(tmp_path, data), r"give it budget ≥ ([0-9.]+)").group(1)
    tier["budget"] = float(budget)
    assert _errors(tmp_path, data) == []


def test_a_threshold_of_one_is_refused_and_the_stated_limit_is_real(tmp_path: Path) -> None:
    """Objective 50%: a tier at exactly 2× needs an error ratio above 1 — never. The error
    states the limit as "below 2×", and a factor below it is accepted."""
    data = set_path(_spec("o1-preview.yaml"), "spec.slos[0].objective", 50)
    tier = {"budget": 0.2, "longWindow": "3d", "shortWindow": "6h", "severity": "warning"}
    data["spec"]["slos"][0]["alerting"] = {"tiers": [tier]}  # 0.2 × 30d / 3d = 2×
    limit = _one(_errors(tmp_path, data), r"burn rates must stay below ([0-9.]+)×").group(1)
    assert limit == "2"
    tier["budget"] = 0.19  # 1.9×
    assert _errors(tmp_path, data) == []


def _latency_slo(data: dict[str, Any]) -> dict[str, Any]:
    """The spec's first latency SLO (one is added when it has none)."""
    latency = [slo for slo in data["spec"]["slos"] if "indicator" in slo]
    if not latency:
        data["spec"]["slos"].append({"name": "latency", "indicator": "requestDuration"})
        latency = data["spec"]["slos"][-1:]
    return latency[0]


@pytest.mark.parametrize("spec", [p.name for p in SPECS])
@pytest.mark.parametrize("side", ["below", "above"])
def test_the_nearest_bucket_bounds_suggested_are_accepted(
    tmp_path: Path, spec: str, side: str
) -> None:
    data = _spec(spec)
    slo = _latency_slo(data)
    slo["threshold"] = "7s"
    errors = _errors(tmp_path, data)
    if f"nearest: {side}" not in " ".join(errors) and not re.search(
        rf", {side} ", " ".join(errors)
    ):
        assert any("nearest:" in e for e in errors), errors
        return  # the histogram has no bound on that side of 7s
    slo["threshold"] = _one(errors, rf"{side} ([0-9.a-z]+)").group(1)
    assert _errors(tmp_path, data) == []


@pytest.mark.parametrize("spec", [p.name for p in SPECS])
@pytest.mark.parametrize(
    ("field", "bad", "pattern"),
    [
        pytest.param("spec.slos[0].objective", 100, r"\(e\.g\. ([0-9.]+)\)", id="objective"),
        pytest.param("spec.alerts.errorRatio", {"maxRatio": 1.5}, r"\(e\.g\. ([0-9.]+)\)", id="maxRatio"),
        pytest.param("spec.alerts.memoryHeadroom", {"minFree": 0}, r"\(e\.g\. ([0-9.]+)\)", id="minFree"),
    ],
)  # fmt: skip
def test_the_example_values_of_range_errors_are_accepted(
    tmp_path: Path, spec: str, field: str, bad: Any, pattern: str
) -> None:
    data = set_path(_spec(spec), field, bad)
    example = float(_one(_errors(tmp_path, data), pattern).group(1))
    if isinstance(bad, dict):
        set_path(data, field, {next(iter(bad)): example})
    else:
        set_path(data, field, example)
    assert _errors(tmp_path, data) == []


@pytest.mark.parametrize("spec", [p.name for p in SPECS])
def test_a_missing_latency_threshold_suggests_no_value_that_fails(
    tmp_path: Path, spec: str
) -> None:
    """The error used to say "e.g. threshold: 30s", which is no bucket bound of the TGI or
    Triton histograms: it now names what is needed; any example it prints must pass."""
    data = _spec(spec)
    slo = _latency_slo(data)
    slo.pop("threshold", None)
    errors = _errors(tmp_path, data)
    assert any("needs threshold" in e for e in errors), errors
    example = re.search(r"e\.g\. threshold: (\S+)", " ".join(errors))
    if example is not None:
        slo["threshold"] = example.group(1)
        assert _errors(tmp_path, data) == []
