"""``render.install``: the lean default bundle (issue 48).

A repository writes one install path of the rules (``rules``, ``manifests`` or ``helm``: each
rule's text once), the dashboards, the runbooks and the Alertmanager routing; the promtool
tests are proof, built and run by every render that proves, written only with
``render.writeTests``. A one-line threshold change touches at most three generated files.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from generator import naming
from generator.builders.dashboard import service_dashboard
from generator.cli import main
from generator.core import outputs as core_outputs
from generator.errors import ObsgenError
from generator.project_config import (
    CONFIG_FILE,
    DEFAULT_OUTPUTS,
    FULL_OUTPUTS,
    LEAN_OUTPUTS,
    load_project_config,
)
from generator.render import load_plans
from generator.yamlio import dump_dashboard_json, dump_json
from tests.helpers_promtool import logging_promtool

REPO = Path(__file__).resolve().parent.parent
SPEC = "o1-preview.yaml"


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for top in naming.OUTPUT_DIRS
        for p in sorted((root / top).rglob("*"))
        if p.is_file() and p.name != "receivers.yaml"
    }


def _repo(tmp_path: Path, config: str | None) -> tuple[Path, list[str]]:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    shutil.copy(REPO / "specs" / SPEC, root / "specs")
    if config is not None:
        (root / CONFIG_FILE).write_text(config, encoding="utf-8")
    return root, ["render", "-q", "--out", str(root), str(root / "specs")]


def test_the_default_is_the_rule_files_dashboards_runbooks_and_routing(tmp_path: Path) -> None:
    config = load_project_config(tmp_path).render
    assert config.install_path == "rules" and config.kinds == DEFAULT_OUTPUTS
    assert DEFAULT_OUTPUTS == ("rules", "dashboards", "runbooks", "alertmanager")
    assert set(FULL_OUTPUTS) == set(naming.OUTPUT_KINDS) - {"mimir"}


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("render: {install: rules, outputs: [rules]}", "set one"),
        ("render: {install: manifests, dashboardsVia: values}", "use install: helm"),
        ("render: {writeTests: true, outputs: [rules]}", "list tests there"),
        ("render: {outputs: [dashboards, runbooks]}", "install path of the rules"),
        ("render: {install: charts}", "'rules', 'manifests' or 'helm'"),
        ("render: {install: manifests, writeTests: true}", "install: manifests does not"),
        ("render: {install: helm, writeTests: true}", "install: helm does not write"),
        ("render: {outputs: [helm, tests]}", "outputs: does not write"),
    ],
)
def test_contradicting_settings_name_the_field(tmp_path: Path, config: str, message: str) -> None:
    (tmp_path / CONFIG_FILE).write_text(config + "\n")
    with pytest.raises(ObsgenError) as err:
        load_project_config(tmp_path)
    line = err.value.diagnostics[0]
    assert line.path.startswith("render") and message in line.message, line


def test_dashboards_via_values_alone_installs_through_helm(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text("render: {dashboardsVia: values}\n")
    assert load_project_config(tmp_path).render.kinds == LEAN_OUTPUTS["helm"]


def _one_alert_expr(files: dict[str, bytes]) -> str:
    """The expression of the queue-depth alert, as the rule file writes it."""
    rules = files.get("rules/o1-preview.rules.yaml")
    if rules is None:  # the rule file is not written: build it to know the text
        plans = load_plans([REPO / "specs" / SPEC], REPO)
        rules = core_outputs.service_rule_file(plans[0]).encode()
    found = re.search(rb"- alert: ModelQueueDepthHigh\n(?:.*\n)*?\s+expr: (.+)\n", rules)
    assert found is not None
    return found.group(1).decode()


@pytest.mark.parametrize("install", ["rules", "manifests", "helm"])
def test_each_install_path_writes_the_rule_text_once_and_no_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, install: str
) -> None:
    monkeypatch.setenv("OBSGEN_CACHE_DIR", str(tmp_path / "cache"))
    root, args = _repo(tmp_path, f"render: {{install: {install}}}\n")
    assert main([*args, "--skip-promtool"]) == 0
    files = _files(root)
    kinds = {naming.output_kind(rel) for rel in files}
    assert kinds == set(LEAN_OUTPUTS[install]), kinds
    assert not [rel for rel in files if rel.endswith(".test.yaml") and rel.startswith("rules/")]
    expr = _one_alert_expr(files).encode()
    holding = [rel for rel, data in files.items() if expr in data]
    assert len(holding) == 1, holding
    # A warm render reuses every service from the cache (the rule file the fleet-wide files
    # read is built again where it is not written) and writes the same bytes.
    assert main([*args, "--skip-promtool"]) == 0
    assert _files(root) == files
    assert main(["render", "--check", *args[1:], "--skip-promtool"]) == 0


def test_a_render_that_proves_runs_the_tests_it_does_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = logging_promtool(tmp_path, monkeypatch)
    monkeypatch.setenv("OBSGEN_CACHE_DIR", str(tmp_path / "cache"))
    root, args = _repo(tmp_path, None)
    assert main(["render", "--check", *args[1:], "--no-cache"]) == 1  # nothing written yet
    assert "test rules" in log.read_text()  # ... but the proof ran, in a temporary folder
    log.unlink()
    assert main(args) == 0
    assert "test rules" in log.read_text()
    assert not list((root / "rules").glob("*.test.yaml"))
    log.unlink()
    assert main(["render", "--check", *args[1:], "--no-cache"]) == 0
    assert "test rules" in log.read_text()


def test_write_tests_writes_them_for_a_pipeline_of_its_own(tmp_path: Path) -> None:
    root, args = _repo(tmp_path, "render: {install: rules, writeTests: true}\n")
    assert main([*args, "--skip-promtool", "--no-cache"]) == 0
    assert (root / "rules" / "o1-preview.test.yaml").is_file()


@pytest.mark.parametrize("install", ["rules", "manifests", "helm"])
def test_a_one_line_threshold_change_touches_at_most_three_files(
    tmp_path: Path, install: str
) -> None:
    config = None if install == "rules" else f"render: {{install: {install}}}\n"
    root, args = _repo(tmp_path, config)
    assert main([*args, "--skip-promtool", "--no-cache"]) == 0
    before = _files(root)
    spec = root / "specs" / SPEC
    text = spec.read_text(encoding="utf-8")
    changed_spec = text.replace("queueDepth: {max: 100,", "queueDepth: {max: 120,")
    assert changed_spec.count("\n") == text.count("\n") and changed_spec != text
    spec.write_text(changed_spec, encoding="utf-8")
    assert main([*args, "--skip-promtool", "--no-cache"]) == 0
    after = _files(root)
    changed = sorted(
        rel for rel in after.keys() | before.keys() if after.get(rel) != before.get(rel)
    )
    assert 1 <= len(changed) <= 3, changed


def test_dashboard_json_is_one_line_per_panel_and_parses_as_before() -> None:
    plans = load_plans([REPO / "specs" / SPEC], REPO)
    dashboard = service_dashboard(plans[0])
    compact = dump_dashboard_json(dashboard)
    assert json.loads(compact) == json.loads(dump_json(dashboard))
    lines = compact.splitlines()
    assert len(lines) == len(dashboard) + len(dashboard["panels"]) + 3
    assert len(compact) < 0.7 * len(dump_json(dashboard))
    assert dump_dashboard_json({}) == "{}\n"


@pytest.mark.parametrize("install", ["manifests", "helm"])
def test_a_service_reused_without_its_rule_file_renders_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, install: str
) -> None:
    """A proved render records each service in the cache with the files it wrote: no rule
    file under ``manifests`` and ``helm``. The next render reuses the service without building
    it, and the fleet-wide files, which read each service's rule file, come out the same."""
    monkeypatch.setenv("OBSGEN_CACHE_DIR", str(tmp_path / "cache"))
    root, args = _repo(tmp_path, f"render: {{install: {install}}}\n")
    assert main(args) == 0
    files = _files(root)
    assert not [rel for rel in files if naming.output_kind(rel) == "rules"]

    def not_again(*_: object, **__: object) -> dict[str, str]:
        raise AssertionError("a service the cache recorded was built again")

    monkeypatch.setattr(core_outputs, "service_outputs", not_again)
    assert main(args) == 0
    assert _files(root) == files
    assert main(["render", "--check", *args[1:]]) == 0
