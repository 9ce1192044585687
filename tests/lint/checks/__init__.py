"""One case file per lint check (``test_<check id with underscores>.py``), each a ``CASES`` table."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def all_cases() -> list[Any]:
    """Every case of every check file, in file-name order (``pytest.param`` objects)."""
    cases: list[Any] = []
    for path in sorted(HERE.glob("test_*.py")):
        module = importlib.import_module(f"tests.lint.checks.{path.stem}")
        cases += getattr(module, "CASES", [])
    return cases
