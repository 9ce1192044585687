"""``obsgen render`` runs each generated test file split by the rule groups its test groups
observe (generator/proof_split.py): the same test groups, the rule groups copied unchanged,
and a broken threshold still caught."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from generator.proof_split import TESTS_PER_PART, split_test_file
from tests.helpers_promtool import ROOT, assert_ok, run_promtool


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_the_parts_hold_every_test_group_and_only_verbatim_rule_groups(tmp_path: Path) -> None:
    for path in (ROOT / "rules").glob("o1-preview.*"):
        shutil.copy(path, tmp_path)
    original = _load(tmp_path / "o1-preview.test.yaml")
    groups = _load(tmp_path / "o1-preview.rules.yaml")["groups"]
    parts = split_test_file(tmp_path / "o1-preview.test.yaml")
    assert len(parts) > 1
    seen = []
    loaded_rules = []
    for part in parts:
        doc = _load(part)
        assert doc["evaluation_interval"] == original["evaluation_interval"]
        assert 1 <= len(doc["tests"]) <= TESTS_PER_PART  # spread over the cores
        seen += doc["tests"]
        (rule_file,) = doc["rule_files"]
        kept = _load(tmp_path / rule_file)["groups"]
        assert all(group in groups for group in kept)
        loaded_rules.append(sum(len(g["rules"]) for g in kept))
    assert sorted(t["name"] for t in seen) == sorted(t["name"] for t in original["tests"])
    # the burn-rate cases load the SLO groups only, not the service's 80-odd rules
    assert min(loaded_rules) < sum(len(g["rules"]) for g in groups) / 2
    assert_ok(run_promtool("test", "rules", *parts))


RULES = """
groups:
- name: raw
  rules:
  - record: job:requests:rate1m
    expr: sum by (job) (rate(requests_total[1m]))
- name: derived
  rules:
  - alert: TrafficHigh
    expr: job:requests:rate1m > 1
- name: unrelated
  rules:
  - alert: Other
    expr: vector(1)
"""


def _test_file(tmp_path: Path, *tests: dict) -> Path:
    (tmp_path / "x.rules.yaml").write_text(RULES, encoding="utf-8")
    doc = {"rule_files": ["x.rules.yaml"], "evaluation_interval": "1m", "tests": list(tests)}
    path = tmp_path / "x.test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


SERIES = [{"series": 'requests_total{job="a"}', "values": "0+120x10"}]


def test_a_part_loads_the_groups_its_alert_reads_records_from(tmp_path: Path) -> None:
    traffic = {
        "name": "traffic",
        "interval": "1m",
        "input_series": SERIES,
        "alert_rule_test": [
            {
                "eval_time": "5m",
                "alertname": "TrafficHigh",
                "exp_alerts": [{"exp_labels": {"job": "a"}}],
            }
        ],
    }
    other = {
        "name": "other",
        "interval": "1m",
        "input_series": SERIES,
        "alert_rule_test": [
            {"eval_time": "1m", "alertname": "Other", "exp_alerts": [{"exp_labels": {}}]}
        ],
    }
    parts = split_test_file(_test_file(tmp_path, traffic, other))
    names = []
    for part in parts:
        rule_file = _load(part)["rule_files"][0]
        names.append([g["name"] for g in _load(tmp_path / rule_file)["groups"]])
    assert names == [["raw", "derived"], ["unrelated"]]
    assert_ok(run_promtool("test", "rules", *parts))


def test_an_expression_reading_alerts_keeps_every_group(tmp_path: Path) -> None:
    reads_alerts = {
        "name": "alerts",
        "interval": "1m",
        "input_series": SERIES,
        "promql_expr_test": [
            {
                "expr": 'count(ALERTS{alertstate="firing"})',
                "eval_time": "5m",
                "exp_samples": [{"labels": "{}", "value": 2}],
            }
        ],
    }
    path = _test_file(tmp_path, reads_alerts)
    assert split_test_file(path) == [path]
    assert_ok(run_promtool("test", "rules", path))
