"""Panels show the numbers the alerts compare: dashboard queries (variables set to "All")
evaluated by the real ``promtool test rules`` over the service's generated rule file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator import promtool
from generator.lint.dashboards import promql_for_promtool
from generator.yamlio import dump_yaml

ROOT = Path(__file__).resolve().parents[1]
SERIES = 'http_requests_total{job="o1-preview",namespace="ai-inference",status="%s"}'
BUCKET = 'http_request_duration_seconds_bucket{job="o1-preview",namespace="ai-inference",le="%s"}'
COUNT = 'http_request_duration_seconds_count{job="o1-preview",namespace="ai-inference"}'


def _expr(title_start: str, index: int = 0) -> str:
    dashboard = json.loads((ROOT / "dashboards" / "o1-preview.json").read_text())
    panel = next(p for p in dashboard["panels"] if p["title"].startswith(title_start))
    return promql_for_promtool(panel["targets"][index]["expr"])


@pytest.mark.parametrize(
    ("title", "index", "labels", "value"),
    [
        pytest.param(
            "Error ratio",
            0,
            '{__name__="service:model_request_errors:ratio_rate5m",namespace="ai-inference",service="o1-preview"}',
            0.25,
            id="error ratio panel reads 25 % when 1 request in 4 fails",
        ),
        pytest.param(
            "Requests/s by outcome",
            0,
            '{namespace="ai-inference",service="o1-preview"}',
            1.5,
            id="ok requests per second exclude the failures",
        ),
        pytest.param(
            "Requests slower than 0.5s",
            0,
            '{__name__="service:model_slow_requests:ratio_rate5m",indicator="e2e",namespace="ai-inference",service="o1-preview",threshold="0.5"}',
            0.25,
            id="slow-request panel reads 25 % when 1 request in 4 exceeds 0.5s",
        ),
    ],
)
def test_panel_value_matches_the_recorded_alert_input(
    tmp_path: Path, title: str, index: int, labels: str, value: float
) -> None:
    # Per minute: 90 ok + 30 failed requests; 90 of 120 within 0.5 s (exact binary fractions).
    series: list[dict[str, Any]] = [
        {"series": SERIES % "200", "values": "0+90x20"},
        {"series": SERIES % "500", "values": "0+30x20"},
        *(
            {"series": BUCKET % le, "values": f"0+{n}x20"}
            for le, n in (("0.25", 60), ("0.5", 90), ("1", 110), ("+Inf", 120))
        ),
        {"series": COUNT, "values": "0+120x20"},
    ]
    tests = {
        "rule_files": [str(ROOT / "rules" / "o1-preview.rules.yaml")],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": series,
                "promql_expr_test": [
                    {
                        "expr": _expr(title, index),
                        "eval_time": "15m",
                        "exp_samples": [{"labels": labels, "value": value}],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "panel.test.yaml"
    path.write_text(dump_yaml(tests), encoding="utf-8")
    result = promtool.test_rules([path])
    assert result.ok, result.output
