"""Subprocess wrapper around the real ``promtool`` binary.

promtool is found through ``$PROMTOOL``, then ``PATH``. All rule files of one render are
checked in a single ``promtool check rules`` call (one process per render, not per file).
Its output is turned into :class:`~generator.errors.Diagnostic` values naming file and rule.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from generator.errors import Diagnostic, ObsgenError, capped_list

INSTALL_HINT = (
    "promtool not found: set $PROMTOOL to its path or install it "
    "(Debian/Ubuntu: `sudo apt-get install -y prometheus`; `make render` does this when run as root)"
)

# "rules/x.yaml: 12:7: group "g", rule 3, "ModelFoo": could not parse expression: ..."
_RULE_ERROR = re.compile(r"^(?P<file>[^:]+): (?:(?P<line>\d+):(?P<col>\d+): )?(?P<msg>.*)$")
_CHECKING = re.compile(r"^Checking (?P<file>.+)$")


@dataclass(frozen=True)
class PromtoolResult:
    """Outcome of one promtool invocation.

    Attributes:
        ok: True when promtool exited 0.
        output: stdout and stderr, joined.
        diagnostics: problems parsed from the output (empty when ``ok``).
    """

    ok: bool
    output: str
    diagnostics: tuple[Diagnostic, ...]


def find_promtool() -> str:
    """Return the promtool executable to run.

    Raises:
        ObsgenError: promtool is neither at ``$PROMTOOL`` nor on ``PATH`` (the message says
            how to install it).
    """
    configured = os.environ.get("PROMTOOL")
    if configured:
        if Path(configured).is_file() and os.access(configured, os.X_OK):
            return configured
        raise ObsgenError(
            [Diagnostic("$PROMTOOL", "", f"{configured!r} is not an executable file")]
        )
    found = shutil.which("promtool")
    if found is None:
        raise ObsgenError([Diagnostic("promtool", "", INSTALL_HINT)])
    return found


_VERSION = re.compile(r"\bversion (\d+)\.(\d+)\.(\d+)")
UTF8_SINCE = (3, 0, 0)
"""The first promtool release whose PromQL parser reads quoted UTF-8 metric and label names
(``{"gen_ai.server.request.duration_seconds_bucket"}``): Prometheus 3.0."""


@functools.cache
def version(tool: str) -> tuple[int, int, int] | None:
    """``(major, minor, patch)`` of the promtool at ``tool`` from ``promtool --version``
    (``promtool, version 2.42.0+ds …``), or None when it prints no version."""
    try:
        proc = subprocess.run(
            [tool, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = _VERSION.search(proc.stdout + proc.stderr)
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def reads_utf8_names(tool: str) -> bool:
    """True when the promtool at ``tool`` parses Prometheus 3's quoted names (≥ 3.0)."""
    found = version(tool)
    return found is not None and found >= UTF8_SINCE


TEST_GC_ENV = {"GOGC": "off", "GOMEMLIMIT": "128MiB"}
"""Go runtime settings of ``promtool test rules`` runs. Go's collector takes about a fifth of
a short run's CPU (the o1-preview proof's largest part: 1.75 s → 1.40 s of CPU). These runs
hold a few MiB of series, so collecting only near a heap of 128 MiB costs that memory alone.
A caller's own ``$GOGC`` or ``$GOMEMLIMIT`` is kept instead."""


def _with_defaults(env: dict[str, str] | None) -> dict[str, str] | None:
    """The environment with ``env`` added, unless the caller's sets any of its variables."""
    if env is None or any(name in os.environ for name in env):
        return None  # inherit as it is
    return {**os.environ, **env}


def _run(
    args: Sequence[str],
    cwd: Path | None = None,
    timeout: float = 300,
    env: dict[str, str] | None = None,
) -> tuple[int, str]:
    # One pipe for both streams: promtool writes "Checking <file>" to stdout and the file's
    # errors to stderr; separate pipes lose the order, so errors without a file prefix
    # (lint errors, YAML errors) would be blamed on the last file checked.
    try:
        proc = subprocess.run(
            [find_promtool(), *args],
            cwd=cwd,
            env=_with_defaults(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ObsgenError(
            [
                Diagnostic(
                    "promtool",
                    "",
                    f"`promtool {args[0]} {args[1]}` did not finish within {timeout:.0f} s",
                )
            ],
            exit_code=1,
        ) from None
    return proc.returncode, proc.stdout


def _parse_check_output(output: str, display: dict[str, str]) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    current = ""
    for raw in output.splitlines():
        line = raw.strip()
        if not line or line.startswith("SUCCESS") or line == "FAILED:":
            continue
        checking = _CHECKING.match(line)
        if checking:
            current = checking.group("file")
            continue
        match = _RULE_ERROR.match(line)
        if match and match.group("file") in display:
            file = match.group("file")
            where = f"line {match.group('line')}" if match.group("line") else ""
            diagnostics.append(Diagnostic(display[file], where, match.group("msg")))
        else:
            diagnostics.append(Diagnostic(display.get(current, current or "promtool"), "", line))
    return diagnostics


def check_rules(
    files: Sequence[Path], display_names: Sequence[str] | None = None
) -> PromtoolResult:
    """Run ``promtool check rules --lint=all --lint-fatal`` once over ``files``.

    Args:
        files: rule files (plain Prometheus rule-file format).
        display_names: names to report instead of the paths (same length as ``files``),
            e.g. the repository path when checking a temp copy.

    Returns:
        A :class:`PromtoolResult`; ``diagnostics`` name the file and rule of each error.

    Raises:
        ObsgenError: promtool is missing.
    """
    if not files:
        return PromtoolResult(True, "", ())
    names = list(display_names) if display_names is not None else [str(f) for f in files]
    display = {str(f): n for f, n in zip(files, names, strict=True)}
    code, output = _run(["check", "rules", "--lint=all", "--lint-fatal", *map(str, files)])
    if code == 0:
        return PromtoolResult(True, output, ())
    diagnostics = _parse_check_output(output, display) or [
        Diagnostic(capped_list(names), "", output.strip() or f"promtool exited {code}")
    ]
    return PromtoolResult(False, output, tuple(diagnostics))


def _chunks(files: Sequence[Path], count: int, cost: Callable[[Path], int]) -> list[list[Path]]:
    """``files`` in at most ``count`` chunks balanced by ``cost`` (costliest first, each to
    the lightest chunk so far), costliest chunk first."""
    chunks: list[list[Path]] = [[] for _ in range(max(1, min(count, len(files))))]
    loads = [0] * len(chunks)
    costs = {path: cost(path) for path in files}
    for path in sorted(files, key=lambda p: costs[p], reverse=True):
        lightest = loads.index(min(loads))
        chunks[lightest].append(path)
        loads[lightest] += costs[path]
    order = sorted(range(len(chunks)), key=lambda i: -loads[i])
    return [chunks[i] for i in order if chunks[i]]


def _file_size(path: Path) -> int:
    return path.stat().st_size


# Chunks per core: up to 8 when there are many files (the cores stay busy to the end and
# progress moves), fewer for a few: each promtool process has a start-up cost, and a
# one-service proof (16–19 parts) waited least in two chunks per core (the cost estimate is
# rough: one chunk per core left a core idle near the end).
_CHUNKS_PER_WORKER = 8
_FILES_PER_CHUNK = 4


def test_rules(
    test_files: Sequence[Path],
    display_names: Sequence[str] | None = None,
    on_done: Callable[[int], None] | None = None,
    cost: Callable[[Path], int] = _file_size,
) -> PromtoolResult:
    """Run ``promtool test rules`` over ``test_files``, on every CPU core.

    Rule files named inside a test file are resolved relative to that test file. promtool
    tests one file after another on one core, so the files are split into chunks balanced by
    ``cost`` (default: file size; :func:`generator.proof_split.estimated_cost` for proof
    parts), run by one promtool process each, as many at a time as there are cores (with Go's
    collector held back to a 128 MiB heap, unless ``$GOGC`` or ``$GOMEMLIMIT`` is set): a
    chunk per 4 files per core, at least one and at most 8 chunks per core. Each
    process may run for 2 minutes plus 2 minutes per file it tests. ``on_done`` is called
    with the number of files of each chunk that finished.

    Returns:
        A :class:`PromtoolResult`; on failure one diagnostic per failing test file, holding
        promtool's explanation (expected vs got alerts or samples).

    Raises:
        ObsgenError: promtool is missing.
    """
    if not test_files:
        return PromtoolResult(True, "", ())
    names = list(display_names) if display_names is not None else [str(f) for f in test_files]
    workers = max(1, min(os.cpu_count() or 1, len(test_files)))
    per_worker = max(1, min(_CHUNKS_PER_WORKER, len(test_files) // (workers * _FILES_PER_CHUNK)))
    chunks = _chunks(test_files, workers * per_worker, cost)

    def run_chunk(chunk: list[Path]) -> tuple[int, str]:
        result = _run(
            ["test", "rules", *map(str, chunk)], timeout=120 + 120 * len(chunk), env=TEST_GC_ENV
        )
        if on_done is not None:
            on_done(len(chunk))
        return result

    with ThreadPoolExecutor(max_workers=workers) as pool:
        runs = list(pool.map(run_chunk, chunks))
    code = max(c for c, _ in runs)
    output = "".join(out for _, out in runs)
    if code == 0:
        return PromtoolResult(True, output, ())
    failed: list[Diagnostic] = []
    # One block per file: promtool 2 heads it "Unit Testing:  <file>", promtool 3 "Processing
    # test file: <file>".
    blocks = re.split(r"(?m)^(?:Unit Testing:|Processing test file:)\s*", output)
    for path, name in zip(test_files, names, strict=True):
        for block in blocks:
            if block.startswith(str(path)) and "FAILED" in block:
                failed.append(Diagnostic(name, "", block[len(str(path)) :].strip()))
    if not failed:
        failed.append(Diagnostic(capped_list(names), "", output.strip()))
    return PromtoolResult(False, output, tuple(failed))


test_rules.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
