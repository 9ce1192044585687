"""Diff files as users save them, read by ``--diff`` with the real git: colour forced on
(``git -c color.ui=always diff > x.diff``), CRLF line ends, a patch mail from ``git
format-patch``, copies, binary files beside the change, a name holding a newline; and an
unknown ``--base`` said plainly."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from generator.cli import main
from generator.lint import changes as diff_mode
from tests.lint.test_diff_paths import CHANGED, ONLY_SECOND, RULES


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    ).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _committed(repo: Path, name: str = "rules.yaml") -> Path:
    path = repo / name
    path.write_text(RULES)
    _git(repo, "add", "--", name)
    _git(repo, "commit", "-qm", "rules")
    return path


def _lint(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[tuple[str, str]], str]:
    capsys.readouterr()
    code = main(["lint", "--no-promtool", "--format", "json", "--fail-on", "never", *args])
    out = capsys.readouterr()
    found = json.loads(out.out)["findings"] if code == 0 else []
    return code, sorted((f["rule"], f["check"]) for f in found), out.err


def _diff_of(repo: Path, *git_args: str, name: str = "rules.yaml") -> bytes:
    path = _committed(repo, name)
    path.write_text(CHANGED)
    text = _git(repo, *git_args)
    assert text, "git printed no diff"
    return text


@pytest.mark.parametrize(
    "git_args",
    [
        pytest.param(("-c", "color.ui=always", "diff", "-U0"), id="color.ui=always"),
        pytest.param(("-c", "color.diff=always", "diff", "-U3"), id="color.diff=always"),
        pytest.param(("diff", "--color=always", "--color-moved", "-U0"), id="--color-moved"),
        pytest.param(("diff", "--color=always", "--ws-error-highlight=all"), id="ws highlight"),
    ],
)
def test_a_diff_saved_with_colour_forced_names_the_changed_rule(
    repo: Path, git_args: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    text = _diff_of(repo, *git_args)
    assert b"\x1b[" in text
    (repo / "change.diff").write_bytes(text)
    code, found, err = _lint(capsys, "--diff", "change.diff", "rules.yaml")
    assert (code, found) == (0, ONLY_SECOND), err
    assert "warning" not in err


def test_a_diff_with_crlf_line_ends_names_the_changed_rule(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "change.diff").write_bytes(_diff_of(repo, "diff", "-U0").replace(b"\n", b"\r\n"))
    code, found, err = _lint(capsys, "--diff", "change.diff", "rules.yaml")
    assert (code, found) == (0, ONLY_SECOND), err


def test_a_format_patch_mail_names_the_changed_rule(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _diff_of(repo, "status")
    _git(repo, "commit", "-qam", "summary")
    (repo / "change.diff").write_bytes(_git(repo, "format-patch", "-1", "--stdout", "-U0"))
    code, found, err = _lint(capsys, "--diff", "change.diff", "rules.yaml")
    assert (code, found) == (0, ONLY_SECOND), err


def test_a_copy_reports_only_the_lines_edited_after_copying(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _committed(repo)
    (repo / "copy.yaml").write_text(CHANGED)
    _git(repo, "add", "copy.yaml")
    text = _git(repo, "diff", "--cached", "-U0", "-C", "--find-copies-harder")
    assert b"copy from rules.yaml" in text
    (repo / "change.diff").write_bytes(text)
    code, found, err = _lint(capsys, "--diff", "change.diff", "copy.yaml")
    assert (code, found) == (0, ONLY_SECOND), err


def test_a_binary_file_beside_the_change_is_passed_over(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "blob.bin").write_bytes(b"\x00\x01")
    _git(repo, "add", "blob.bin")
    text_args = ("diff", "-U0", "--binary")
    path = _committed(repo)
    (repo / "blob.bin").write_bytes(b"\x00\x02\x03")
    path.write_text(CHANGED)
    (repo / "change.diff").write_bytes(_git(repo, *text_args))
    for args in (("--diff", "change.diff"), ("--changed-only",)):
        code, found, err = _lint(capsys, *args, "rules.yaml")
        assert (code, found) == (0, ONLY_SECOND), err


def test_a_name_holding_a_newline_is_read_in_both_modes(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "new\nline.yaml"
    (repo / "change.diff").write_bytes(_diff_of(repo, "diff", "-U0", name=name))
    for args in (("--diff", "change.diff"), ("--changed-only",)):
        code, found, err = _lint(capsys, *args, name)
        assert (code, found) == (0, ONLY_SECOND), err


@pytest.mark.parametrize("base", ["nope", "HEAD~5", "0123456789abcdef0123456789abcdef01234567"])
def test_a_base_that_names_no_commit_is_said_plainly(
    repo: Path, base: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _committed(repo)
    code, _found, err = _lint(capsys, "--changed-only", "--base", base, "rules.yaml")
    assert code == 2
    assert f"--base: {base!r} names no commit of this repository, so --changed-only" in err


def test_a_diff_naming_too_many_files_is_refused_quickly(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file a diff names costs a path resolution: 64 MiB of one-line file sections took
    minutes; past the cap the diff is refused, naming it."""
    monkeypatch.setattr(diff_mode, "MAX_DIFF_FILES", 100)
    _committed(repo)
    sections = b"".join(
        b"diff --git a/f%d.yaml b/f%d.yaml\n--- a/f%d.yaml\n+++ b/f%d.yaml\n@@ -1 +1 @@\n-x\n+y\n"
        % (i, i, i, i)
        for i in range(101)
    )
    (repo / "change.diff").write_bytes(sections)
    code, _found, err = _lint(capsys, "--diff", "change.diff", "rules.yaml")
    assert code == 2
    assert "change.diff: names more than 100 files; expected a diff of the changed" in err
    (repo / "change.diff").write_bytes(sections[: sections.index(b"diff --git a/f100")])
    code, found, err = _lint(capsys, "--diff", "change.diff", "rules.yaml")
    assert (code, found) == (0, []), err
