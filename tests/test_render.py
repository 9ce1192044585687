"""The render pipeline end to end: promtool-valid, deterministic, atomic, drift-detecting."""

from __future__ import annotations

import gc
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import promtool, writer
from generator.cli import main
from generator.errors import ObsgenError
from tests.factories import good_spec, set_path, write_spec

REPO = Path(__file__).resolve().parent.parent


def _render_into(root: Path, specs: Path) -> dict[str, bytes]:
    assert main(["render", "--skip-promtool", "--out", str(root), str(specs)]) == 0
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_committed_outputs_are_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["render", "--check", "--skip-promtool", "--out", str(REPO), str(REPO / "specs")])
    assert code == 0, capsys.readouterr().err


def test_a_render_turns_the_garbage_collector_back_on_even_when_it_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gc.isenabled()
    _render_into(tmp_path / "good", REPO / "specs" / "o1-preview.yaml")
    assert gc.isenabled()
    bad = tmp_path / "bad.yaml"
    bad.write_text("metadata: [\n", encoding="utf-8")
    assert main(["render", "--skip-promtool", "--out", str(tmp_path / "bad"), str(bad)]) == 2
    assert "invalid YAML" in capsys.readouterr().err
    assert gc.isenabled()


def test_committed_rule_files_pass_promtool_check() -> None:
    files = sorted((REPO / "rules").glob("*.rules.yaml"))
    assert files, "no rendered rule files committed"
    result = promtool.check_rules(files)
    assert result.ok, result.output


def test_same_specs_render_byte_identical_files(tmp_path: Path) -> None:
    first = _render_into(tmp_path / "a", REPO / "specs")
    second = _render_into(tmp_path / "b", REPO / "specs")
    assert first == second
    assert "rules/o1-preview.rules.yaml" in first


def test_check_reports_a_changed_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _render_into(tmp_path, REPO / "specs")
    rules = tmp_path / "rules" / "o1-preview.rules.yaml"
    rules.write_text(rules.read_text().replace("> 20", "> 25"))
    capsys.readouterr()
    assert (
        main(["render", "--check", "--skip-promtool", "--out", str(tmp_path), str(REPO / "specs")])
        == 1
    )
    assert "out of date: rules/o1-preview.rules.yaml (differs)" in capsys.readouterr().err


def test_check_reports_missing_and_stale_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _render_into(tmp_path, REPO / "specs")
    (tmp_path / "rules" / "o1-preview.rules.yaml").unlink()
    stale = tmp_path / "rules" / "gone.rules.yaml"
    stale.write_text(f"# {writer.GENERATED_MARKER} from specs/gone.yaml.\ngroups: []\n")
    hand_written = tmp_path / "rules" / "team.rules.yaml"
    hand_written.write_text("groups: []\n")
    capsys.readouterr()
    assert (
        main(["render", "--check", "--skip-promtool", "--out", str(tmp_path), str(REPO / "specs")])
        == 1
    )
    err = capsys.readouterr().err
    assert "rules/o1-preview.rules.yaml (missing)" in err
    assert "rules/gone.rules.yaml (stale" in err
    assert "team.rules.yaml" not in err
    assert main(["render", "--skip-promtool", "--out", str(tmp_path), str(REPO / "specs")]) == 0
    assert not stale.exists() and hand_written.exists()


def test_failed_write_leaves_previous_output_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _render_into(tmp_path, REPO / "specs")
    rules = tmp_path / "rules" / "o1-preview.rules.yaml"
    rules.write_text("# previous output\n")
    real_replace = os.replace

    def failing_replace(src: str, dst: str) -> None:
        if str(dst).endswith("o1-preview.rules.yaml"):
            raise OSError(28, "No space left on device", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    assert main(["render", "--skip-promtool", "--out", str(tmp_path), str(REPO / "specs")]) == 1
    err = capsys.readouterr().err
    assert "o1-preview.rules.yaml: cannot write: No space left on device" in err
    assert "Traceback" not in err
    assert rules.read_text() == "# previous output\n"
    assert not [p for p in rules.parent.iterdir() if p.name.endswith(".tmp")]


def test_label_values_are_escaped_in_promql(tmp_path: Path) -> None:
    hostile = 'o1"} or vector(1) or up{x="\\'
    spec = write_spec(tmp_path / "specs", set_path(good_spec(), "spec.selector.job", hostile))
    assert main(["render", "--skip-promtool", "--out", str(tmp_path), str(spec)]) == 0
    doc = yaml.safe_load((tmp_path / "rules" / "o1-preview.rules.yaml").read_text())
    first = doc["groups"][0]["rules"][0]["expr"]
    assert 'job="o1\\"} or vector(1) or up{x=\\"\\\\"' in first
    assert promtool.check_rules([tmp_path / "rules" / "o1-preview.rules.yaml"]).ok


def test_missing_promtool_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("PROMTOOL", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ObsgenError, match="apt-get install -y prometheus"):
        promtool.find_promtool()
    spec = write_spec(tmp_path / "specs", good_spec())
    assert main(["render", "--out", str(tmp_path), str(spec)]) == 2
    assert "promtool not found" in capsys.readouterr().err
    assert not (tmp_path / "rules").exists()


def test_promtool_errors_name_file_and_rule(tmp_path: Path) -> None:
    bad = tmp_path / "bad.rules.yaml"
    bad.write_text("groups:\n- name: g\n  rules:\n  - alert: Broken\n    expr: rate(x[5m] > 1\n")
    result = promtool.check_rules([bad], ["rules/bad.rules.yaml"])
    assert not result.ok
    assert any(
        d.file == "rules/bad.rules.yaml" and "Broken" in d.message for d in result.diagnostics
    ), result.diagnostics


def test_python_m_generator_is_the_cli(tmp_path: Path) -> None:
    import subprocess
    import sys

    shutil.copytree(REPO / "specs", tmp_path / "specs")
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "check", "specs"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "specs/o1-preview.yaml: ok" in proc.stdout


def test_committed_rules_lint_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["lint", "--fail-on", "info", str(REPO / "rules")])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err


def test_a_failure_while_staging_changes_no_output_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _render_into(tmp_path, REPO / "specs")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    for path in before:
        if path.suffix in (".yaml", ".json", ".md"):
            path.write_bytes(path.read_bytes() + b"\n")  # every output now differs
    edited = {p: p.read_bytes() for p in before}
    real_stage = writer._stage

    def stage(
        path: str | Path, outputs: Mapping[str, str], rel: str, run: str, *more: Any
    ) -> str | Path:
        if Path(path).name == "o1-preview.rules.yaml":
            raise OSError(28, "No space left on device", str(path))
        return real_stage(path, outputs, rel, run, *more)

    monkeypatch.setattr(writer, "_stage", stage)
    assert main(["render", "--skip-promtool", "--out", str(tmp_path), str(REPO / "specs")]) == 1
    assert "cannot write: No space left on device" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == edited


def test_rendering_one_spec_file_leaves_other_services_and_fleet_files_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _render_into(tmp_path, REPO / "specs")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    rules = tmp_path / "rules" / "o1-preview.rules.yaml"
    rules.write_text("# stale\n")
    spec = REPO / "specs" / "o1-preview.yaml"
    assert main(["render", "--skip-promtool", "--out", str(tmp_path), str(spec)]) == 0
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before
    assert "rules/o1-preview.rules.yaml" in capsys.readouterr().out


COMMITTED_TESTS = sorted((REPO / "rules").glob("*.test.yaml"))
"""The committed promtool test files: one case each, so that test workers share them out."""


def test_the_examples_commit_their_promtool_tests() -> None:
    assert len(COMMITTED_TESTS) >= 4


@pytest.mark.parametrize("test_file", COMMITTED_TESTS, ids=lambda path: path.name)
def test_committed_generated_tests_pass_promtool(test_file: Path) -> None:
    result = promtool.test_rules([test_file])
    assert result.ok, result.output


@pytest.mark.parametrize(
    ("own", "seen"),
    [
        pytest.param({}, "off 128MiB", id="collector held back by default"),
        pytest.param({"GOGC": "50"}, "50 unset", id="a GOGC of the caller's is kept as it is"),
    ],
)
def test_promtool_test_runs_hold_back_gos_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own: dict[str, str], seen: str
) -> None:
    fake = tmp_path / "promtool"
    fake.write_text('#!/bin/sh\necho "GC ${GOGC:-unset} ${GOMEMLIMIT:-unset}"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PROMTOOL", str(fake))
    for name in ("GOGC", "GOMEMLIMIT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in own.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "x.test.yaml").write_text("tests: []\n")
    result = promtool.test_rules([tmp_path / "x.test.yaml"])
    assert result.ok
    assert result.output.strip() == f"GC {seen}"


@pytest.mark.parametrize(("files", "processes"), [(1, 1), (7, 2), (18, 4), (40, 10), (400, 16)])
def test_promtool_test_starts_few_processes_for_few_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: int, processes: int
) -> None:
    """A one-service proof (~18 parts) runs in two promtool processes per core (each costs
    ~50 ms of CPU to start); many files spread over up to 8 chunks per core."""
    fake = tmp_path / "promtool"
    fake.write_text('#!/bin/sh\necho "run $(($# - 2))"\n')  # test rules FILES...
    fake.chmod(0o755)
    monkeypatch.setenv("PROMTOOL", str(fake))
    monkeypatch.setattr(promtool.os, "cpu_count", lambda: 2)
    paths = []
    for i in range(files):
        paths.append(tmp_path / f"{i}.test.yaml")
        paths[-1].write_text("tests: []\n")
    result = promtool.test_rules(paths)
    runs = [int(line.split()[1]) for line in result.output.splitlines()]
    assert (len(runs), sum(runs)) == (processes, files)


def test_promtool_chunks_are_balanced_by_cost() -> None:
    costs = {Path("a"): 100, Path("b"): 60, Path("c"): 50, Path("d"): 10}
    chunks = promtool._chunks(list(costs), 2, costs.__getitem__)
    assert chunks == [[Path("a"), Path("d")], [Path("b"), Path("c")]]
