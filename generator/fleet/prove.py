"""The core's proof (:mod:`generator.core.prove`), cheaper: work is saved only where the
verdict cannot change (files unchanged on disk, proofs the cache records for byte-identical
files), and the phases shown on a terminal.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from generator import promtool
from generator.builders import alertmanager
from generator.core import prove
from generator.errors import Diagnostic
from generator.fleet.cache import OutputCache, proof_key
from generator.fleet.filebacked import FileBacked
from generator.fleet.progress import Progress
from generator.proof_split import RuleFiles, assertion_keys


def promtool_problems(
    outputs: Mapping[str, str],
    root: Path | None = None,
    services: Mapping[str, Mapping[str, str]] | None = None,
    cache: OutputCache | None = None,
    progress: Progress | None = None,
    unproved: Collection[str] = (),
) -> list[Diagnostic]:
    """:func:`generator.core.prove.promtool_problems`, with the same verdict for less work.

    A service's tests are not run again when its rule and test files are byte-identical to
    those on disk under ``root`` (they passed when that render wrote them; the test suite
    re-runs every committed test file), or when ``cache`` holds a passed proof of exactly
    these files (:func:`generator.fleet.cache.proof_key`); proofs that pass are recorded there.
    ``services`` (each service's own files by stem) saves finding them in ``outputs``.
    ``promtool check rules`` runs over every rule file but those of services whose proof the
    cache records for these very files and this promtool (that proof checked them: at 1,000
    services reused from the cache, 22 s of checking saved). With ``cache``, an assertion
    (one ``alert_rule_test`` or ``promql_expr_test`` entry) whose inputs are those of an
    assertion of the service's test files on disk under ``root`` is not run again: those
    files passed when a render wrote them, and the test suite re-runs them. ``progress``
    shows the test parts as they finish.

    Raises:
        ObsgenError: promtool is missing.
    """
    rules = sorted(p for p in outputs if prove.is_rule_file(p))
    if services is None:
        services = _by_service(outputs)
    tool = promtool.find_promtool() if cache is not None else ""
    proofs: dict[str, str] = {}
    to_prove: list[str] = []
    proven: set[str] = set()  # checked and tested by this promtool already, as the cache says
    for name, own in sorted(services.items()):
        if name in unproved:
            continue
        mine = [p for p in own if prove.is_test_file(p)]
        key = proof_key(own, name, tool) if cache is not None and mine else None
        if cache is not None and key is not None and cache.proven(name, key):
            proven.add(name)
            continue
        if not mine or (isinstance(own, FileBacked) and own.on_disk):
            continue  # the files on disk, unchanged since a render wrote them
        if root is not None and _unchanged_on_disk(own, root, name):
            continue
        if key is not None:
            proofs[name] = key
        to_prove.append(name)
    skipped = {*proven, *unproved}
    rules = [r for r in rules if prove.service_of(r) not in skipped]
    if not rules:
        return []
    owner = {p: name for name in to_prove for p in services[name] if prove.is_test_file(p)}
    tests = sorted(owner)
    # Assertions of the files on disk passed when a render wrote them: only those whose
    # inputs changed run again (generator/proof_split.py; --no-cache runs every one).
    passed: dict[str, set[str]] = {}
    if root is not None and cache is not None:
        on_disk: RuleFiles = {}
        for rel in tests:
            passed.setdefault(owner[rel], set()).update(assertion_keys(root / rel, on_disk))
    proof = prove.run_promtool(
        outputs,
        rules,
        tests,
        {t: passed[owner[t]] for t in tests if owner[t] in passed},
        (lambda n: progress.phase("promtool test rules", n)) if progress is not None else None,
        progress.advance if progress is not None else None,
    )
    if proof.ok and cache is not None:
        for name, key in proofs.items():
            cache.prove(name, key)
    return proof.diagnostics


def _by_service(outputs: Mapping[str, str]) -> dict[str, Mapping[str, str]]:
    """Each service's rule and test files, by the service name in ``rules/<service>.…``."""
    found: dict[str, dict[str, str]] = {}
    for path, text in outputs.items():
        if path.startswith("rules/") and path.endswith(".yaml"):
            found.setdefault(prove.service_of(path), {})[path] = text
    return dict(found)


def _unchanged_on_disk(own: Mapping[str, str], root: Path, service: str) -> bool:
    """True when every ``rules/<service>.*`` file of ``own`` equals the file on disk."""
    mine = [p for p in own if p.startswith(f"rules/{service}.")]
    for rel in mine:
        path = root / rel
        try:
            if path.read_text(encoding="utf-8") != own[rel]:
                return False
        except (OSError, UnicodeDecodeError):
            return False
    return bool(mine)


def amtool_problems(outputs: Mapping[str, str], root: Path | None = None) -> list[Diagnostic]:
    """:func:`generator.core.prove.amtool_problems`; with ``root``, the route tests are
    skipped when the configuration and the tests are byte-identical to those on disk (they
    passed when that render wrote them; the test suite re-runs them). ``check-config``
    always runs.

    Raises:
        ObsgenError: amtool is missing.
    """
    paths = (alertmanager.CONFIG_FILE, alertmanager.ROUTE_TESTS_FILE)
    unchanged = (
        root is not None
        and all(p in outputs for p in paths)
        and all(
            (root / p).is_file() and (root / p).read_text(encoding="utf-8") == outputs[p]
            for p in paths
        )
    )
    return prove.amtool_problems(outputs, route_tests=not unchanged)
