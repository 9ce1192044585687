"""The last-resort handler: an unexpected exception in any command is one line naming the
command and the input, asking for a bug report, exit 70; the traceback only on request."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator import errors
from generator.cli import main

REPO = Path(__file__).resolve().parent.parent
SPEC = str(REPO / "specs" / "o1-preview.yaml")

# Break one function a command calls, from outside, then run the CLI in a fresh process.
BREAK = """
import sys
import {module} as target
def broken(*args, **kwargs):
    raise RuntimeError("boom \\x1b[31m")
setattr(target, {name!r}, broken)
from generator.cli import main
sys.exit(main(sys.argv[1:]))
"""

CASES = [
    pytest.param("generator.core.load", "resolve", ["check", SPEC], id="check"),
    pytest.param("generator.core.load", "resolve", ["explain", SPEC], id="explain"),
    pytest.param(
        "generator.fleet.engine", "build_services", ["render", "--skip-promtool", SPEC], id="render"
    ),
    pytest.param(
        "generator.commands.verify",
        "PrometheusAPI",
        ["verify", SPEC, "--prometheus-url", "http://127.0.0.1:9"],
        id="verify",
    ),
    pytest.param("generator.lint.command", "lint_paths", ["lint", SPEC], id="lint"),
]


def _run(
    module: str, name: str, args: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BREAK.format(module=module, name=name), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": os.environ["PATH"], **(env or {})},
        timeout=120,
    )


@pytest.mark.parametrize(("module", "name", "args"), CASES)
def test_an_unexpected_exception_is_one_line_and_exit_70(
    module: str, name: str, args: list[str], tmp_path: Path
) -> None:
    if args[0] == "render":
        args = [*args[:-1], "--out", str(tmp_path), args[-1]]
    proc = _run(module, name, args)
    assert proc.returncode == errors.EXIT_INTERNAL_ERROR, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "warning:" not in line]
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith(f"obsgen {args[0]}: internal error on ")
    assert "RuntimeError: boom \\x1b[31m" in line  # escaped, never raw
    assert "This is a bug in obsgen: please report it" in line
    assert "--debug (or OBSGEN_DEBUG=1)" in line
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "rules").exists()


@pytest.mark.parametrize(
    ("flag", "env"),
    [
        pytest.param(["--debug"], {}, id="--debug before the command"),
        pytest.param([], {"OBSGEN_DEBUG": "1"}, id="OBSGEN_DEBUG=1"),
    ],
)
def test_the_traceback_comes_on_request(flag: list[str], env: dict[str, str]) -> None:
    proc = _run("generator.core.load", "resolve", [*flag, "check", SPEC], env=env)
    assert proc.returncode == errors.EXIT_INTERNAL_ERROR
    assert "Traceback (most recent call last)" in proc.stderr
    assert "RuntimeError: boom" in proc.stderr
    assert proc.stderr.rstrip().splitlines()[-1].startswith("obsgen check: internal error")


def test_debug_is_accepted_after_the_command_too() -> None:
    proc = _run("generator.core.load", "resolve", ["check", "--debug", SPEC])
    assert proc.returncode == errors.EXIT_INTERNAL_ERROR
    assert "Traceback (most recent call last)" in proc.stderr


def test_the_failing_input_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator.core import load

    def resolve(spec: object, source: str) -> object:
        if source.endswith("triton-trtllm.yaml"):
            raise RecursionError("maximum recursion depth exceeded")
        return real(spec, source)

    real = load.resolve
    monkeypatch.setattr(load, "resolve", resolve)
    assert main(["check", str(REPO / "specs")]) == errors.EXIT_INTERNAL_ERROR
    err = capsys.readouterr().err
    assert "obsgen check: internal error on " in err
    assert "triton-trtllm.yaml: RecursionError: maximum recursion depth exceeded" in err


def test_a_closed_pipe_is_quiet() -> None:
    """``obsgen explain … | head -1``: the reader leaves early; no traceback, no noise."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator", "explain", str(REPO / "specs")],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before anything is written
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert "internal error" not in err
