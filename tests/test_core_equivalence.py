"""The fleet layer (workers, cache, spooled files) writes what the core builds and finds what
the core finds."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from generator import core, naming
from generator.cli import main
from generator.core import Core
from generator.fleet import pool
from generator.fleet.cache import OutputCache
from generator.fleet.engine import Fleet
from generator.fleet.filebacked import spooled_file
from generator.project_config import CONFIG_FILE, FULL_OUTPUTS
from generator.render import RenderOptions, load_plans, render_bundle

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
    return {rel: text.encode() for rel, text in core.build(plans).items()}


def _fleet_render(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    monkeypatch.chdir(root)
    monkeypatch.setenv("OBSGEN_CACHE_DIR", str(root.parent / "cache"))
    # Every install path, as the core builds them.
    (root / CONFIG_FILE).write_text(f"render: {{outputs: [{', '.join(FULL_OUTPUTS)}]}}\n")
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
    monkeypatch.setattr(pool, "PARALLEL_FROM", 4)
    root = tmp_path / "repo"
    realistic_specs(root / "specs", 8)
    template = sorted((root / "specs").glob("*.yaml"))[0]
    name = template.stem
    for i in range(3):  # copies under other names, each built in full
        text = re.sub(rf"\b{name}\b", f"copy-{i}", template.read_text())
        (root / "specs" / f"copy-{i}.yaml").write_text(text)
    assert _fleet_render(root, monkeypatch) == _core(root)


def test_the_core_and_the_fleet_layer_bundle_the_same_files_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One option picks the engine; workers, spool and cache change no byte and no warning."""
    root = tmp_path / "repo"
    realistic_specs(root / "specs", 6)
    monkeypatch.chdir(root)
    monkeypatch.setenv("OBSGEN_CACHE_DIR", str(tmp_path / "cache"))
    core = render_bundle(root, [], RenderOptions(run_promtool=False, fleet=False))
    spool = tmp_path / "spool"
    spool.mkdir()
    fleet_options = RenderOptions(run_promtool=False, jobs=2, parallel_from=4)
    fleet = render_bundle(root, [], fleet_options, cache=OutputCache(root), spool_to=spool)
    assert any(spooled_file(own, rel) for own in fleet.services.values() for rel in own)
    assert dict(fleet.outputs) == dict(core.outputs)
    assert fleet.warnings == core.warnings
    assert fleet.stale == core.stale


def test_the_core_and_the_fleet_layer_find_the_same_problems() -> None:
    plans = load_plans([REPO / "specs" / "triton-trtllm.yaml"], REPO)
    built = Core().build(plans, None)
    name = plans[0].name
    rules = naming.rules_file(name)
    own = dict(built.services[name])
    own[rules] = own[rules].replace("expr: ", "expr: sum(", 1)  # a rule promtool cannot parse
    built.services[name] = own
    files = built.files()
    found = Core().prove(files, built)
    assert found and rules in str(found[0])
    assert Fleet(root=REPO).prove(files, built) == found
