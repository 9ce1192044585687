"""``render.outputs``: a project writes only the install paths it uses; the rest is still proved."""

from __future__ import annotations

import copy
import shutil
import sys
from pathlib import Path

import pytest

from generator import naming
from generator.cli import main
from generator.core import Core
from generator.core import outputs as core_outputs
from generator.errors import ObsgenError
from generator.fleet import pool
from generator.project_config import CONFIG_FILE, DEFAULT_OUTPUTS, FULL_OUTPUTS, load_project_config
from generator.render import RenderOptions, load_plans
from tests.helpers_promtool import logging_promtool

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _fleet_specs import realistic_specs

REPO = Path(__file__).resolve().parent.parent
ALL_BUT_TESTS = tuple(k for k in FULL_OUTPUTS if k != "tests")
FULL = f"render:\n  outputs: [{', '.join(FULL_OUTPUTS)}]\n"
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
        ("[dashboards, runbooks]", "must list an install path of the rules"),
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


def test_unset_outputs_are_the_lean_default(tmp_path: Path) -> None:
    assert load_project_config(tmp_path).render.kinds == DEFAULT_OUTPUTS
    assert set(FULL_OUTPUTS) == set(naming.OUTPUT_KINDS) - {"mimir"}


def test_only_the_listed_paths_are_written_and_the_others_removed(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(REPO / "specs" / "o1-preview.yaml", specs)
    args = ["render", "--skip-promtool", "-q", "--out", str(tmp_path), str(specs)]
    (tmp_path / CONFIG_FILE).write_text(FULL)
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
    (tmp_path / CONFIG_FILE).write_text(FULL)  # every path again, from the cache's records too
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


def _tree(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in sorted(_files(root))}


def _no_test_generation(*_: object) -> dict[str, str]:
    raise AssertionError("the promtool tests were generated though nothing reads them")


def test_tests_neither_written_nor_proved_are_not_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every other file byte for byte as a full render's, built in worker processes without
    the test generator; ``render --check`` of that tree passes the same way."""
    full, lean = tmp_path / "full", tmp_path / "lean"
    realistic_specs(full / "specs", 6)
    shutil.copytree(full / "specs", lean / "specs")
    monkeypatch.setenv("OBSGEN_CACHE_DIR", str(tmp_path / "cache"))
    args = ["render", "--skip-promtool", "-q", "--out"]
    (full / CONFIG_FILE).write_text(FULL)
    assert main([*args, str(full), str(full / "specs")]) == 0
    (lean / CONFIG_FILE).write_text(f"render:\n  outputs: [{', '.join(ALL_BUT_TESTS)}]\n")
    monkeypatch.setattr(core_outputs, "service_rule_tests", _no_test_generation)
    monkeypatch.setattr(pool, "PARALLEL_FROM", 4)  # built in worker processes too
    assert main([*args, str(lean), str(lean / "specs")]) == 0
    written = _tree(lean)
    expected = {rel: b for rel, b in _tree(full).items() if naming.output_kind(rel) != "tests"}
    assert written == expected
    assert not [rel for rel in written if rel.startswith("rules/") and ".test." in rel]
    assert main(["render", "--check", *args[1:], str(lean), str(lean / "specs")]) == 0


@pytest.mark.parametrize(
    ("outputs", "run_promtool", "built"),
    [
        (None, False, True),  # every install path: the tests are written
        (FULL_OUTPUTS, False, True),
        (DEFAULT_OUTPUTS, False, False),  # the lean default: proof only
        (DEFAULT_OUTPUTS, True, True),
        (ALL_BUT_TESTS, True, True),  # proved, not written
        (ALL_BUT_TESTS, False, False),  # neither: not built
        (("rules",), False, False),
    ],
)
def test_the_tests_are_built_when_written_or_proved(
    outputs: tuple[str, ...] | None, run_promtool: bool, built: bool
) -> None:
    options = RenderOptions(run_promtool=run_promtool, outputs=outputs).build_options()
    assert options.tests is built
    plans = load_plans([REPO / "specs" / "o1-preview.yaml"], REPO)
    own = Core(options).build(plans, None).services["o1-preview"]
    assert any(rel.endswith(".test.yaml") for rel in own) is built


def test_a_proof_left_unwritten_still_catches_a_broken_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tests`` not listed, promtool run: the tests are built and run, and a rule that no
    longer fires where its test expects it fails the render, which writes nothing."""
    monkeypatch.setenv("OBSGEN_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "tiny.yaml").write_text(TINY)
    (tmp_path / CONFIG_FILE).write_text("render:\n  outputs: [rules, runbooks]\n")
    real = core_outputs.rule_groups

    def never_firing(plan: object) -> object:
        groups = copy.deepcopy(real(plan))  # type: ignore[arg-type]
        for rule in (r for g in groups for r in g["rules"]):
            if rule.get("alert") == naming.ALERT_TARGET_DOWN:
                rule["expr"] = "vector(1) < 0"
        return groups

    monkeypatch.setattr(core_outputs, "rule_groups", never_firing)
    args = ["render", "-q", "--out", str(tmp_path), str(tmp_path / "specs")]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "rules/tiny.test.yaml: FAILED" in err and naming.ALERT_TARGET_DOWN in err
    assert not (tmp_path / "rules").exists()
