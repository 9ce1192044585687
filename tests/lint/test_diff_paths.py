"""Diff mode reads every path git can write and stays small whatever a diff claims: quoted
names (non-ASCII, quotes, tabs, spaces), every prefix setting (``diff.mnemonicPrefix``,
``diff.noprefix``, ``--src-prefix``/``--dst-prefix``), renames, and hunk headers claiming
billions of lines; a linted file no diff header names is a warning. Every case runs the real
git in a temporary repository."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from generator.cli import main
from generator.lint import changes as diff_mode
from generator.lint.changes import parse_diff, unquote

RULES = """groups:
- name: g
  rules:
  - alert: First
    expr: irate(a_total[5m]) > 1
    for: 5m
    labels: {severity: warning}
    annotations: {summary: s, runbook_url: https://r/x}
  - alert: Second
    expr: irate(b_total[5m]) > 1
    for: 5m
    labels: {severity: warning}
    annotations: {summary: s, runbook_url: https://r/x}
"""
# A change to the second rule only: its summary.
CHANGED = RULES.replace(
    "irate(b_total[5m]) > 1\n    for: 5m\n    labels: {severity: warning}\n"
    "    annotations: {summary: s,",
    "irate(b_total[5m]) > 1\n    for: 5m\n    labels: {severity: warning}\n"
    "    annotations: {summary: changed,",
)
ONLY_SECOND = [("Second", "irate-in-alert")]

NAMES = [
    pytest.param("règles/é.yaml", id="non-ASCII folder and file"),
    pytest.param("my rules/x y.yaml", id="spaces"),
    pytest.param('q"uote\\d.yaml', id="a quote and a backslash"),
    pytest.param("tab\there.yaml", id="a tab"),
    pytest.param("plain/rules.yaml", id="plain"),
]
CONFIGS = [
    pytest.param((), id="git defaults"),
    pytest.param(("core.quotePath=true",), id="core.quotePath"),
    pytest.param(("diff.mnemonicPrefix=true",), id="diff.mnemonicPrefix"),
    pytest.param(("diff.noprefix=true",), id="diff.noprefix"),
    pytest.param(
        ("diff.noprefix=true", "diff.mnemonicPrefix=true", "core.quotePath=true"),
        id="noprefix, mnemonic and quotePath together",
    ),
    pytest.param(("diff.renames=false", "color.diff=always", "color.ui=always"), id="colours"),
    pytest.param(("diff.external=false",), id="an external diff driver"),
    pytest.param(("diff.srcPrefix=old/", "diff.dstPrefix=new/"), id="configured prefixes"),
    pytest.param(("diff.relative=true",), id="diff.relative"),
]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    return done.stdout.decode("utf-8", "surrogateescape")


def _config(repo: Path, settings: tuple[str, ...]) -> None:
    for setting in settings:
        key, value = setting.split("=", 1)
        _git(repo, "config", key, value)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _commit(repo: Path, name: str, text: str = RULES) -> Path:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    _git(repo, "add", "--", name)
    _git(repo, "commit", "-qm", f"add {name}")
    return path


def _lint(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[list[tuple[str, str]], str]:
    capsys.readouterr()
    code = main(["lint", "--no-promtool", "--format", "json", "--fail-on", "never", *args])
    out = capsys.readouterr()
    assert code == 0, out.err
    found = json.loads(out.out)["findings"]
    return sorted((f["rule"], f["check"]) for f in found), out.err


@pytest.mark.parametrize("settings", CONFIGS)
@pytest.mark.parametrize("name", NAMES)
def test_changed_only_finds_the_changed_rule_whatever_git_is_told(
    repo: Path, name: str, settings: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    path = _commit(repo, name)
    _config(repo, settings)
    path.write_text(CHANGED)
    found, err = _lint(capsys, "--changed-only", name)
    assert found == ONLY_SECOND, err
    assert "warning" not in err


@pytest.mark.parametrize(
    ("config", "flags"),
    [
        pytest.param((), (), id="a/ b/"),
        pytest.param((), ("--no-prefix",), id="--no-prefix"),
        pytest.param((), ("--src-prefix=old/", "--dst-prefix=new/"), id="old/ new/"),
        pytest.param((), ("--src-prefix=x/y/", "--dst-prefix=z/"), id="prefixes of two lengths"),
        pytest.param((), ("--src-prefix=OLD", "--dst-prefix=NEW"), id="prefixes without a slash"),
        pytest.param(("diff.mnemonicPrefix=true",), (), id="c/ w/"),
        pytest.param(("diff.mnemonicPrefix=true",), ("--cached",), id="c/ i/ (staged)"),
        pytest.param(("core.quotePath=true",), ("-U3",), id="quoted, with context lines"),
    ],
)
@pytest.mark.parametrize("name", NAMES)
def test_a_diff_file_from_git_names_the_changed_rule(
    repo: Path,
    name: str,
    config: tuple[str, ...],
    flags: tuple[str, ...],
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _commit(repo, name)
    path.write_text(CHANGED)
    if "--cached" in flags:
        _git(repo, "add", "--", name)
    settings = [arg for setting in config for arg in ("-c", setting)]
    context = () if "-U3" in flags else ("-U0",)
    text = _git(repo, *settings, "diff", *context, *flags)
    assert text, "git printed no diff"
    (repo / "change.diff").write_bytes(text.encode("utf-8", "surrogateescape"))
    found, err = _lint(capsys, "--diff", "change.diff", name)
    assert found == ONLY_SECOND, err
    assert "warning" not in err


def test_untracked_files_with_quoted_names_count_whole(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """git ls-files quotes such names unless told -z: they were silently left out."""
    _commit(repo, "base.yaml")
    _git(repo, "config", "core.quotePath", "true")
    (repo / "nouvelle règle.yaml").write_text(
        RULES.replace("First", "Third").replace("Second", "Fourth")
    )
    found, err = _lint(capsys, "--changed-only", "nouvelle règle.yaml", "base.yaml")
    assert found == [("Fourth", "irate-in-alert"), ("Third", "irate-in-alert")], err


def test_a_renamed_file_reports_only_its_edited_rules(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _commit(repo, "old name.yaml")
    _git(repo, "mv", "old name.yaml", "nouveau nom.yaml")
    (repo / "nouveau nom.yaml").write_text(CHANGED)
    assert _lint(capsys, "--changed-only", "nouveau nom.yaml")[0] == ONLY_SECOND
    text = _git(repo, "-c", "diff.noprefix=true", "diff", "-M", "-U0", "HEAD")
    assert "rename to nouveau nom.yaml" in text
    (repo / "change.diff").write_text(text)
    assert _lint(capsys, "--diff", "change.diff", "nouveau nom.yaml")[0] == ONLY_SECOND


def test_a_pure_rename_is_named_and_changes_no_line(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _commit(repo, "a.yaml")
    _git(repo, "mv", "a.yaml", "b.yaml")
    found, err = _lint(capsys, "--changed-only", "b.yaml")
    assert found == []
    assert "warning" not in err  # the diff names it: nothing was missed


def test_a_linted_file_no_header_names_is_a_warning(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _commit(repo, "rules/a.yaml")
    _commit(repo, "rules/b.yaml")
    (repo / "rules/a.yaml").write_text(CHANGED)
    # A diff whose prefixes do not lead to the file: x/ is no git prefix and x/rules/… absent.
    (repo / "odd.diff").write_text(
        "--- x/y/rules/a.yaml\n+++ x/z/rules/a.yaml\n@@ -13 +13 @@\n-a\n+b\n"
    )
    found, err = _lint(capsys, "--diff", "odd.diff", "rules/b.yaml")
    assert found == []
    assert "rules/b.yaml: warning: no header of odd.diff names this file" in err
    found, err = _lint(capsys, "--changed-only", "rules/b.yaml")
    assert "rules/b.yaml: warning: no header of --changed-only (git diff HEAD)" in err
    # Files found in a folder: one warning when the diff names none of them.
    (repo / "elsewhere.diff").write_text(
        "--- a/other.yaml\n+++ b/other.yaml\n@@ -1 +1 @@\n-a\n+b\n"
    )
    found, err = _lint(capsys, "--diff", "elsewhere.diff", "rules")
    assert "elsewhere.diff: warning: names none of the 2 files linted in folders" in err
    assert "names 'other.yaml', which is not a file" in err


def test_a_file_outside_the_repository_is_linted_and_warned_about(
    repo: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    _commit(repo, "a.yaml")
    outside = tmp_path_factory.mktemp("outside") / "x.yaml"
    outside.write_text(RULES)
    found, err = _lint(capsys, "--changed-only", str(outside))
    assert found == []
    assert f"{outside}: warning: no header of --changed-only" in err


def test_lines_that_look_like_file_headers_inside_a_hunk_are_lines(tmp_path: Path) -> None:
    """An added line ``++ b/evil.yaml`` is ``+++ b/evil.yaml`` in the diff, a removed ``-- x``
    is ``--- x``: read by the hunk's counts they stay lines of their own file."""
    (tmp_path / "rules.yaml").write_text("x\n" * 20)
    text = (
        "diff --git a/rules.yaml b/rules.yaml\n"
        "--- a/rules.yaml\n+++ b/rules.yaml\n"
        "@@ -3,2 +3,2 @@\n--- a/evil.yaml\n--- x\n+++ b/evil.yaml\n+++ y\n"
        "@@ -10,0 +11 @@\n+z\n"
    )
    changes = parse_diff(text, tmp_path)
    assert list(changes.named.values()) == ["rules.yaml"]
    assert list(changes.lines[str((tmp_path / "rules.yaml").resolve())]) == [(3, 4), (11, 11)]
    assert changes.removed == "-- a/evil.yaml\n-- x\n"
    assert changes.notes == ()


@pytest.mark.parametrize(
    ("hunk", "expected"),
    [
        pytest.param("@@ -1,1 +1,99999999999 @@\n+x\n", (1, 99999999999), id="the reported diff"),
        pytest.param("@@ -1 +1,18446744073709551616 @@\n+x\n", (1, sys.maxsize), id="beyond int64"),
        pytest.param(
            "@@ -1 +99999999999999999999999,3 @@\n+x\n",
            (sys.maxsize, sys.maxsize),
            id="a huge start",
        ),
        pytest.param("@@ -99999999999 +5,0 @@\n-x\n", (5, 6), id="a deletion at a huge old line"),
    ],
)
def test_a_hunk_claiming_billions_of_lines_costs_no_memory(
    tmp_path: Path, hunk: str, expected: tuple[int, int]
) -> None:
    text = f"--- a/x.yaml\n+++ b/x.yaml\n{hunk}"
    tracemalloc.start()
    try:
        changes = parse_diff(text, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024, f"{peak:,} bytes to read a {len(text)}-byte diff"
    assert list(changes.lines[str((tmp_path / "x.yaml").resolve())]) == [expected]
    if hunk.startswith("@@ -1 "):
        assert "new lines missing" in changes.notes[0]


def test_the_reported_62_byte_diff_lints_in_little_memory(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``lint --diff`` of the issue's diff cost over 1 GB, then MemoryError."""
    _commit(repo, "x.yaml")
    diff = "--- a/x.yaml\n+++ b/x.yaml\n@@ -1,1 +1,99999999999 @@\n+x\n"
    assert len(diff.encode()) <= 62
    (repo / "huge.diff").write_text(diff)
    tracemalloc.start()
    try:
        found, err = _lint(capsys, "--diff", "huge.diff", "x.yaml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == [("First", "irate-in-alert"), ("Second", "irate-in-alert")]
    assert "99,999,999,998 new lines missing" in err
    # The whole lint (YAML loading, every check) of two rules; the diff itself takes bytes.
    assert peak < 16 * 1024 * 1024, f"{peak:,} bytes"


def test_memory_grows_with_the_diff_not_with_its_claims(tmp_path: Path) -> None:
    hunks = "".join(f"@@ -{i},0 +{i * 10},{10**12} @@\n+a\n" for i in range(1, 2001))
    text = f"--- a/x.yaml\n+++ b/x.yaml\n{hunks}"
    tracemalloc.start()
    try:
        changes = parse_diff(text, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * len(text) + 512 * 1024, f"{peak:,} bytes for {len(text):,}"
    assert changes.touches(str(tmp_path / "x.yaml"), 10**11, 10**11)


def test_a_diff_over_the_size_limit_is_refused_clearly(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _commit(repo, "x.yaml")
    monkeypatch.setattr(diff_mode, "MAX_DIFF_BYTES", 1024)
    (repo / "big.diff").write_text("--- a/x.yaml\n+++ b/x.yaml\n" + "@@ -1 +1 @@\n-a\n+b\n" * 100)
    assert main(["lint", "--no-promtool", "--diff", "big.diff", "x.yaml"]) == 2
    err = capsys.readouterr().err
    assert "big.diff: larger than" in err
    assert "Traceback" not in err
    (repo / "x.yaml").write_text(RULES + "# " + "y" * 2000 + "\n")
    assert main(["lint", "--no-promtool", "--changed-only", "x.yaml"]) == 2
    err = capsys.readouterr().err
    assert "git diff printed more than" in err


@pytest.mark.parametrize(
    ("written", "path"),
    [
        pytest.param('"b/r\\303\\250gles/\\303\\251.yaml"', "b/règles/é.yaml", id="octal UTF-8"),
        pytest.param('"b/q\\"t\\\\x.yaml"', 'b/q"t\\x.yaml', id="quote and backslash"),
        pytest.param('"b/a\\tb\\nc.yaml"\t', "b/a\tb\nc.yaml", id="tab and newline"),
        pytest.param("b/my file.yaml\t", "b/my file.yaml", id="git's tab after a space"),
        pytest.param(
            "rules.yaml\t2024-01-01 00:00:00.000000000 +0000", "rules.yaml", id="GNU timestamp"
        ),
        pytest.param('"b/\\377.yaml"', "b/\udcff.yaml", id="a byte that is no UTF-8"),
    ],
)
def test_quoted_paths_are_read_as_git_writes_them(written: str, path: str) -> None:
    assert unquote(written) == path


@pytest.mark.parametrize("base", ["--output=written.txt", "-p", "--no-index"])
def test_a_base_that_git_would_read_as_an_option_is_refused(
    repo: Path, base: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _commit(repo, "x.yaml")
    assert main(["lint", "--no-promtool", "--changed-only", f"--base={base}", "x.yaml"]) == 2
    assert f"--base: {base!r} is not a git ref" in capsys.readouterr().err
    assert not (repo / "written.txt").exists()
