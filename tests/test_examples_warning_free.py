"""A new user's first hour: the README's example and every shipped spec check and render with
no warning; a spec rendered from outside ``specs/`` is warned about (the next render removes
its files as stale); relative dashboard links are a warning like relative runbook links."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from generator.cli import main
from tests.factories import good_spec, set_path, write_spec

REPO = Path(__file__).resolve().parent.parent
SHIPPED = sorted((REPO / "specs").glob("*.yaml"))


def readme_example() -> str:
    """The spec under "A minimal spec" in README.md."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"## A minimal spec: `specs/chat\.yaml`\n\n```yaml\n(.*?)```", text, re.S)
    assert found, "README.md: the minimal spec block moved"
    return found.group(1)


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A new repository as the working directory: the shipped receivers, no specs yet."""
    (tmp_path / "alertmanager").mkdir()
    shutil.copy(REPO / "alertmanager" / "receivers.yaml", tmp_path / "alertmanager")
    (tmp_path / "specs").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _quiet(capsys: pytest.CaptureFixture[str], *args: str) -> None:
    capsys.readouterr()
    assert main(list(args)) == 0
    err = capsys.readouterr().err
    assert "warning" not in err, err


def test_the_readme_example_checks_and_renders_without_a_warning(
    fresh: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (fresh / "specs" / "chat.yaml").write_text(readme_example(), encoding="utf-8")
    _quiet(capsys, "check")
    _quiet(capsys, "render", "--skip-promtool", "--quiet")
    assert (fresh / "rules" / "chat.rules.yaml").is_file()


def test_every_shipped_spec_checks_and_renders_without_a_warning(
    fresh: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for spec in SHIPPED:
        shutil.copy(spec, fresh / "specs")
    _quiet(capsys, "check")
    _quiet(capsys, "render", "--skip-promtool", "--quiet")


def test_a_spec_outside_specs_is_warned_about(
    fresh: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = write_spec(fresh / "elsewhere", good_spec(), "o1.yaml")
    inside = write_spec(fresh / "specs", good_spec(), "o1.yaml")
    assert main(["render", "--skip-promtool", "--quiet", str(outside)]) == 0
    assert (
        f"{outside}: warning: outside specs/: the next `obsgen render` reads specs/ alone and "
        "removes the files rendered from it as stale" in capsys.readouterr().err
    )
    for named in (str(inside), "specs", str(fresh / "specs")):
        assert main(["render", "--skip-promtool", "--quiet", named]) == 0
        assert "outside specs/" not in capsys.readouterr().err


def test_relative_dashboard_links_are_a_warning(
    fresh: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_spec(fresh / "specs", good_spec(), "o1.yaml")
    assert main(["check"]) == 0
    assert (
        "specs/o1.yaml: metadata.grafanaUrl: warning: not set: alert dashboard_url annotations "
        "are relative" in capsys.readouterr().err
    )
    linked = set_path(good_spec(), "metadata.grafanaUrl", "https://grafana.example.com")
    write_spec(fresh / "specs", linked, "o1.yaml")
    assert main(["check"]) == 0
    assert "metadata.grafanaUrl" not in capsys.readouterr().err
