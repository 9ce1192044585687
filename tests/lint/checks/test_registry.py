"""Every lint check has its case file here, with a case it reports and a case it leaves alone."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from generator.lint.checks import all_checks
from tests.lint.checks import all_cases
from tests.lint.helpers import F, P

HERE = Path(__file__).parent
# Checks proved elsewhere: the engine's own (tests/lint/test_engine.py).
ENGINE = {"promtool", "promql-parse", "rule-invalid", "unreadable-input"}


def _table_checks() -> set[str]:
    return {c.id for c in all_checks()} - ENGINE


def test_every_check_has_its_case_file() -> None:
    missing = [c for c in sorted(_table_checks()) if not (HERE / _file(c)).is_file()]
    assert not missing, f"add tests/lint/checks/test_<id>.py for {missing}"


def test_every_case_file_holds_only_its_own_check() -> None:
    for path in sorted(HERE.glob("test_*.py")):
        if path.name == "test_registry.py":
            continue
        cases = import_module(f"tests.lint.checks.{path.stem}").CASES
        assert {_file(p.values[0]) for p in cases} == {path.name}, path.name


def test_every_check_has_a_failing_and_a_passing_case() -> None:
    cases = all_cases()
    failing = {p.values[0] for p in cases if p.values[2] is F}
    passing = {p.values[0] for p in cases if p.values[2] is P}
    assert _table_checks() - failing == set()
    assert _table_checks() - passing == set()


def _file(check: str) -> str:
    return f"test_{check.replace('-', '_')}.py"
