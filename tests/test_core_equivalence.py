"""The fleet layer (workers, cache, spooled files, shared builds) writes what the core builds."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from generator import build, naming
from generator.build import core_outputs
from generator.cli import main
from generator.render import load_plans

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _fleet_specs import realistic_specs

REPO = Path(__file__).resolve().parent.parent


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for top in naming.OUTPUT_DIRS
        for p in sorted((root / top).rglob("*"))
        if p.is_file()
    }


def _core(root: Path) -> dict[str, bytes]:
    plans = load_plans(sorted((root / "specs").glob("*.yaml")), root)
    return {rel: text.encode() for rel, text in core_outputs(plans).items()}


def _fleet_render(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    monkeypatch.chdir(root)
    monkeypatch.setenv("OBSGEN_CACHE_DIR", str(root.parent / "cache"))
    assert main(["render", "--skip-promtool", "-q"]) == 0
    cold = _tree(root)
    # One service's records no longer hold (it is rebuilt); the others are read back.
    shutil.rmtree(next(p for p in sorted((root / "manifests").iterdir()) if p.is_dir()))
    assert main(["render", "--skip-promtool", "-q"]) == 0
    assert _tree(root) == cold
    return cold


def test_the_example_specs_render_as_the_core_builds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "specs", root / "specs")
    assert _fleet_render(root, monkeypatch) == _core(root)


def test_a_fleet_in_workers_with_copies_renders_as_the_core_builds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build, "PARALLEL_FROM", 4)
    root = tmp_path / "repo"
    realistic_specs(root / "specs", 8)
    template = sorted((root / "specs").glob("*.yaml"))[0]
    name = template.stem
    for i in range(3):  # copies share a shape: built once, renamed
        text = re.sub(rf"\b{name}\b", f"copy-{i}", template.read_text())
        (root / "specs" / f"copy-{i}.yaml").write_text(text)
    assert _fleet_render(root, monkeypatch) == _core(root)
