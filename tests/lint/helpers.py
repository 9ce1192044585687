"""Builders of rule files and guards for the shared corpus and promtool, for the lint tests."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.lint import Report
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


LintFn = Callable[..., Report]


def corpus_rules() -> Path:
    """The vendored rule corpus (tests/data/corpus/rules)."""
    return data_path("corpus", "rules")


def needs_promtool() -> None:
    """Fail, naming the install command, when promtool is missing (``make test`` installs it:
    a test that needs it never skips)."""
    if shutil.which("promtool") is None and not os.environ.get("PROMTOOL"):
        pytest.fail("promtool is not installed; run `make prometheus` (make test does)")
