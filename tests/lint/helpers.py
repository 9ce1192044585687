"""Builders of rule files and guards for the shared corpus and promtool, for the lint tests."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from generator.lint import LintConfig, Report
from tests.data_dir import data_path


def alert(expr: str, name: str = "TestAlert", **fields: Any) -> dict[str, Any]:
    """A complete alert (severity, summary, runbook_url, for: 5m) with ``fields`` overriding."""
    rule: dict[str, Any] = {
        "alert": name,
        "expr": expr,
        "for": "5m",
        "labels": {"severity": "warning"},
        "annotations": {"summary": "s", "description": "d", "runbook_url": "https://r/x"},
    }
    rule.update(fields)
    return {k: v for k, v in rule.items() if v is not None}


def record(name: str, expr: str, **fields: Any) -> dict[str, Any]:
    """A recording rule."""
    return {"record": name, "expr": expr, **fields}


def rule_file(
    *rules: dict[str, Any], interval: str | None = None, group: str = "g"
) -> dict[str, Any]:
    """A plain rule file with one group holding ``rules``."""
    body: dict[str, Any] = {"name": group, "rules": list(rules)}
    if interval is not None:
        body["interval"] = interval
    return {"groups": [body]}


def prometheus_rule(
    name: str, *rules: dict[str, Any], namespace: str = "ai", group: str = "g"
) -> dict[str, Any]:
    """A PrometheusRule object ``namespace/name`` with one group holding ``rules``."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": name, "namespace": namespace},
        "spec": rule_file(*rules, group=group),
    }


def helm_values(key: str, *rules: dict[str, Any], group: str = "g") -> dict[str, Any]:
    """kube-prometheus-stack values with one ``additionalPrometheusRulesMap`` entry ``key``."""
    return {"additionalPrometheusRulesMap": {key: rule_file(*rules, group=group)}}


def panel(
    title: str = "Requests",
    expr: str = "sum(rate(http_requests_total[$__rate_interval]))",
    *,
    grid: tuple[int, int, int, int] = (0, 0, 12, 8),
    **fields: Any,
) -> dict[str, Any]:
    """A Grafana time series panel at ``grid`` (x, y, w, h) with a unit, a datasource and one
    target querying ``expr``; ``fields`` override (``None`` removes one)."""
    datasource = {"type": "prometheus", "uid": "prometheus"}
    x, y, w, h = grid
    built: dict[str, Any] = {
        "type": "timeseries",
        "title": title,
        "gridPos": {"x": x, "y": y, "w": w, "h": h},
        "datasource": datasource,
        "fieldConfig": {"defaults": {"unit": "reqps"}, "overrides": []},
        "targets": [{"datasource": datasource, "expr": expr, "refId": "A"}],
    }
    built.update(fields)
    return {k: v for k, v in built.items() if v is not None}


def dashboard(
    *panels: dict[str, Any], variables: tuple[dict[str, Any], ...] = ()
) -> dict[str, Any]:
    """A Grafana dashboard model holding ``panels`` and templating ``variables`` (the lint
    cases write it as ``fileN.json``)."""
    return {
        "title": "Case",
        "uid": "case",
        "schemaVersion": 39,
        "panels": list(panels),
        "templating": {"list": list(variables)},
    }


def is_dashboard(doc: dict[str, Any] | str) -> bool:
    """True for a Grafana dashboard model (:func:`dashboard`): lint reads it as ``.json``."""
    return isinstance(doc, dict) and isinstance(doc.get("panels"), list)


LintFn = Callable[..., Report]


def corpus_rules() -> Path:
    """The vendored rule corpus (tests/data/corpus/rules)."""
    return data_path("corpus", "rules")


def needs_promtool() -> None:
    """Fail, naming the install command, when promtool is missing (``make test`` installs it:
    a test that needs it never skips)."""
    if shutil.which("promtool") is None and not os.environ.get("PROMTOOL"):
        pytest.fail("promtool is not installed; run `make prometheus` (make test does)")


# The case tables of tests/lint/checks/ (one file per check): (check, documents, expected, config).
F = True  # the check must report
P = False  # the check must stay quiet
NO_FOR: dict[str, Any] = {"for": None}
R5M, R30M, R1H = (
    "slo:sli_error:ratio_rate5m",
    "slo:sli_error:ratio_rate30m",
    "slo:sli_error:ratio_rate1h",
)
R6H, R3D = "slo:sli_error:ratio_rate6h", "slo:sli_error:ratio_rate3d"
TODAY = {"today": date(2026, 12, 3)}

# Reported mistakes: (bad expr, fixed expr).
ISSUE_ERRORS = (
    'sum by (handler, status) (rate(http_requests_total{status="5xx"}[5m])) '
    "/ sum by (handler) (rate(http_requests_total[5m])) > 0.05"
)
ISSUE_ERRORS_FIXED = (
    'sum by (handler) (rate(http_requests_total{status="5xx"}[5m])) '
    "/ sum by (handler) (rate(http_requests_total[5m])) > 0.05"
)
ISSUE_IRATE = "irate(http_requests_total[5m]) > 1"
ISSUE_IRATE_FIXED = "rate(http_requests_total[5m]) > 1"


def summary(text: str) -> dict[str, Any]:
    """Alert fields: annotations with ``text`` as the summary and a runbook URL."""
    return {"annotations": {"summary": text, "runbook_url": "https://r/x"}}


def doc_case(check: str, doc: dict[str, Any], expected: bool, name: str) -> Any:
    """A case of one document and the default config."""
    return pytest.param(check, [doc], expected, {}, id=name)


def commented(comment: str) -> str:
    """A rule file whose irate alert carries ``comment`` above it."""
    return f"""groups:
- name: g
  rules:
  {comment}
  - alert: RequestRateHigh
    expr: irate(http_requests_total[5m]) > 1
    for: 5m
    labels: {{severity: warning}}
    annotations: {{summary: s, runbook_url: https://r/x}}
"""


def case_result(
    lint: LintFn,
    check: str,
    docs: list[dict[str, Any] | str],
    expected: bool,
    config: dict[str, Any],
) -> None:
    """Lint ``docs`` with ``config`` and fail unless ``check`` reports (``expected``) or not;
    a dashboard (:func:`dashboard`) is written as JSON."""
    names = [f"file{i}.{'json' if is_dashboard(d) else 'yaml'}" for i, d in enumerate(docs)]
    texts = [json.dumps(d, indent=2) if is_dashboard(d) else d for d in docs]
    report = lint(*texts, config=LintConfig(**config), names=names)
    hits = [f for f in report.findings if f.check == check]
    assert bool(hits) is expected, [f"{f.check}: {f.message}" for f in report.findings]
