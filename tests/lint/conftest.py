"""Fixtures for the lint tests (helpers live in ``helpers.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.lint import LintConfig, Report, lint_paths

from .helpers import LintFn


@pytest.fixture
def lint(tmp_path: Path) -> LintFn:
    """Write each document to ``tmp_path/fileN.yaml`` and lint them (promtool off by default)."""

    def run(
        *docs: dict[str, Any] | str,
        config: LintConfig | None = None,
        promtool: bool = False,
        names: Sequence[str] | None = None,
    ) -> Report:
        paths = []
        for index, doc in enumerate(docs):
            name = names[index] if names else f"file{index}.yaml"
            path = tmp_path / name
            path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False))
            paths.append(str(path))
        return lint_paths(paths, config or LintConfig(), promtool=promtool)

    return run


_PROMETHEUS2_FUNCTIONS = ("holt_winters", "sort_by_label", "double_exponential", "experimental")


@pytest.fixture(autouse=True)
def _prometheus2_functions_on_promtool_2(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cases on Prometheus 2's functions and experimental flags (``holt_winters``,
    ``sort_by_label``) run promtool 2.42 (Debian's, what `make render` installs): promtool 3
    removed ``holt_winters`` and reads experimental functions under its own flag, so the
    version advice these cases prove is about what a 2.x promtool loads."""
    if any(word in request.node.name for word in _PROMETHEUS2_FUNCTIONS):
        from tests import toolchain

        monkeypatch.setenv("PROMTOOL", toolchain.debian_promtool())
