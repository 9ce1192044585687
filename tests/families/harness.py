"""One family's generated promtool cases proved alone, on one plan, in seconds.

A family's test (``tests/families/test_<key>.py``) picks its plan: :func:`example_plan`, the
first committed example in specs/ that enables the family, or :func:`plan_of` on a small spec
(:func:`spec_data`) for a family no example enables, and calls :func:`prove`. How to run one:
docs/architecture.md, "Testing one family or one lint check".
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from generator.builders.rulefile import rule_file
from generator.families import FAMILIES
from generator.families.base import Family
from generator.plan import ServicePlan
from generator.render import load_plans
from tests.helpers_promtool import promtool_rules
from tests.test_server_reality import plan_of, spec_data

__all__ = [
    "alert_rules",
    "dcgm_plan",
    "example_plan",
    "family",
    "plan_of",
    "prove",
    "severities",
    "spec_data",
]

ROOT = Path(__file__).resolve().parents[2]


@cache
def _examples() -> tuple[ServicePlan, ...]:
    """The plans of the committed examples (specs/*.yaml), loaded once per test process."""
    return tuple(load_plans(sorted((ROOT / "specs").glob("*.yaml")), ROOT))


def family(key: str) -> Family:
    """The registered family ``key`` (fails the test when it is not in ``FAMILIES``)."""
    found = next((f for f in FAMILIES if f.key == key), None)
    assert found is not None, f"{key} is not in generator.families.FAMILIES"
    return found


def example_plan(key: str, name: str | None = None) -> ServicePlan:
    """The example plan ``name`` (metadata.name), or the first example enabling ``key``."""
    for plan in _examples():
        if (name is None or plan.name == name) and family(key).cases(plan):
            return plan
    raise AssertionError(f"no committed example {name or ''} enables {key}")


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w:]){re.escape(name)}(?![\w:])")


def family_rules(plan: ServicePlan, alerts: tuple[str, ...], exprs: list[str]) -> dict[str, Any]:
    """The plan's rule file cut to ``alerts`` and every rule they or ``exprs`` (the cases'
    expression tests) read, directly or through records or ``ALERTS``, in their groups and
    order: promtool then evaluates a few rules, not the whole file."""
    doc = rule_file(plan)
    rules = [r for g in doc["groups"] for r in g["rules"]]
    needed = set(alerts)
    texts = [r["expr"] for r in rules if r.get("alert") in needed] + exprs
    while texts:
        text = texts.pop()
        for r in rules:
            name = r.get("record") or r.get("alert")
            if name not in needed and _word(name).search(text):
                needed.add(name)
                texts += [x["expr"] for x in rules if (x.get("record") or x.get("alert")) == name]
    groups = []
    for g in doc["groups"]:
        kept = [r for r in g["rules"] if (r.get("record") or r.get("alert")) in needed]
        if kept:
            groups.append({**g, "rules": kept})
    return {**doc, "groups": groups}


def alert_rules(plan: ServicePlan, alert: str) -> list[dict[str, Any]]:
    """The alerting rules named ``alert`` in ``plan``'s rule file (one per tier or source)."""
    return [r for g in rule_file(plan)["groups"] for r in g["rules"] if r.get("alert") == alert]


def severities(plan: ServicePlan, alert: str) -> set[str]:
    """The ``severity`` labels of ``alert``'s rules in ``plan``."""
    return {r["labels"]["severity"] for r in alert_rules(plan, alert)}


def prove(
    key: str,
    plan: ServicePlan,
    tmp_path: Path,
    groups: list[dict[str, Any]] | None = None,
    quiet: bool = True,
) -> list[dict[str, Any]]:
    """Run family ``key``'s generated cases on ``plan`` (or ``groups``) in promtool 3 against
    the rules they read, and fail unless they pass, every alert of the family has a firing
    case and (``quiet``) a case where it stays silent. Returns the groups run."""
    fam = family(key)
    groups = fam.cases(plan) if groups is None else groups
    assert groups, f"{key}: plan {plan.name} does not enable it"
    for alert in fam.alerts:
        expected = [
            t["exp_alerts"]
            for g in groups
            for t in g.get("alert_rule_test", [])
            if t["alertname"] == alert
        ]
        assert any(expected), f"{key}: no case where {alert} fires"
        assert not quiet or [] in expected, f"{key}: no case where {alert} stays quiet"
    exprs = [t["expr"] for g in groups for t in g.get("promql_expr_test", [])]
    rules = family_rules(plan, fam.alerts, exprs)
    result = promtool_rules("prometheus3", tmp_path, rules, groups)
    assert result.startswith("PASS"), result[-6000:]
    return groups


@cache
def dcgm_plan() -> ServicePlan:
    """A vLLM service whose GPU series come from dcgm-exporter (the examples use the sidecar)."""
    return plan_of(spec_data("vllm", gpu={"exporter": "dcgm"}))
