"""Outputs held as files instead of in memory: a read-only ``{repository path: text}`` mapping.

A 1,000-service render produces about a gigabyte of text. Services built in worker processes
are written to a spool folder and services reused from an earlier render stay where they are
(:mod:`generator.fleet.cache`); either way the render holds only their paths, and each text is read
when something asks for it (the fleet files, promtool, the writer), then dropped.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import stat
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from generator.errors import Diagnostic, ObsgenError

# (size, mtime_ns, ctime_ns, inode) of a file as recorded; see generator.fleet.cache.
Identity = list[int]


def identity(path: Path | str) -> Identity | None:
    """The recorded identity of ``path``, or None when it cannot be stat-ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


class FileBacked(Mapping[str, str]):
    """Texts of files under ``base``, by repository path (``base / path``).

    Args:
        base: folder holding the files (a spool folder, or the repository itself).
        identities: each path, with the identity it must still have when read (None: any);
            a file that changed since is an error, not silently different output.
        on_disk: True when ``base`` is the repository and the files are the outputs already
            there (nothing to write).
        sizes: each path's size in bytes, when known without a ``stat`` (a spool records
            them: the writer moves spooled files into place, after which only their sizes
            remain to be asked for).
    """

    def __init__(
        self,
        base: Path,
        identities: Mapping[str, Identity | None],
        on_disk: bool = False,
        sizes: Mapping[str, int] | None = None,
    ) -> None:
        self.base = base
        self.identities = dict(identities)
        self.on_disk = on_disk
        self.sizes = dict(sizes or {})

    def __getitem__(self, rel: str) -> str:
        expected = self.identities[rel]
        path = self.base / rel
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise ObsgenError(
                [Diagnostic(str(path), "", f"cannot read back a rendered file: {err}")],
                exit_code=1,
            ) from None
        if expected is not None and identity(path) != expected:
            raise ObsgenError(
                [Diagnostic(rel, "", "changed on disk during the render; render again")],
                exit_code=1,
            )
        return text

    def __iter__(self) -> Iterator[str]:
        return iter(self.identities)

    def spooled(self, rel: str) -> str | None:
        """The file holding ``rel`` when this is a spool (written by :func:`spool`, with no
        identity to check), as a path in text, else None. The writer moves it into place: read
        ``rel`` before."""
        if self.on_disk or self.identities[rel] is not None:
            return None
        return f"{os.fspath(self.base)}/{rel}"

    def __len__(self) -> int:
        return len(self.identities)

    def kept_identity(self, rel: str) -> Identity | None:
        """The identity ``rel`` must still have when this part holds files in place
        (``on_disk``: found unchanged there), else None."""
        return self.identities[rel] if self.on_disk else None

    def moved(self) -> list[str]:
        """Of the files held in place (``on_disk``), those whose identity is not the recorded
        one any more: changed, replaced or deleted since they were found unchanged."""
        if not self.on_disk:
            return []
        top = os.fspath(self.base)
        return [
            rel
            for rel, kept in self.identities.items()
            if kept is not None and identity(f"{top}/{rel}") != kept
        ]

    def size(self, rel: str) -> int:
        """Size in bytes of ``rel`` (from :attr:`sizes` when known: a spooled file may have been
        moved into place since)."""
        known = self.sizes.get(rel)
        return known if known is not None else (self.base / rel).stat().st_size


def spooled_file(outputs: Mapping[str, str], rel: str) -> str | None:
    """The spooled file holding ``outputs[rel]`` when ``outputs`` has one (a spool
    :class:`FileBacked`, or a mapping over parts with a ``spooled`` method), else None: the
    writer moves it into place instead of copying it."""
    spooled = getattr(outputs, "spooled", None)
    return spooled(rel) if callable(spooled) else None


def size_of(outputs: Mapping[str, str], rel: str) -> int:
    """Size in bytes of ``outputs[rel]``, without reading a file when ``outputs`` knows it (a
    :class:`FileBacked`, or a mapping over parts with a ``size`` method)."""
    size = getattr(outputs, "size", None)
    return size(rel) if callable(size) else len(outputs[rel].encode("utf-8"))


def kept_identity_of(outputs: Mapping[str, str], rel: str) -> Identity | None:
    """The identity ``outputs[rel]`` must still have when ``outputs`` holds it in place on disk
    (:meth:`FileBacked.kept_identity`, or a mapping over parts with that method), else None."""
    kept = getattr(outputs, "kept_identity", None)
    return kept(rel) if callable(kept) else None


def spool(base: Path, outputs: Mapping[str, str]) -> FileBacked:
    """Write ``outputs`` under ``base`` (each file with mode 0644, whatever the umask: the
    writer moves spooled files into place as they are) and return them as a
    :class:`FileBacked`."""
    return _spool(base, {rel: text.encode("utf-8") for rel, text in outputs.items()})


def spool_changes(base: Path, root: Path, outputs: Mapping[str, str]) -> list[FileBacked]:
    """Spool (as :func:`spool`) the ``outputs`` that differ from the repository ``root``.

    Returns one or two parts: the spooled outputs, and the outputs that ``root`` already holds
    byte for byte as regular files (not through a symlink), as an ``on_disk`` part with the
    identity each had when compared (each part only when it holds a file, the spooled one
    also when ``outputs`` is empty): nothing to write, and a later change to one is an error
    when it is read, as for a service the cache reused. A render of an unchanged repository
    with no cache (a fresh clone in CI) then compares each file once, in the worker that built
    it, instead of spooling, comparing again and deleting every file.
    """
    top = os.fspath(root)
    changed: dict[str, bytes] = {}
    kept: dict[str, Identity | None] = {}
    sizes: dict[str, int] = {}
    for rel, text in outputs.items():
        data = text.encode("utf-8")
        found = _holds(f"{top}/{rel}", data)
        if found is None:
            changed[rel] = data
        else:
            kept[rel] = found
            sizes[rel] = len(data)
    parts = [_spool(base, changed)] if changed or not kept else []
    if kept:
        parts.append(FileBacked(root, kept, on_disk=True, sizes=sizes))
    return parts


def _holds(path: str, data: bytes) -> Identity | None:
    """The identity of ``path`` when it is a regular file (a symlink is not followed) holding
    exactly ``data``, else None."""
    try:
        # O_NONBLOCK: a FIFO put where an output goes must not hang the render.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(data):
            return None
        with open(fd, "rb", closefd=False) as handle:
            if handle.read() != data:
                return None
    except OSError:
        return None
    finally:
        os.close(fd)
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _spool(base: Path, outputs: Mapping[str, bytes]) -> FileBacked:
    made: set[str] = set()
    sizes: dict[str, int] = {}
    top = os.fspath(base)
    for rel, data in outputs.items():
        path = f"{top}/{rel}"
        folder = path.rpartition("/")[0]
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            os.fchmod(fd, 0o644)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        sizes[rel] = len(data)
    return FileBacked(base, dict.fromkeys(outputs), sizes=sizes)


def flush_soon(folder: Path) -> None:
    """Start flushing the filesystem holding ``folder`` to disk (``syncfs(2)``) in a
    background thread, so that :func:`generator.writer.write_all`'s own flush finds little
    left: the fleet layer calls it once the services' files are spooled, and builds the fleet
    files meanwhile. Best effort: does nothing where there is no ``syncfs``, and ignores
    errors (the writer's flush reports them)."""
    syncfs = libc_syncfs()
    if syncfs is None:
        return

    def flush() -> None:
        with contextlib.suppress(OSError):
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                syncfs(fd)  # ctypes lets go of the GIL for the call
            finally:
                os.close(fd)

    threading.Thread(target=flush, name="obsgen-flush", daemon=True).start()


def libc_syncfs() -> Callable[[int], int] | None:
    """libc's ``syncfs`` (Linux), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    function: Callable[[int], int] | None = getattr(libc, "syncfs", None)
    return function
