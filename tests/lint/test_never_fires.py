"""The mistakes `vector-matching` and `irate-in-alert` report are real: the real promtool shows
the reported alert never fires on data that should page, and its fixed twin fires.

``promtool test rules`` must agree that at 30m the mistake is silent and its twin fires; with
the twin in the mistake's place the same test fails (the data really pages).
The lint findings on the same rules are asserted too, so the proof and the check stay paired.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.lint import LintConfig, lint_paths
from tests.helpers_promtool import run_promtool

from .helpers import (
    ISSUE_ERRORS,
    ISSUE_ERRORS_FIXED,
    ISSUE_IRATE,
    ISSUE_IRATE_FIXED,
    alert,
    needs_promtool,
    rule_file,
)

# 50 % of /api requests fail: 60 errors and 60 successes a minute, for an hour.
HALF_FAILING = [
    {"series": 'http_requests_total{handler="/api",status="5xx"}', "values": "0+60x60"},
    {"series": 'http_requests_total{handler="/api",status="2xx"}', "values": "0+60x60"},
]
# On average 2 requests/s (twice the alert's threshold of 1/s), arriving in bursts: 240 in
# one minute, none in the next. irate() sees 4/s and 0/s by turns; rate() over 5m sees ~2/s.
BURSTY = [
    {
        "series": "http_requests_total",
        "values": " ".join(str(240 * ((minute + 1) // 2)) for minute in range(61)),
    }
]


def _promtool_test(
    tmp: Path, bad: str, fixed: str, series: list[dict[str, Any]], labels: dict[str, str]
) -> str:
    """Run ``promtool test rules`` on the alerts ``Bad`` and ``Fixed`` (``for: 5m`` each),
    expecting at 30m that ``Bad`` is silent and ``Fixed`` fires with ``labels``; promtool's
    output when it disagrees, else ``""``."""
    rules = tmp / "proof.rules.yaml"
    both = [
        alert(expr, name=name, annotations={"summary": "s"})
        for name, expr in (("Bad", bad), ("Fixed", fixed))
    ]
    rules.write_text(yaml.safe_dump(rule_file(*both), sort_keys=False))
    fires = {"exp_labels": {**labels, "severity": "warning"}, "exp_annotations": {"summary": "s"}}
    test = {
        "rule_files": [rules.name],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": series,
                "alert_rule_test": [
                    {"eval_time": "30m", "alertname": "Bad", "exp_alerts": []},
                    {"eval_time": "30m", "alertname": "Fixed", "exp_alerts": [fires]},
                ],
            }
        ],
    }
    path = tmp / "proof.test.yaml"
    path.write_text(yaml.safe_dump(test, sort_keys=False))
    result = run_promtool("test", "rules", path, cwd=tmp)
    return "" if result.returncode == 0 else result.stdout + result.stderr


@pytest.mark.parametrize(
    ("check", "bad", "fixed", "series", "labels"),
    [
        pytest.param(
            "vector-matching",
            ISSUE_ERRORS,
            ISSUE_ERRORS_FIXED,
            HALF_FAILING,
            {"handler": "/api"},
            id="matching",
        ),
        pytest.param("irate-in-alert", ISSUE_IRATE, ISSUE_IRATE_FIXED, BURSTY, {}, id="irate"),
    ],
)
def test_the_reported_alert_never_fires_and_its_fixed_twin_does(
    tmp_path: Path,
    check: str,
    bad: str,
    fixed: str,
    series: list[dict[str, Any]],
    labels: dict[str, str],
) -> None:
    needs_promtool()
    assert _promtool_test(tmp_path, bad, fixed, series, labels) == ""
    # The same data really pages: the check of the test is not vacuous.
    assert "alertname: Bad," in _promtool_test(tmp_path, fixed, fixed, series, labels)

    def findings(expr: str) -> list[str]:
        path = tmp_path / "lint.yaml"
        path.write_text(yaml.safe_dump(rule_file(alert(expr)), sort_keys=False))
        report = lint_paths([str(path)], LintConfig(), promtool=False)
        return [f.check for f in report.findings]

    assert findings(bad) == [check]
    assert findings(fixed) == []
