"""``make render`` says what it does before each slow step (issue 48: it was silent for 70 s
while pip installed the virtual environment): read from ``make -n -B render``, which prints
every command without running any."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# A slow command, and the words of the line that must come before it.
SLOW = {
    "-m venv": "creating the virtual environment",
    "-m pip install": "installing obsgen and its dependencies",
    "obsgen render": "rendering specs/",
}


@pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")
def test_each_slow_step_of_make_render_is_announced_first() -> None:
    plan = subprocess.run(
        ["make", "-n", "-B", "-C", str(REPO), "render"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    lines = plan.splitlines()
    for command, words in SLOW.items():
        at = next(i for i, line in enumerate(lines) if command in line and "echo" not in line)
        before = "\n".join(lines[max(0, at - 2) : at + 1])
        assert f'echo "obsgen: {words}' in before, before


def test_an_apt_install_is_announced_before_apt_get_runs() -> None:
    script = (REPO / "scripts" / "apt-install.sh").read_text(encoding="utf-8")
    assert script.index("obsgen: installing Debian's $package package") < script.index(
        '"${apt_get[@]}" update'
    )
