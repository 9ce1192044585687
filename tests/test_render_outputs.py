"""``render.outputs``: a project writes only the install paths it uses; the rest is still proved."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator import naming
from generator.cli import main
from generator.errors import ObsgenError
from generator.project_config import CONFIG_FILE, DEFAULT_OUTPUTS, load_project_config
from tests.helpers_promtool import logging_promtool

REPO = Path(__file__).resolve().parent.parent
TINY = """\
apiVersion: obsgen/v1alpha1
kind: ModelService
metadata: {name: tiny, team: ml-platform}
spec:
  server: openai-http
  selector: {namespace: tiny-ns, job: tiny}
  slos:
    - {name: availability, objective: 99.5, window: 30d}
  alerts:
    latencyP99: {enabled: false}
    slowRequests: {enabled: false}
    errorRatio: {enabled: false}
    queueDepth: {enabled: false}
    memoryHeadroom: {enabled: false}
  deployment: {name: tiny, container: tiny, replicas: 1, memoryLimit: 8Gi}
"""


def _files(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for top in naming.OUTPUT_DIRS
        for p in (root / top).rglob("*")
        if p.is_file()
    }


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        ("[helm, manifests]", "must list rules"),
        ("[rules, helm, rules]", "lists rules twice"),
        ("[rules, charts]", "'rules', 'tests'"),
        ("rules", "valid tuple"),
    ],
)
def test_bad_outputs_name_the_field(tmp_path: Path, outputs: str, message: str) -> None:
    (tmp_path / CONFIG_FILE).write_text(f"render:\n  outputs: {outputs}\n")
    with pytest.raises(ObsgenError) as err:
        load_project_config(tmp_path)
    line = err.value.diagnostics[0]
    assert line.path.startswith("render.outputs") and message in line.message


def test_values_dashboards_need_the_dashboards(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text("render: {dashboardsVia: values, outputs: [rules, helm]}\n")
    with pytest.raises(ObsgenError) as err:
        load_project_config(tmp_path)
    assert "must list dashboards" in err.value.diagnostics[0].message


def test_unset_outputs_are_every_install_path_but_mimir(tmp_path: Path) -> None:
    assert load_project_config(tmp_path).render.outputs == DEFAULT_OUTPUTS
    assert set(DEFAULT_OUTPUTS) == set(naming.OUTPUT_KINDS) - {"mimir"}


def test_only_the_listed_paths_are_written_and_the_others_removed(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(REPO / "specs" / "o1-preview.yaml", specs)
    args = ["render", "--skip-promtool", "-q", "--out", str(tmp_path), str(specs)]
    assert main(args) == 0
    everything = _files(tmp_path)
    (tmp_path / CONFIG_FILE).write_text("render:\n  outputs: [rules, helm, alertmanager]\n")
    assert main(args) == 0
    lean = _files(tmp_path)
    assert lean == {
        p for p in everything if naming.output_kind(p) in ("rules", "helm", "alertmanager")
    }
    assert "rules/o1-preview.rules.yaml" in lean and "rules/o1-preview.test.yaml" not in lean
    assert main([*args[:1], "--check", *args[1:]]) == 0
    (tmp_path / CONFIG_FILE).unlink()  # every path again, from the cache's records too
    assert main(args) == 0
    assert _files(tmp_path) == everything


def test_tests_left_out_are_still_proved_before_a_service_is_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = logging_promtool(tmp_path, monkeypatch)
    monkeypatch.setenv("OBSGEN_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "tiny.yaml").write_text(TINY)
    (root / CONFIG_FILE).write_text("render:\n  outputs: [rules, runbooks]\n")
    args = ["render", "-q", "--out", str(root), str(root / "specs")]
    assert main([*args, "--skip-promtool"]) == 0
    assert main([*args, "--skip-promtool"]) == 0  # unproved: nothing recorded to reuse
    assert not log.exists()
    assert main(args) == 0  # so this render builds and proves it
    assert "test rules" in log.read_text()
    proved = log.read_text()
    assert main(args) == 0  # proved and recorded: reused, not proved again
    assert log.read_text().count("test rules") == proved.count("test rules")
    assert not list((root / "rules").glob("*.test.yaml"))
