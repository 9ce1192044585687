"""Helpers for tests that run the real promtool on rendered outputs."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from generator import core
from generator.builders.rulefile import rule_file
from generator.render import load_plans
from generator.yamlio import dump_yaml
from tests.toolchain import binary

if TYPE_CHECKING:
    from generator.plan import ServicePlan

ROOT = Path(__file__).resolve().parents[1]


def promtool() -> str:
    """Path of promtool; fails the test, naming the install command, when it is missing
    (``make test`` installs it, so a test that needs it never skips)."""
    found = os.environ.get("PROMTOOL") or shutil.which("promtool")
    if found is None:
        pytest.fail("promtool is not installed; run `make prometheus` (make test does)")
    return found


def logging_promtool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make obsgen run promtool through a wrapper (``$PROMTOOL``) that appends each call's
    arguments as one line to the returned log file (created on the first call)."""
    real = promtool()
    log = tmp_path / "promtool.log"
    wrapper = tmp_path / "promtool"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PROMTOOL", str(wrapper))
    return log


def render_to(spec: Path, out: Path, root: Path = ROOT) -> dict[str, Path]:
    """Render ``spec`` in memory (with the obsgen.yaml of ``root``) and write its rules/
    outputs under ``out``; {repo path: file}."""
    outputs = core.build(load_plans([spec], root))
    written = {}
    for rel, content in outputs.items():
        if rel.startswith("rules/"):
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            written[rel] = target
    return written


def run_promtool(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run promtool with ``args``; the result carries returncode and combined output."""
    return subprocess.run(
        [promtool(), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def assert_ok(result: subprocess.CompletedProcess[str], what: Sequence[str] = ()) -> None:
    """Fail with promtool's output unless it succeeded."""
    assert result.returncode == 0, f"{' '.join(what)}\n{result.stdout}\n{result.stderr}"


def promtool_rules(
    line: str,
    tmp_path: Path,
    rules: dict[str, Any],
    groups: list[dict[str, Any]],
    timeout: int = 300,
) -> str:
    """Run the test ``groups`` on the rule file ``rules`` in the promtool of ``line``
    (``prometheus3`` or ``prometheus2``, :func:`tests.toolchain.binary`): ``PASS`` or ``FAIL``
    on the first line, then promtool's output."""
    (tmp_path / "rules.yaml").write_text(dump_yaml(rules), encoding="utf-8")
    suite = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "cases.test.yaml").write_text(dump_yaml(suite), encoding="utf-8")
    proc = subprocess.run(
        [binary(line, "promtool"), "test", "rules", "cases.test.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return ("PASS\n" if proc.returncode == 0 else "FAIL\n") + proc.stdout + proc.stderr


def promtool_groups(
    line: str, tmp_path: Path, plan: ServicePlan, groups: list[dict[str, Any]]
) -> str:
    """:func:`promtool_rules` on ``plan``'s rule file."""
    return promtool_rules(line, tmp_path, rule_file(plan), groups)
