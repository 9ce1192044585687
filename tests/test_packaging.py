"""A plain (non-editable) install carries everything obsgen reads at run time."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_wheel_ships_every_template(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("obsgen-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = sorted(
        p.relative_to(REPO / "generator").as_posix()
        for p in (REPO / "generator" / "templates").rglob("*.j2")
    )
    assert templates
    assert {f"generator/{t}" for t in templates} <= names
    assert "generator/py.typed" in names and "nvml_exporter/py.typed" in names
