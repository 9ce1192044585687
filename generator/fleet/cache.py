"""Content cache of a repository's rendered services: reuse unchanged outputs and proofs.

The key, the file identity and where records live: docs/fleet.md, "The cache: what a record
holds".
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from generator import __version__
from generator.errors import Diagnostic, Level
from generator.fleet.filebacked import FileBacked, identity, kept_identity_of, size_of
from generator.plan import ServicePlan

FORMAT = 2
# Libraries whose output obsgen writes verbatim: a new release may change a byte.
_LIBRARIES = ("PyYAML", "grafanalib", "Jinja2", "pydantic")


def cache_folder() -> Path:
    """Where the records live (see the module docstring)."""
    configured = os.environ.get("OBSGEN_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "obsgen"


@functools.cache
def code_digest() -> str:
    """SHA-256 over obsgen's version, every file of the ``generator`` package (code,
    templates, preset data) and the versions of :data:`_LIBRARIES`."""
    digest = hashlib.sha256(f"{FORMAT}\0{__version__}\0".encode())
    package = Path(__file__).resolve().parent.parent  # generator/, not generator/fleet/
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    for name in _LIBRARIES:
        try:
            digest.update(f"{name}={importlib.metadata.version(name)}\0".encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(f"{name}=-\0".encode())
    return digest.hexdigest()


def plan_digest(plan: ServicePlan) -> str:
    """SHA-256 of ``repr(plan)``: every field of the resolved spec. Kept on the plan, so that
    loading computes it once, in the loader's worker processes, not twice in the parent
    (checking the cache, then recording)."""
    return plan.derive("plan_digest", lambda: hashlib.sha256(repr(plan).encode()).hexdigest())


def proof_key(outputs: Mapping[str, str], service: str, promtool: str) -> str:
    """Hash of ``service``'s rule and test files in ``outputs`` and of the ``promtool`` binary
    (path, size, mtime) that tests them."""
    digest = hashlib.sha256(code_digest().encode())
    digest.update(f"{promtool}\0{identity(Path(promtool))}\0".encode())
    for path in sorted(p for p in outputs if p.startswith(f"rules/{service}.")):
        digest.update(path.encode() + b"\0" + outputs[path].encode() + b"\0")
    return digest.hexdigest()


class OutputCache:
    """The records of one repository root (see the module docstring).

    Args:
        root: the repository the outputs are written into.
        folder: where records live (default :func:`cache_folder`).
    """

    def __init__(self, root: Path, folder: Path | None = None) -> None:
        self.root = root.resolve()
        tag = hashlib.sha256(str(self.root).encode()).hexdigest()[:16]
        self.file = (folder or cache_folder()) / f"repo-{tag}.json"
        self._services: dict[str, dict[str, Any]] = {}
        self._proofs: dict[str, str] = {}
        try:
            saved = json.loads(self.file.read_text(encoding="utf-8"))
            if saved.get("format") == FORMAT and saved.get("code") == code_digest():
                self._services = dict(saved["services"])
                self._proofs = dict(saved["proofs"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
        self._dirty = False

    @staticmethod
    def key(plan: ServicePlan, variant: str) -> str:
        """The cache key of ``plan``'s own outputs rendered with options ``variant``
        (:func:`generator.core.outputs.variant`)."""
        text = f"{code_digest()}\0{variant}\0{plan_digest(plan)}"
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, service: str, key: str) -> FileBacked | None:
        """``service``'s outputs recorded under ``key``, as the files in the repository (read
        when asked for), or None when there is no such record or one of its files changed
        since."""
        entry = self._services.get(service)
        if entry is None or entry.get("key") != key:
            return None
        files = entry["files"]
        if any(identity(self.root / rel) != recorded for rel, recorded in files.items()):
            return None
        return FileBacked(self.root, files, on_disk=True)

    def warnings(self, service: str) -> list[Diagnostic]:
        """The warnings recorded with ``service``'s outputs (a reused service repeats them)."""
        entry = self._services.get(service) or {}
        try:
            return [
                Diagnostic(file, path, message, Level(level))
                for file, path, message, level in entry.get("warnings", [])
            ]
        except (TypeError, ValueError):
            return []

    def remember(
        self,
        keys: Mapping[str, str],
        outputs: Mapping[str, Mapping[str, str]],
        warnings: Mapping[str, list[Diagnostic]] | None = None,
    ) -> None:
        """Record each service's key with its files as now on disk (call after writing).

        ``keys``: key by service stem; ``outputs``: each service's own files by stem;
        ``warnings``: each service's warnings, given again when it is reused. A service whose
        files are not all on disk with the rendered content is forgotten.
        """
        for name, key in keys.items():
            own = outputs[name]
            entry = self._services.get(name)
            if (
                isinstance(own, FileBacked)
                and own.on_disk
                and entry
                and (entry["key"], entry["files"]) == (key, own.identities)
            ):
                continue  # reused as recorded
            files: dict[str, list[int]] = {}
            for rel in own:
                found = identity(self.root / rel)
                kept = kept_identity_of(own, rel)
                if found is None or found[0] != size_of(own, rel) or kept not in (None, found):
                    files = {}  # a file kept in place changed after it was compared
                    break
                files[rel] = found
            if files:
                found_warnings = (warnings or {}).get(name, [])
                self._services[name] = {
                    "key": key,
                    "files": files,
                    "warnings": [[w.file, w.path, w.message, str(w.level)] for w in found_warnings],
                }
            else:
                self._services.pop(name, None)
            self._dirty = True

    def forget_others(self, names: Iterable[str]) -> None:
        """Drop the records of services not in ``names`` (after a full render)."""
        keep = set(names)
        for table in (self._services, self._proofs):
            for name in [n for n in table if n not in keep]:
                del table[name]
                self._dirty = True

    def proven(self, service: str, key: str) -> bool:
        """True when ``promtool test rules`` passed for ``service`` with proof ``key``."""
        return self._proofs.get(service) == key

    def prove(self, service: str, key: str) -> None:
        """Record that ``service``'s files with proof ``key`` passed ``promtool test rules``."""
        self._proofs[service] = key
        self._dirty = True

    def save(self) -> None:
        """Write the records (atomically; a failure only loses the cache)."""
        if not self._dirty:
            return
        data = {
            "format": FORMAT,
            "code": code_digest(),
            "root": str(self.root),
            "services": self._services,
            "proofs": self._proofs,
        }
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".repo-", suffix=".tmp", dir=self.file.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    # One string: json.dump writes the 1,000 services' records piece by piece.
                    handle.write(json.dumps(data, separators=(",", ":")))
                os.replace(tmp, self.file)
            finally:
                Path(tmp).unlink(missing_ok=True)
        except OSError:
            return
        self._dirty = False
