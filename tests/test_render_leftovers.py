"""``render --check`` names what a killed render left behind (backups, staged files, spools,
journal copies), exits 1 and gives the command that removes them; that command does."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from generator import writer
from generator.cli import main
from generator.project_config import CONFIG_FILE, FULL_OUTPUTS

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "specs" / "o1-preview.yaml"
RUN = "4242-0badc0de"


def _render(root: Path, *extra: str) -> int:
    return main(["render", "--skip-promtool", "--quiet", "--out", str(root), *extra, str(SPEC)])


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rendered") / "root"
    root.mkdir()
    # Every install path, so that a manifest is there to leave a backup of.
    (root / CONFIG_FILE).write_text(f"render: {{outputs: [{', '.join(FULL_OUTPUTS)}]}}\n")
    assert _render(root) == 0
    return root


@pytest.fixture
def root(rendered: Path, tmp_path: Path) -> Path:
    """A fresh copy of a rendered, up-to-date root (hard links, as the writer's backups)."""
    copy = tmp_path / "root"
    for path in sorted(rendered.rglob("*")):
        target = copy / path.relative_to(rendered)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    return copy


def _backup(root: Path, rel: str) -> str:
    """What the writer keeps while it replaces ``rel``: a hard link beside it."""
    target = root / rel
    backup = target.with_name(f"{writer.BACKUP_PREFIX}{RUN}.{target.name}")
    os.link(target, backup)
    return backup.relative_to(root).as_posix()


def _staged(root: Path, rel: str) -> str:
    target = root / rel
    staged = target.with_name(f"{writer.STAGED_PREFIX}{RUN}.{target.name}")
    staged.write_text(f"# {writer.GENERATED_MARKER} from specs/o1-preview.yaml.\n")
    return staged.relative_to(root).as_posix()


def _spool(root: Path, rel: str) -> str:
    spooled = root / f"{writer.SPOOL_PREFIX}{RUN}" / rel
    spooled.parent.mkdir(parents=True)
    spooled.write_text("x: 1\n")
    return f"{writer.SPOOL_PREFIX}{RUN}/"


def _journal_copy(root: Path, rel: str) -> str:
    del rel
    copy = root / writer.STATE_DIR / f"{writer.JOURNAL_NAME}.{RUN}"
    copy.parent.mkdir()
    copy.write_text('{"run": "x", "steps": []}')
    return copy.relative_to(root).as_posix()


Leave = Callable[[Path, str], str]


@pytest.mark.parametrize(
    ("leave", "rel"),
    [
        pytest.param(_backup, "rules/o1-preview.rules.yaml", id="a backup of a rule file"),
        pytest.param(
            _backup,
            "docs/runbooks/o1-preview/ModelTargetDown.md",
            id="a backup two folders down",
        ),
        pytest.param(
            _backup, "manifests/o1-preview/prometheusrule.yaml", id="a backup of a manifest"
        ),
        pytest.param(_staged, "dashboards/o1-preview.json", id="a staged file"),
        pytest.param(_spool, "rules/o1-preview.rules.yaml", id="a spool folder at the root"),
        pytest.param(_journal_copy, "", id="a journal copy never moved into place"),
    ],
)
def test_check_names_what_a_killed_render_left_and_the_command_removes_it(
    root: Path, leave: Leave, rel: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _render(root, "--check") == 0
    capsys.readouterr()
    left = leave(root, rel)
    assert _render(root, "--check") == 1
    err = capsys.readouterr().err
    assert f"left behind: {left} (by a render that was killed)" in err
    assert f"remove them with `obsgen render --out {root}`" in err
    assert "out of date" not in err  # the outputs themselves are right
    assert "Traceback" not in err
    assert _render(root) == 0
    assert not (root / left).exists()
    assert _render(root, "--check") == 0


def test_check_lists_every_leftover_of_several_kinds_at_once(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    left = [
        _backup(root, "rules/o1-preview.rules.yaml"),
        _staged(root, "dashboards/o1-preview.json"),
        _spool(root, "rules/x.yaml"),
    ]
    capsys.readouterr()
    assert _render(root, "--check") == 1
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.startswith("left behind: ")] == [
        f"left behind: {rel} (by a render that was killed)" for rel in sorted(left)
    ]


def test_files_outside_the_output_folders_are_neither_reported_nor_removed(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only what a render sweeps is reported: a hand-made file of that name elsewhere is not
    obsgen's (the sweep never looks there either)."""
    mine = root / "notes" / f"{writer.BACKUP_PREFIX}{RUN}.todo.md"
    mine.parent.mkdir()
    mine.write_text("mine\n")
    capsys.readouterr()
    assert _render(root, "--check") == 0
    assert "left behind" not in capsys.readouterr().err
    assert _render(root) == 0
    assert mine.exists()


def test_a_clean_command_for_a_root_with_spaces_is_quoted(
    tmp_path: Path, rendered: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "my root"
    root.mkdir()
    for path in sorted(rendered.rglob("*")):
        target = root / path.relative_to(rendered)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.write_bytes(path.read_bytes())
    _backup(root, "rules/o1-preview.rules.yaml")
    capsys.readouterr()
    assert _render(root, "--check") == 1
    assert f"remove them with `obsgen render --out '{root}'`" in capsys.readouterr().err
