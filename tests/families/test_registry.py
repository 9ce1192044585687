"""Every registered family has its own test file here, and the harness fails a broken rule."""

from __future__ import annotations

from pathlib import Path

from generator.families import FAMILIES
from tests.families.harness import example_plan, family, family_rules
from tests.helpers_promtool import promtool_rules

HERE = Path(__file__).parent


def test_every_family_has_a_test_file() -> None:
    missing = [f.key for f in FAMILIES if not (HERE / f"test_{f.key}.py").is_file()]
    assert not missing, f"add tests/families/test_<key>.py for {missing}"


def test_no_test_file_outlives_its_family() -> None:
    keys = {f.key for f in FAMILIES}
    stale = [p.name for p in HERE.glob("test_*.py") if p.stem[5:] not in keys | {"registry"}]
    assert not stale, stale


def test_the_harness_fails_a_rule_that_cannot_fire(tmp_path: Path) -> None:
    """The cut rule file with the alert's expression made empty fails the firing case."""
    fam = family("kv_cache")
    plan = example_plan(fam.key)
    rules = family_rules(plan, fam.alerts, [])
    for group in rules["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") in fam.alerts:
                rule["expr"] = f"({rule['expr']}) > +Inf"
    result = promtool_rules("prometheus3", tmp_path, rules, fam.cases(plan))
    assert result.startswith("FAIL"), result
