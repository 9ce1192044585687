"""``obsgen.yaml`` and a new user's first hour with ``obsgen render`` (issue 21).

* the strict loader: unknown sections and keys, bad values, duplicate keys → ``file: field: msg``;
* ``--dashboards-via`` is recorded, so ``render --check`` agrees with the last render;
* ``--out DIR`` does not move the spec folder;
* rendering one spec file writes the runbooks its alerts link to.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from generator import naming
from generator.cli import main
from generator.errors import ObsgenError
from generator.project_config import (
    CONFIG_FILE,
    ProjectConfig,
    RenderConfig,
    load_project_config,
    recorded_text,
)
from tests.factories import good_spec, write_spec

REPO = Path(__file__).resolve().parent.parent


# --- the loader -------------------------------------------------------------------------------


def test_no_file_means_the_defaults(tmp_path: Path) -> None:
    assert load_project_config(tmp_path) == ProjectConfig()
    assert load_project_config(tmp_path).render.dashboards_via == "configmaps"
    assert load_project_config(tmp_path).render.fleet_name is None


def test_a_valid_file_is_read(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text(
        "render:\n  dashboardsVia: values\n  fleetName: ml-platform\n"
    )
    render = load_project_config(tmp_path).render
    assert (render.dashboards_via, render.fleet_name) == ("values", "ml-platform")


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        pytest.param("rendr: {}\n", "rendr", "unknown field", id="a misspelt section"),
        pytest.param("render: {dashboardVia: values}\n", "render.dashboardVia", "unknown field", id="a misspelt key"),
        pytest.param("render: {dashboardsVia: helm}\n", "render.dashboardsVia", "'configmaps' or 'values'", id="a bad choice"),
        pytest.param("render: {fleetName: Team_A}\n", "render.fleetName", "DNS", id="a fleet name that is no DNS label"),
        pytest.param("render: [values]\n", "render", "expected a mapping", id="a list for a section"),
        pytest.param("- render\n", "", "expected a mapping of sections", id="a list for the file"),
        pytest.param("render: {}\nrender: {}\n", "line 2", "duplicate key 'render'", id="a duplicate key"),
        pytest.param("render: {dashboardsVia: [\n", "line 2", "invalid YAML", id="broken YAML"),
    ],
)  # fmt: skip
def test_bad_files_name_the_file_and_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, path: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / CONFIG_FILE).write_text(text)
    with pytest.raises(ObsgenError) as err:
        load_project_config(tmp_path)
    (diag,) = err.value.diagnostics
    assert (diag.file, diag.path) == (CONFIG_FILE, path), diag
    assert message in diag.message, diag
    assert err.value.exit_code == 2


def test_a_bad_file_stops_render_with_exit_2_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / CONFIG_FILE).write_text("render: {dashboardsVia: helm}\n")
    code = main(["render", "--skip-promtool", "--out", str(tmp_path), str(REPO / "specs")])
    assert code == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / CONFIG_FILE}: render.dashboardsVia: " in err
    assert "Traceback" not in err
    assert not (tmp_path / "rules").exists()


def test_the_recorded_text_reads_back(tmp_path: Path) -> None:
    wanted = RenderConfig.model_validate({"dashboardsVia": "values", "fleetName": "ml-platform"})
    (tmp_path / CONFIG_FILE).write_text(recorded_text(wanted))
    assert load_project_config(tmp_path).render == wanted


# --- --dashboards-via is recorded --------------------------------------------------------------


@pytest.fixture
def one_spec(tmp_path: Path) -> Path:
    """A spec folder holding only o1-preview (a full render of one service: quicker)."""
    folder = tmp_path / "spec-folder"
    folder.mkdir()
    shutil.copy(REPO / "specs" / "o1-preview.yaml", folder)
    return folder


def _render(out: Path, specs: Path, *extra: str) -> int:
    return main(["render", "--skip-promtool", "--out", str(out), *extra, str(specs)])


def test_the_dashboards_via_choice_is_recorded_so_check_agrees(
    tmp_path: Path, one_spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _render(tmp_path, one_spec, "--dashboards-via", "values") == 0
    assert "recorded render.dashboardsVia: values in obsgen.yaml" in capsys.readouterr().out
    assert load_project_config(tmp_path).render.dashboards_via == "values"
    values = yaml.safe_load((tmp_path / naming.ALL_SERVICES_VALUES).read_text())
    assert "dashboards" in values["grafana"]
    # `render --check` without the flag used to report every values file as stale
    assert (
        main(["render", "--check", "--skip-promtool", "--out", str(tmp_path), str(one_spec)]) == 0
    )
    # and a plain render keeps the choice
    assert _render(tmp_path, one_spec) == 0
    assert (
        "dashboards"
        in yaml.safe_load((tmp_path / naming.ALL_SERVICES_VALUES).read_text())["grafana"]
    )


def test_the_default_choice_writes_no_config(tmp_path: Path, one_spec: Path) -> None:
    assert _render(tmp_path, one_spec, "--dashboards-via", "configmaps") == 0
    assert not (tmp_path / CONFIG_FILE).exists()


def test_a_flag_that_contradicts_the_config_is_refused(
    tmp_path: Path, one_spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / CONFIG_FILE).write_text("render: {dashboardsVia: values}\n")
    assert _render(tmp_path, one_spec, "--dashboards-via", "configmaps") == 2
    err = capsys.readouterr().err
    assert "obsgen.yaml: render.dashboardsVia: is 'values' but --dashboards-via configmaps" in err
    assert not (tmp_path / "rules").exists()
    # --check may still compare against the other way, explicitly
    assert main(["render", "--check", "--skip-promtool", "--dashboards-via", "configmaps", "--out", str(tmp_path), str(one_spec)]) == 1  # fmt: skip


# --- --out does not move the spec folder -------------------------------------------------------


def test_out_does_not_move_the_spec_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    (project / "specs").mkdir(parents=True)
    shutil.copy(REPO / "specs" / "o1-preview.yaml", project / "specs")
    monkeypatch.chdir(project)
    # no spec argument: ./specs of the working directory, outputs under --out
    assert main(["render", "--skip-promtool", "--out", "../build"]) == 0
    built = tmp_path / "build"
    assert (built / naming.rules_file("o1-preview")).is_file()
    assert not (project / "rules").exists()
    header = (built / naming.rules_file("o1-preview")).read_text().splitlines()[0]
    assert header.startswith("# Generated by obsgen from specs/o1-preview.yaml.")
    assert main(["render", "--check", "--skip-promtool", "--out", "../build"]) == 0


# --- one spec file writes the runbooks its alerts link to --------------------------------------


def _linked_runbooks(rules_text: str) -> set[str]:
    urls = set()
    for group in yaml.safe_load(rules_text)["groups"]:
        for rule in group["rules"]:
            if "alert" in rule:
                urls.add(rule["annotations"]["runbook_url"])
    return urls


def test_rendering_one_spec_file_writes_the_runbooks_its_alerts_link_to(tmp_path: Path) -> None:
    spec = write_spec(tmp_path / "specs", good_spec(), "o1-preview.yaml")  # relative links
    assert main(["render", "--skip-promtool", "--out", str(tmp_path), str(spec)]) == 0
    linked = _linked_runbooks((tmp_path / naming.rules_file("o1-preview")).read_text())
    assert len(linked) >= 10
    assert all(url.startswith("docs/runbooks/o1-preview/") for url in linked)
    own = {
        p.relative_to(tmp_path).as_posix()
        for p in (tmp_path / "docs/runbooks/o1-preview").glob("*.md")
    }
    assert own == linked
    # and the pages of every service those pages link to (../<Alert>.md), none more
    shared = {
        f"docs/runbooks/{page}"
        for url in linked
        for page in re.findall(r"\]\(\.\./(\w+\.md)\)", (tmp_path / url).read_text())
    }
    written = {
        p.relative_to(tmp_path).as_posix() for p in (tmp_path / "docs/runbooks").glob("*.md")
    }
    assert written == shared
    assert {f"docs/runbooks/{url.rsplit('/', 1)[-1]}" for url in linked} <= written
    # the fleet-wide files stay the full render's
    assert not (tmp_path / naming.fleet_dashboard_file()).exists()


def test_an_existing_runbook_is_left_to_the_full_render(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "runbooks" / "ModelTargetDown.md"
    page.parent.mkdir(parents=True)
    page.write_text("<!-- Generated by obsgen from a full render -->\n")
    spec = REPO / "specs" / "o1-preview.yaml"
    assert main(["render", "--skip-promtool", "--out", str(tmp_path), str(spec)]) == 0
    assert page.read_text() == "<!-- Generated by obsgen from a full render -->\n"
    assert main(["render", "--check", "--skip-promtool", "--out", str(tmp_path), str(spec)]) == 0


def test_docs_config_describes_every_field() -> None:
    text = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    for section, model in ProjectConfig.model_fields.items():
        assert f"`{section}" in text
        sub = model.annotation
        for name, field in getattr(sub, "model_fields", {}).items():
            assert f"`{section}.{field.alias or name}`" in text, name


def test_the_config_type_lists_every_install_path_naming_knows() -> None:
    """`render.outputs` accepts exactly the install paths `naming.output_kind` can return."""
    from typing import get_args

    from generator import naming, project_config

    assert get_args(project_config.OutputKind) == naming.OUTPUT_KINDS
    assert set(project_config.DEFAULT_OUTPUTS) <= set(naming.OUTPUT_KINDS)
