"""Every file of a render, over the services' own files held in memory or as files
(:class:`~generator.fleet.filebacked.FileBacked`) and the fleet-wide ones: what the writer
writes, and what of it may be left in place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from generator.core.engine import Files
from generator.fleet.filebacked import FileBacked, Identity, kept_identity_of, size_of, spooled_file


def only(part: Mapping[str, str], wanted: Callable[[str], bool]) -> Mapping[str, str]:
    """The files of ``part`` (a dict, :class:`FileBacked` or :class:`BundleFiles`) whose path
    ``wanted`` accepts, held as ``part`` holds them."""
    if isinstance(part, BundleFiles):
        return BundleFiles([only(p, wanted) for p in part._parts])
    if isinstance(part, FileBacked):
        return FileBacked(
            part.base,
            {rel: found for rel, found in part.identities.items() if wanted(rel)},
            part.on_disk,
            {rel: size for rel, size in part.sizes.items() if wanted(rel)},
        )
    return {rel: part[rel] for rel in part if wanted(rel)}


class BundleFiles(Files):
    """:class:`generator.core.engine.Files` whose parts may be held as files: every file of a
    render by repository path (sorted), over the services' own files (in memory or
    :class:`FileBacked`) and the fleet-wide ones.

    Raises (on construction):
        ValueError: two parts produce the same path.
    """

    def spooled(self, rel: str) -> str | None:
        """The spooled file holding ``rel`` (:func:`generator.fleet.filebacked.spooled_file`)."""
        return spooled_file(self._where[rel], rel)

    def size(self, rel: str) -> int:
        """Size in bytes of ``rel`` (:func:`generator.fleet.filebacked.size_of`)."""
        return size_of(self._where[rel], rel)

    def kept_identity(self, rel: str) -> Identity | None:
        """The identity ``rel`` must still have (:func:`generator.fleet.filebacked.kept_identity_of`)."""
        return kept_identity_of(self._where[rel], rel)

    def moved_in_place(self) -> list[str]:
        """The files held in place on disk (found unchanged there) that changed since, sorted:
        edited, replaced or deleted during the render (:meth:`FileBacked.moved`)."""
        found: list[str] = []
        for part in self._parts:
            if isinstance(part, BundleFiles):
                found += part.moved_in_place()
            elif isinstance(part, FileBacked):
                found += part.moved()
        return sorted(found)

    def to_write(self) -> BundleFiles:
        """The files that may differ from the repository: all but those in place on disk
        (:meth:`generator.fleet.cache.OutputCache.get` or
        :func:`generator.fleet.filebacked.spool_changes` found them unchanged there)."""
        return BundleFiles(self._changeable())

    def _changeable(self) -> Iterator[Mapping[str, str]]:
        for part in self._parts:
            if isinstance(part, BundleFiles):
                yield from part._changeable()
            elif not (isinstance(part, FileBacked) and part.on_disk):
                yield part
