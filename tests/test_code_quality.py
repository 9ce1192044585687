"""The project's own code stays ruff-clean, ruff-formatted and mypy-strict clean (CI runs this)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["ruff", "check", "."], id="ruff finds nothing"),
        pytest.param(["ruff", "format", "--check", "."], id="every file is ruff-formatted"),
        pytest.param(["mypy", "generator", "nvml_exporter"], id="mypy strict is clean"),
    ],
)
def test_code_quality(command: list[str]) -> None:
    proc = subprocess.run(
        [str(BIN / command[0]), *command[1:]], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
