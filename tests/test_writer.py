"""All-or-nothing writes (issue 15, cases 4–6): one render per output root, staged files that
are never outputs, rollback of a failed or killed replace phase, nothing written outside."""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator import writer
from generator.cli import main
from generator.errors import ObsgenError
from generator.fleet.bundle import BundleFiles
from generator.fleet.filebacked import FileBacked, identity, size_of, spool, spool_changes

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "specs" / "o1-preview.yaml"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _render(root: Path, *extra: str) -> int:
    return main(["render", "--skip-promtool", "--out", str(root), *extra, str(SPEC)])


@pytest.fixture
def old_bundle(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A rendered root whose every output then differs from what the spec renders."""
    root = tmp_path / "root"
    assert _render(root) == 0
    for path in root.rglob("*"):
        if path.is_file():
            path.write_bytes(path.read_bytes() + b"# old\n")
    return root, _snapshot(root)


def _cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_a_folder_in_the_way_changes_nothing_and_says_so(
    old_bundle: tuple[Path, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Case 4: a directory where rules/<svc>.rules.yaml should be."""
    root, before = old_bundle
    blocker = root / "rules" / "o1-preview.rules.yaml"
    blocker.unlink()
    blocker.mkdir()
    before = _snapshot(root)
    capsys.readouterr()
    assert _render(root) == 1
    err = capsys.readouterr().err
    assert (
        "rules/o1-preview.rules.yaml: cannot write: a folder is in the way; no output was changed"
        in err
    )
    assert "Traceback" not in err
    assert _snapshot(root) == before


def test_a_failure_while_replacing_restores_every_replaced_file(
    old_bundle: tuple[Path, dict[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Case 4: the 10th rename fails after 9 files already hold the new content."""
    root, before = old_bundle
    real_replace = os.replace
    calls = []

    def replace(src: str | Path, dst: str | Path) -> None:
        if Path(src).name.startswith(writer.STAGED_PREFIX):
            calls.append(dst)
            if len(calls) == 10:
                raise OSError(28, "No space left on device", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    capsys.readouterr()
    assert _render(root) == 1
    err = capsys.readouterr().err
    assert (
        "cannot write: No space left on device; no output was changed (9 files already "
        "replaced were restored)" in err
    )
    assert _snapshot(root) == before
    assert not list(root.rglob(".obsgen*")), "staged files, backups or the journal were left"


def test_a_failed_rollback_is_finished_by_the_next_render(
    old_bundle: tuple[Path, dict[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root, before = old_bundle
    real_replace = os.replace
    calls = []

    def replace(src: str | Path, dst: str | Path) -> None:
        name = Path(src).name
        if name.startswith(writer.STAGED_PREFIX):
            calls.append(dst)
        if (len(calls) >= 5 and name.startswith(writer.STAGED_PREFIX)) or name.startswith(
            writer.BACKUP_PREFIX
        ):  # the 5th rename fails, and so does every restore
            raise OSError(5, "Input/output error", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    capsys.readouterr()
    assert _render(root) == 1
    err = capsys.readouterr().err
    assert "rolling back also failed for" in err
    assert "the next `obsgen render` finishes the rollback from .obsgen/render.journal" in err
    assert (root / ".obsgen" / "render.journal").exists()
    monkeypatch.setattr(os, "replace", real_replace)
    assert main(["render", "--check", "--skip-promtool", "--out", str(root), str(SPEC)]) == 1
    assert "an interrupted render: run `obsgen render` to restore" in capsys.readouterr().err
    with writer.output_lock(root):  # what the next render does first
        pass
    rolled_back = re.search(
        r"was rolled back: (\d+) files hold their previous content again", capsys.readouterr().err
    )
    assert rolled_back is not None and int(rolled_back.group(1)) >= 5
    assert _snapshot(root) == before


KILLER = """
import os, sys
real = os.replace
count = [0]
def replace(src, dst):
    count[0] += 1
    if count[0] > int(sys.argv[1]):
        os._exit(137)  # killed in the middle of the replace phase
    real(src, dst)
os.replace = replace
from generator.cli import main
from generator.errors import ObsgenError
sys.exit(main(sys.argv[2:]))
"""


def test_a_kill_while_replacing_is_rolled_back_by_the_next_render(
    old_bundle: tuple[Path, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Case 4: a kill in the replace phase; the next render first restores all-old."""
    root, before = old_bundle
    args = ["render", "--skip-promtool", "--out", str(root), str(SPEC)]
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, "8", *args], cwd=REPO, capture_output=True, check=False
    )
    assert killed.returncode == 137
    assert _snapshot(root) != before  # a mix of old and new, with a journal
    with writer.output_lock(root):
        assert _snapshot(root) == before  # rolled back: all old
    assert "an interrupted render" in capsys.readouterr().err
    assert _render(root) == 0
    fresh = root.parent / "fresh"
    assert _render(fresh) == 0
    # then all new, no leftovers; the pages of every service (docs/runbooks/<Alert>.md) are the
    # full render's: a render of one spec file writes them only when missing
    shared = re.compile(r"docs/runbooks/[^/]+\.md")
    after = _snapshot(root)
    assert {p: c for p, c in after.items() if not shared.fullmatch(p)} == {
        p: c for p, c in _snapshot(fresh).items() if not shared.fullmatch(p)
    }
    assert {p: c for p, c in after.items() if shared.fullmatch(p)} == {
        p: c for p, c in before.items() if shared.fullmatch(p)
    }


def test_two_renders_at_once_both_succeed(tmp_path: Path) -> None:
    """Case 5: the second render waits for the first instead of deleting its staged files."""
    root = tmp_path / "root"
    args = ["render", "--skip-promtool", "--out", str(root), str(REPO / "specs")]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "generator", *args],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    fresh = tmp_path / "fresh"
    assert main(["render", "--skip-promtool", "--out", str(fresh), str(REPO / "specs")]) == 0
    assert _snapshot(root) == _snapshot(fresh)


def test_a_busy_root_is_waited_for_then_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('locked', flush=True)\n"
            "time.sleep(float(sys.argv[2]))\n",
            str(root),
            "1.5",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        monkeypatch.setattr(writer, "LOCK_WAIT_S", 0.3)
        assert _render(root) == 2
        err = capsys.readouterr().err
        assert "waiting for another obsgen render to finish" in err
        assert (
            "another obsgen render still holds this output root after 0.3s; nothing was written"
            in err
        )
        assert not (root / "rules").exists()
        monkeypatch.setattr(writer, "LOCK_WAIT_S", 60)
        started = time.monotonic()
        assert _render(root) == 0  # waits for the holder, then renders
        assert time.monotonic() - started > 0.5
    finally:
        holder.wait(timeout=30)


def test_staged_files_are_never_taken_for_outputs(tmp_path: Path) -> None:
    """Case 5: a render in progress has staged files carrying the generated marker; another
    render's stale sweep must not count them (and only a lock holder removes leftovers)."""
    root = tmp_path / "root"
    assert _render(root) == 0
    staged = root / "rules" / f"{writer.STAGED_PREFIX}123-abcd.o1-preview.rules.yaml"
    staged.write_text(f"# {writer.GENERATED_MARKER} from specs/o1-preview.yaml.\n")
    assert writer.stale_outputs(root, {}, ("rules",)) == sorted(
        p.relative_to(root).as_posix()
        for p in (root / "rules").iterdir()
        if not p.name.startswith(".")
    )
    assert staged.exists()
    with writer.output_lock(root):  # no journal: a staged file can only be a dead run's
        assert not staged.exists()
    fd = os.open(root, os.O_RDONLY)
    try:  # the lock is on the root folder and leaves no file behind
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
    assert not (root / ".obsgen").exists()


def test_an_output_folder_outside_the_root_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Case 6: rules/ is a symlink to another repository's rules/."""
    other = tmp_path / "other"
    assert main(["render", "--skip-promtool", "--out", str(other), str(REPO / "specs")]) == 0
    theirs = _snapshot(other)
    root = tmp_path / "root"
    assert _render(root) == 0
    mine = _snapshot(root)
    for path in (root / "rules").iterdir():
        path.write_text(path.read_text() + "# changed\n")
    changed = _snapshot(root)
    os.rename(root / "rules", tmp_path / "my-rules")
    (root / "rules").symlink_to(other / "rules", target_is_directory=True)
    capsys.readouterr()
    assert main(["render", "--skip-promtool", "--out", str(root), str(REPO / "specs")]) == 2
    err = capsys.readouterr().err
    assert f"{root}/rules: resolves to {other.resolve()}/rules, outside the output root" in err
    assert _snapshot(other) == theirs  # nothing written or swept there
    assert {k: v for k, v in _snapshot(root).items() if not k.startswith("rules/")} == {
        k: v for k, v in changed.items() if not k.startswith("rules/")
    }
    assert mine  # sanity: the first render wrote files


def test_ctrl_c_while_replacing_puts_the_old_bundle_back(
    old_bundle: tuple[Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, before = old_bundle
    real_replace = os.replace
    calls = []

    def replace(src: str | Path, dst: str | Path) -> None:
        if Path(src).name.startswith(writer.STAGED_PREFIX):
            calls.append(dst)
            if len(calls) == 5:
                raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    assert _render(root) == 130
    assert _snapshot(root) == before
    assert not list(root.rglob(".obsgen*"))


# --- spooled files linked into place, one flush for all ----------------------------


def _spooled(tmp_path: Path, texts: dict[str, str]) -> tuple[Path, FileBacked]:
    root = tmp_path / "root"
    root.mkdir()
    spool_dir = root / f"{writer.SPOOL_PREFIX}test"
    return root, spool(spool_dir, texts)


def test_spooled_files_are_moved_into_place_not_copied(tmp_path: Path) -> None:
    root, spooled = _spooled(tmp_path, {"rules/a.yaml": "a: 1\n", "rules/b.yaml": "b: 2\n"})
    inodes = {rel: (spooled.base / rel).stat().st_ino for rel in spooled}
    texts = dict(spooled.items())
    assert writer.write_all(root, spooled, []) == ["rules/a.yaml", "rules/b.yaml"]
    for rel, text in texts.items():
        written = root / rel
        assert written.read_text() == text
        assert written.stat().st_ino == inodes[rel]  # the same file, no second copy
        assert written.stat().st_mode & 0o777 == 0o644
        assert not (spooled.base / rel).exists()


def test_only_outputs_the_repository_does_not_hold_are_spooled(tmp_path: Path) -> None:
    """A render over committed outputs (a fresh clone in CI) spools only what differs; the
    rest stays in place, to be neither written nor swept."""
    root = tmp_path / "root"
    texts = {
        "rules/same.yaml": "a: 1\n",
        "rules/edited.yaml": "b: 2\n",  # same size, one byte differs
        "rules/longer.yaml": "c: 3\n",
        "rules/missing.yaml": "d: 4\n",
        "rules/linked.yaml": "e: 5\n",  # a symlink to the same text is not followed
        "rules/fifo.yaml": "f: 6\n",  # opening a FIFO must not hang
        "rules/folder.yaml": "g: 7\n",
    }
    (root / "rules" / "folder.yaml").mkdir(parents=True)
    (root / "rules" / "same.yaml").write_text("a: 1\n")
    (root / "rules" / "edited.yaml").write_text("b: 3\n")
    (root / "rules" / "longer.yaml").write_text("c: 3\n\n")
    (tmp_path / "target.yaml").write_text("e: 5\n")
    (root / "rules" / "linked.yaml").symlink_to(tmp_path / "target.yaml")
    os.mkfifo(root / "rules" / "fifo.yaml")
    spool_dir = root / f"{writer.SPOOL_PREFIX}test"

    spooled, kept = spool_changes(spool_dir, root, texts)

    assert sorted(kept) == ["rules/same.yaml"]
    assert kept.on_disk and kept.identities["rules/same.yaml"] == identity(root / "rules/same.yaml")
    assert kept.size("rules/same.yaml") == 5
    assert sorted(spooled) == sorted(set(texts) - {"rules/same.yaml"})
    assert sorted(
        p.relative_to(spool_dir).as_posix() for p in spool_dir.rglob("*") if p.is_file()
    ) == sorted(spooled)
    assert dict(spooled.items()) == {rel: texts[rel] for rel in spooled}
    outputs = BundleFiles([spooled, kept])
    assert dict(outputs.items()) == texts
    assert sorted(outputs.to_write()) == sorted(spooled)  # kept files are not written

    (root / "rules" / "same.yaml").write_text("a: 2\n")  # changed after it was compared
    with pytest.raises(ObsgenError, match="changed on disk during the render"):
        outputs["rules/same.yaml"]


def test_nothing_is_spooled_when_the_repository_holds_every_output(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "rules").mkdir(parents=True)
    (root / "rules" / "a.yaml").write_text("a: 1\n")
    (kept,) = spool_changes(root / "spool", root, {"rules/a.yaml": "a: 1\n"})
    assert not (root / "spool").exists()
    assert kept.on_disk and dict(kept.items()) == {"rules/a.yaml": "a: 1\n"}
    (spooled,) = spool_changes(root / "spool", root, {})
    assert not spooled.on_disk and len(spooled) == 0


def test_outputs_get_mode_0644_whatever_the_umask(tmp_path: Path) -> None:
    old_umask = os.umask(0o077)
    try:
        root, spooled = _spooled(tmp_path, {"rules/a.yaml": "a: 1\n"})
        # The first is moved from the spool, the second staged beside its target.
        outputs = BundleFiles([spooled, {"dashboards/b.json": "b\n"}])
        assert writer.write_all(root, outputs, []) == ["dashboards/b.json", "rules/a.yaml"]
        assert not (spooled.base / "rules/a.yaml").exists()
    finally:
        os.umask(old_umask)
    for rel in ("rules/a.yaml", "dashboards/b.json"):
        assert (root / rel).stat().st_mode & 0o777 == 0o644, rel


def test_a_root_of_dot_takes_top_level_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # obsgen.yaml is the one top-level output, written from `--out .` (the default).
    monkeypatch.chdir(tmp_path)
    outputs = {"obsgen.yaml": "render: {}\n", "rules/a.yaml": "a: 1\n"}
    assert writer.write_all(Path("."), outputs, []) == ["obsgen.yaml", "rules/a.yaml"]
    assert (tmp_path / "obsgen.yaml").read_text() == "render: {}\n"
    (tmp_path / "obsgen.yaml").unlink()
    args = ["render", "--skip-promtool", "-q", "--dashboards-via", "values", str(SPEC)]
    assert main(args) == 0
    assert "dashboardsVia: values" in (tmp_path / "obsgen.yaml").read_text()


def test_what_is_already_on_disk_decides_what_is_written(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "rules").mkdir(parents=True)
    same, other, linked, fifo = (root / "rules" / n for n in ("same", "other", "linked", "fifo"))
    same.write_text("x: 1\n")
    other.write_text("x: 2\n")  # same size, other text
    (tmp_path / "elsewhere").write_text("x: 1\n")
    linked.symlink_to(tmp_path / "elsewhere")  # a link to the same text counts as unchanged
    os.mkfifo(fifo)  # not a regular file: replaced, never read
    kept = same.stat().st_ino
    outputs = {f"rules/{n}": "x: 1\n" for n in ("same", "other", "linked", "fifo", "new")}
    assert writer.write_all(root, outputs, []) == ["rules/fifo", "rules/new", "rules/other"]
    assert same.stat().st_ino == kept
    assert linked.is_symlink()
    for name in ("other", "fifo", "new"):
        assert (root / "rules" / name).read_text() == "x: 1\n"
    assert not list(root.rglob(".obsgen-*"))  # no staged file or backup left behind


def test_a_moved_spool_leaves_the_cache_able_to_record_the_files(tmp_path: Path) -> None:
    root, spooled = _spooled(tmp_path, {"rules/a.yaml": "a: é\n"})
    writer.write_all(root, spooled, [])
    assert size_of(spooled, "rules/a.yaml") == len("a: é\n".encode())


def test_a_spool_on_another_filesystem_gets_the_files_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, spooled = _spooled(tmp_path, {"rules/a.yaml": "a: 1\n"})
    real_device = writer._device

    def device(path: str | Path) -> int:  # the spool as if mounted elsewhere
        return -1 if writer.SPOOL_PREFIX in str(path) else real_device(path)

    monkeypatch.setattr(writer, "_device", device)
    spool_inode = (spooled.base / "rules/a.yaml").stat().st_ino
    assert writer.write_all(root, spooled, []) == ["rules/a.yaml"]
    written = root / "rules/a.yaml"
    assert written.read_text() == "a: 1\n"
    assert written.stat().st_ino != spool_inode  # written, not moved


def test_staged_files_are_flushed_before_any_replaces_its_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, spooled = _spooled(tmp_path, {"rules/a.yaml": "a: 1\n", "dashboards/b.json": "{}\n"})
    events: list[str] = []
    real_replace, real_durable = os.replace, writer._make_durable

    def durable(paths: list[Path], folders: bool = False) -> None:
        events.append("flush folders" if folders else f"flush {len(paths)}")
        real_durable(paths, folders)

    def replace(src: object, dst: object) -> None:
        events.append("replace")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(writer, "_make_durable", durable)
    monkeypatch.setattr(writer.os, "replace", replace)
    writer.write_all(root, spooled, [])
    assert events[0] == "flush 2"  # before the journal's and the outputs' replaces
    assert events.count("replace") >= 2
    assert events[-1] == "flush folders"  # and the replaces themselves, after


def test_without_syncfs_every_staged_file_is_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [tmp_path / "a", tmp_path / "b"]
    for path in files:
        path.write_text("x")
    synced: list[int] = []
    monkeypatch.setattr(writer, "libc_syncfs", lambda: None)
    monkeypatch.setattr(writer.os, "fsync", synced.append)
    writer._make_durable(files)
    assert len(synced) == 2


def test_syncfs_is_called_once_per_filesystem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert writer.libc_syncfs() is not None  # Linux: the fast path is the one CI takes
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
        (folder / "f").write_text("x")
    calls: list[int] = []
    real = writer.libc_syncfs()
    assert real is not None
    monkeypatch.setattr(writer, "libc_syncfs", lambda: lambda fd: calls.append(fd) or real(fd))
    writer._make_durable([folder / "f" for folder in folders])
    assert len(calls) == 1  # both folders are on tmp_path's filesystem


def test_a_dead_renders_spool_is_swept_by_the_next_render(tmp_path: Path) -> None:
    root = tmp_path / "root"
    assert _render(root) == 0
    leftover = root / f"{writer.SPOOL_PREFIX}dead" / "rules" / "x.yaml"
    leftover.parent.mkdir(parents=True)
    leftover.write_text("x: 1\n")
    assert _render(root) == 0
    assert not leftover.parent.parent.exists()
    assert not list(root.glob(f"{writer.SPOOL_PREFIX}*"))  # the live render's spool is gone too


def test_a_failed_write_of_new_and_old_files_removes_the_new_and_restores_the_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only files found on disk get a backup: a new one is removed again on rollback, and a
    file that appeared since it was found absent is never taken for a backup."""
    root = tmp_path / "root"
    (root / "rules").mkdir(parents=True)
    (root / "rules" / "b.yaml").write_text("old: b\n")
    outputs = {f"rules/{n}.yaml": f"new: {n}\n" for n in ("a", "b", "c")}
    real_link, real_replace = os.link, os.replace
    linked: list[str] = []

    def link(src: str | Path, dst: str | Path, **kwargs: object) -> None:
        linked.append(Path(src).name)
        real_link(src, dst, **kwargs)  # type: ignore[arg-type]

    def replace(src: str | Path, dst: str | Path) -> None:
        if Path(dst).name == "c.yaml":
            raise OSError(28, "No space left on device", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "link", link)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(ObsgenError, match="2 files already replaced were restored"):
        writer.write_all(root, outputs, [])
    assert linked == ["b.yaml"]
    assert _snapshot(root) == {"rules/b.yaml": b"old: b\n"}
