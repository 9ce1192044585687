"""Every SLO policy that cannot work is refused with its reason (docs/contracts.md, rules 2, 5 and 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import ObsgenError
from generator.render import load_plans
from tests.helpers_promtool import ROOT

BASE = (ROOT / "specs" / "o1-preview.yaml").read_text()
LATENCY = "{name: latency, indicator: requestDuration, threshold: 30s, objective: 99, window: 30d}"
# The shipped example declares its server's retention (warning-free examples); the cases below
# rewrite that one block rather than add a second ``prometheus:`` key (a duplicate-key error).
PROMETHEUS = "prometheus: {retention: 45d}"


def _refused(tmp_path: Path, old: str, new: str) -> str:
    assert old in BASE, old
    path = tmp_path / "bad.yaml"
    path.write_text(BASE.replace(old, new))
    with pytest.raises(ObsgenError) as err:
        load_plans([path], tmp_path)
    return "\n".join(str(d) for d in err.value.diagnostics)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            "objective: 99.9",
            "objective: 90",
            [
                "spec.slos[0].objective",
                "14.4× can never fire",
                "burn rates must stay below 10×",
            ],
            id="a 90 percent objective with default tiers names the highest reachable burn rate",
        ),
        pytest.param(
            LATENCY,
            "{name: latency, indicator: requestDuration, threshold: 30s, objective: 99, alerting: {tiers: [{budget: 0.02, longWindow: 5m, shortWindow: 1h, severity: critical}]}}",
            ["spec.slos[1].alerting.tiers[0]", "shortWindow 1h must be shorter than longWindow 5m"],
            id="short window not shorter than long window",
        ),
        pytest.param(
            LATENCY,
            "{name: latency, indicator: requestDuration, threshold: 30s, objective: 99, alerting: {tiers: [{budget: 0.02, longWindow: 1h, shortWindow: 1m, severity: critical}]}}",
            [
                "spec.slos[1].alerting.tiers[0]",
                "shortWindow 1m is shorter than 4 × scrapeInterval (2m)",
            ],
            id="window shorter than four scrape intervals",
        ),
        pytest.param(
            "objective: 99.9",
            "objective: 0",
            ["spec.slos[0].objective", "0 < objective < 100"],
            id="objective zero",
        ),
        pytest.param(
            "objective: 99.9",
            "objective: 100",
            ["spec.slos[0].objective", "0 < objective < 100"],
            id="objective one hundred",
        ),
        pytest.param(
            PROMETHEUS,
            "prometheus: {retention: 15d}",
            ["spec.slos[0].window", "SLO window 30d is longer than spec.prometheus.retention 15d"],
            id="SLO window longer than retention",
        ),
        pytest.param(
            PROMETHEUS,
            "prometheus: {retention: 45d, evaluationInterval: 45s}",
            ["spec.prometheus.evaluationInterval", "divides 5m"],
            id="evaluation interval that does not divide 5m",
        ),
        pytest.param(
            PROMETHEUS,
            "prometheus: {retention: 45d, evaluationInterval: 10m}",
            ["spec.prometheus.evaluationInterval", "divides 5m"],
            id="evaluation interval longer than 5m",
        ),
        pytest.param(
            LATENCY,
            "{name: latency, indicator: requestDuration, threshold: 30s, objective: 99, alerting: {tiers: [{budget: 0.02, longWindow: 1h, shortWindow: 5m30s, severity: critical}]}}",
            [
                "spec.slos[1].alerting.tiers[0]",
                "shortWindow 5m30s is not a multiple of evaluationInterval 1m",
            ],
            id="tier window that is not a whole number of evaluations",
        ),
        pytest.param(
            "objective: 99.9, window: 30d",
            "objective: 99.9, window: 7d30s",
            [
                "spec.slos[0].window",
                "7d30s is not a multiple of spec.prometheus.evaluationInterval 1m",
            ],
            id="SLO window that is not a whole number of evaluations",
        ),
        pytest.param(
            "threshold: 30s, objective: 99",
            "threshold: 15s, objective: 99",
            ["spec.slos[1].threshold", "15s is not a bucket bound", "below 10s, above 20s"],
            id="threshold not a bucket names the nearest bounds below and above",
        ),
    ],
)
def test_refused_with_reason(tmp_path: Path, old: str, new: str, expected: list[str]) -> None:
    message = _refused(tmp_path, old, new)
    for part in expected:
        assert part in message, message
