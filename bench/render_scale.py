"""Render scale: a fleet of N services rendered cold, warm and after one edit.

The fleet is the repository's example specs cloned with unique names (service, job,
deployment: ``o1-preview`` → ``o1-preview-0007``), cycling through them. For each size:

* **cold**: ``obsgen render --skip-promtool`` into an empty repository with an empty cache
  (``$OBSGEN_CACHE_DIR``): everything built, every file written;
* **warm**: the same command again, nothing changed (services reused from disk);
* **fresh clone**: the same command once more with the cache folder deleted: the outputs are
  committed and right, but nothing says so (a fresh clone in CI); every service is built and
  compared with its files, none written;
* **one edit**: one o1-preview clone's spec edited (its error-ratio threshold), then ``obsgen
  render specs/<that>.yaml`` *with* its promtool proof (check + the generated assertions that
  edit can reach), as a developer does; then its availability objective edited, which every
  burn-rate assertion reads.

Every clone is built in full, as any service is. ``--distinct-sizes`` also renders, cold,
fleets in which each clone's availability objective gets its own last digits (no two specs
alike but for the name); ``bench/realistic_fleet.py`` is the realistic fleet.

Each row has wall time, CPU time (user + system of obsgen and every process it started, from
``wait4``) and peak RSS: of the largest single process (``wait4``) and of all of obsgen's
processes together (sampled every 20 ms from ``/proc``). On a shared machine wall time moves
with the load; CPU time does not. ``--baseline REV`` also renders with obsgen as of git
revision REV (exported with ``git archive``), same specs, same machine, in the same run: the
before/after of a change. The promtool proof of each example spec (CPU of ``promtool test
rules`` over its committed test files) is measured too.

Targets: 1,000 specs cold ≤ 10 s wall on 2 cores, linear, peak RSS ≤ 1 GiB; one edit with
promtool ≤ 3 s; the o1-preview proof ≤ 3 s CPU. Prints markdown tables and the command.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import floors
from _common import REPO, command_line, export_paths, machine, machine_speed, markdown_table
from proof_compare import prove_as_render

sys.path.insert(0, str(REPO))
from generator.builders import install_limits  # this checkout's limits
from generator.proof_split import estimated_cost, split_test_file

TARGET_COLD_1000_S = 10.0
TARGET_EDIT_S = 3.0
TARGET_PROOF_CPU_S = 3.0
TARGET_RSS_MIB = 1024
EDITED = "o1-preview"
FRESH_CLONE = "fresh clone (outputs committed, no cache)"
SLO_EDIT = "SLO objective edit + promtool"


def clone_specs(folder: Path, count: int, distinct: bool = False) -> list[Path]:
    """Write ``count`` clones of the example specs into ``folder``; return their paths. With
    ``distinct``, each clone's availability objective also gets its own last digits
    (``99.9`` → ``99.90042``), so that no two specs are alike but for the name."""
    examples = sorted((REPO / "specs").glob("*.yaml"))
    folder.mkdir(parents=True)
    paths = []
    for index in range(count):
        example = examples[index % len(examples)]
        text = example.read_text(encoding="utf-8")
        found = re.search(r"^metadata:\s*\{?\s*name: ([a-z0-9-]+)", text, re.M)
        if found is None:
            raise RuntimeError(f"{example}: no `metadata: name` to clone")
        name = found.group(1)
        text = re.sub(rf"\b{re.escape(name)}\b", f"{name}-{index:04d}", text)
        if distinct:
            text = re.sub(
                r"(name: availability, objective: [0-9]+\.[0-9])", rf"\g<1>{index:04d}", text
            )
        path = folder / f"{example.stem}-{index:04d}.yaml"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def _tree_rss_kib(pid: int) -> int:
    """Resident memory (KiB) of ``pid`` and all its descendants, from /proc."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/status", encoding="ascii") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as handle:
                    todo.extend(int(c) for c in handle.read().split())
        except (OSError, ValueError):
            continue
    return total


@dataclass
class Run:
    """One timed command: wall and CPU seconds, peak RSS (MiB) of one process and of all."""

    wall: float
    cpu: float
    rss_one: float
    rss_all: float


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> Run:
    """Run ``args``; fail with its stderr unless it exits 0."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_kib(proc.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{stderr.decode()[-3000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, peak / 1024)


def obsgen(code: Path | None) -> tuple[list[str], dict[str, str]]:
    """Command and environment running obsgen from ``code`` (None: this checkout). Run it
    outside the checkout: ``python -m`` puts the working directory first on the path."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    return [sys.executable, "-m", "generator", "render"], env


FLEET_SIZES: dict[int, tuple[int, int, int]] = {}
"""Per fleet size (this checkout): fleet overview JSON bytes, its ConfigMap's data bytes and
the annotation bytes a client-side ``kubectl apply`` of that ConfigMap would store."""


def _fleet_sizes(repo: Path) -> tuple[int, int, int]:
    import yaml

    board = (repo / "dashboards" / "fleet-overview.json").read_bytes()
    configmap = yaml.safe_load((repo / "manifests" / "fleet-overview.yaml").read_text("utf-8"))
    return (
        len(board),
        install_limits.configmap_data_bytes(configmap),
        install_limits.client_side_apply_bytes(configmap),
    )


def render_fleet(work: Path, size: int, code: Path | None, label: str) -> dict[str, Run]:
    """Cold, warm and one-edit renders of ``size`` clones with obsgen from ``code``."""
    repo = work / f"{label}-{size}"
    specs = clone_specs(repo / "specs", size)
    command, env = obsgen(code)
    env["OBSGEN_CACHE_DIR"] = str(work / f"cache-{label}-{size}")
    runs = {"cold": timed([*command, "--skip-promtool", "-q"], repo, env)}
    if code is None:
        FLEET_SIZES[size] = _fleet_sizes(repo)
    runs["warm"] = timed([*command, "--skip-promtool", "-q"], repo, env)
    shutil.rmtree(env["OBSGEN_CACHE_DIR"])
    runs[FRESH_CLONE] = timed([*command, "--skip-promtool", "-q"], repo, env)
    edited = next(p for p in specs if p.name.startswith(EDITED))
    edited.write_text(
        edited.read_text(encoding="utf-8").replace("maxRatio: 0.05", "maxRatio: 0.06"),
        encoding="utf-8",
    )
    runs["one edit + promtool"] = timed([*command, "-q", str(edited)], repo, env)
    # The costliest kind of edit: an SLO objective, read by every burn-rate assertion.
    edited.write_text(
        edited.read_text(encoding="utf-8").replace("objective: 99.9,", "objective: 99.5,"),
        encoding="utf-8",
    )
    runs[SLO_EDIT] = timed([*command, "-q", str(edited)], repo, env)
    return runs


def render_distinct(work: Path, size: int) -> Run:
    """A cold render of ``size`` distinct clones."""
    repo = work / f"distinct-{size}"
    clone_specs(repo / "specs", size, distinct=True)
    command, env = obsgen(None)
    env["OBSGEN_CACHE_DIR"] = str(work / f"cache-distinct-{size}")
    return timed([*command, "--skip-promtool", "-q"], repo, env)


def _promtool_cpu(files: list[Path], env: dict[str, str] | None = None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [shutil.which("promtool") or "promtool", "test", "rules", *map(str, files)],
        check=True,
        capture_output=True,
        env=None if env is None else {**os.environ, **env},
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _children_cpu(run: Callable[[], object]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def proof_cpu(example: str) -> tuple[float, float, float, int, int, int]:
    """CPU seconds of ``promtool test rules`` over an example's committed test files as they
    are, and split by the rules each test group observes
    (:func:`generator.proof_split.split_test_file`) in one process; and of the proof as
    ``obsgen render`` runs it: ``promtool check rules`` on the rule file, then the split
    files through :func:`generator.promtool.test_rules` (one promtool per core, parts shared
    out by estimated cost, Go's collector held back); the two file counts; and the rule
    evaluations the split files ask for (:func:`generator.proof_split.estimated_cost`)."""
    with tempfile.TemporaryDirectory(prefix="obsgen-bench-proof-") as tmp:
        folder = Path(tmp)
        for path in (REPO / "rules").glob(f"{example}.*"):
            shutil.copy(path, folder)
        files = sorted(folder.glob(f"{example}.*test.yaml"))
        whole = _promtool_cpu(files)
        parts = [part for path in files for part in split_test_file(path)]
        split = _promtool_cpu(parts)
        rendered = _children_cpu(lambda: prove_as_render(folder, example, parts))
        evaluations = sum(estimated_cost(part) for part in parts)
    return whole, split, rendered, len(files), len(parts), evaluations


def _baseline_flags(code: Path) -> bool:
    """True when the baseline obsgen knows ``-q`` (newer renders do)."""
    command, env = obsgen(code)
    help_text = subprocess.run(
        [*command, "--help"], cwd=code, env=env, capture_output=True, text=True, check=False
    ).stdout
    return "--quiet" in help_text


def main(argv: list[str] | None = None) -> int:
    """Render each size (and the baseline's), print the tables and the verdicts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--baseline", help="git revision to render the same fleets with")
    parser.add_argument(
        "--baseline-sizes",
        type=int,
        nargs="+",
        default=[100],
        help="sizes rendered with the baseline (an old render of 1,000 specs takes minutes)",
    )
    parser.add_argument(
        "--distinct-sizes",
        type=int,
        nargs="+",
        default=[100],
        help="sizes rendered cold with no two specs alike but for the name",
    )
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="obsgen-bench-render-"))
    try:
        rows = []
        results: dict[tuple[str, int], dict[str, Run]] = {}
        builds: list[tuple[str, Path | None, list[int]]] = [("this", None, args.sizes)]
        if args.baseline:
            exported = export_paths(args.baseline, work / "baseline", "generator")
            builds.insert(0, (f"baseline {args.baseline}", exported, args.baseline_sizes))
        for label, code, sizes in builds:
            for size in sizes:
                if code is not None and not _baseline_flags(code):
                    runs = _render_old(work, size, code)
                else:
                    runs = render_fleet(work, size, code, label.split()[0])
                results[(label, size)] = runs
                for mode, run in runs.items():
                    rows.append(
                        (
                            label,
                            size,
                            mode,
                            f"{run.wall:.2f}",
                            f"{run.cpu:.2f}",
                            f"{run.cpu / size * 1000:.1f}" if "edit" not in mode else "",
                            f"{run.rss_one:.0f}",
                            f"{run.rss_all:.0f}",
                        )
                    )
        for size in args.distinct_sizes:
            run = render_distinct(work, size)
            rows.append(
                (
                    "this, distinct specs",
                    size,
                    "cold",
                    f"{run.wall:.2f}",
                    f"{run.cpu:.2f}",
                    f"{run.cpu / size * 1000:.1f}",
                    f"{run.rss_one:.0f}",
                    f"{run.rss_all:.0f}",
                )
            )
        print(f"# Render scale\n\nMachine: {machine()}; load average before: {_load()}")
        print(f"Machine speed: {machine_speed()}\n")
        print(
            markdown_table(
                [
                    "obsgen",
                    "specs",
                    "render",
                    "wall (s)",
                    "CPU (s)",
                    "CPU ms per spec",
                    "peak RSS, one process (MiB)",
                    "peak RSS, all processes (MiB)",
                ],
                rows,
            )
        )
        print()
        print(
            markdown_table(
                [
                    "specs",
                    "fleet overview JSON (bytes)",
                    f"its ConfigMap data (limit {install_limits.CONFIGMAP_DATA_LIMIT:,})",
                    "client-side kubectl apply annotations "
                    f"(limit {install_limits.ANNOTATIONS_LIMIT:,})",
                ],
                [
                    (f"{size:,}", f"{board:,}", f"{data:,}", f"{applied:,}")
                    for size, (board, data, applied) in sorted(FLEET_SIZES.items())
                ],
            )
        )
        print()
        proofs = []
        evaluations: dict[str, int] = {}
        for example in sorted(p.stem.split(".")[0] for p in (REPO / "rules").glob("*.rules.yaml")):
            whole, split, as_render, files, parts, evaluations[example] = proof_cpu(example)
            proofs.append(
                (example, files, f"{whole:.2f}", parts, f"{split:.2f}", f"{as_render:.2f}")
            )
        print(
            markdown_table(
                [
                    "service",
                    "test files",
                    "promtool test rules CPU, files as committed (s)",
                    "split files",
                    "CPU split by observed rules, one process (s)",
                    "CPU as render runs it: check, then the split files on every core, "
                    "Go GC held back (s)",
                ],
                proofs,
            )
        )
        print()
        print(_floors(work, max(args.sizes), evaluations))
        print()
        print(_verdicts(results, proofs))
        print()
        print(f"Command: `{command_line()}`")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _floors(work: Path, size: int, evaluations: dict[str, int]) -> str:
    """The floors table (:mod:`floors`): writing the ``size`` fleet's files without
    rendering, and promtool's cost per rule evaluation times each proof's evaluations."""
    files, size_bytes, wall, cpu, synced = floors.write_floor(work / f"this-{size}", work)
    per_ms = floors.promtool_evaluation_ms(REPO / "rules" / f"{EDITED}.rules.yaml")
    rows = [
        (
            f"write {files:,} files of the {size:,}-spec fleet's sizes ({size_bytes / 1e9:.2f} GB) "
            "from 2 processes, then sync",
            f"{wall:.2f} s wall + {synced:.2f} s sync",
            f"{cpu:.2f} s",
        ),
        (
            "promtool, one rule evaluation (one input series)",
            "",
            f"{per_ms:.3f} ms",
        ),
    ]
    rows += [
        (
            f"{name}'s proof: {count:,} rule evaluations at that cost",
            "",
            f"{count * per_ms / 1000:.2f} s",
        )
        for name, count in sorted(evaluations.items())
    ]
    return markdown_table(["floor", "wall", "CPU"], rows)


def _render_old(work: Path, size: int, code: Path) -> dict[str, Run]:
    """A baseline without ``-q`` or a cache: cold and warm only (it re-renders everything)."""
    repo = work / f"baseline-{size}"
    clone_specs(repo / "specs", size)
    command, env = obsgen(code)
    runs = {"cold": timed([*command, "--skip-promtool"], repo, env)}
    runs["warm"] = timed([*command, "--skip-promtool"], repo, env)
    return runs


def _load() -> str:
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def _verdicts(
    results: dict[tuple[str, int], dict[str, Run]],
    proofs: list[tuple[str, int, str, int, str, str]],
) -> str:
    lines = []
    this = {size: runs for (label, size), runs in results.items() if label == "this"}
    if 1000 in this:
        cold = this[1000]["cold"]
        lines.append(
            f"- 1,000 specs cold ≤ {TARGET_COLD_1000_S:g} s wall: "
            f"**{'met' if cold.wall <= TARGET_COLD_1000_S else 'missed'}** "
            f"({cold.wall:.1f} s wall, {cold.cpu:.1f} s CPU: {cold.cpu / 2:.1f} s on 2 idle cores)"
        )
        rss = max(cold.rss_all, this[1000]["warm"].rss_all)
        lines.append(
            f"- peak RSS ≤ {TARGET_RSS_MIB} MiB: **{'met' if rss <= TARGET_RSS_MIB else 'missed'}** "
            f"({rss:.0f} MiB, all processes)"
        )
        fresh = this[1000][FRESH_CLONE]
        lines.append(
            f"- 1,000 specs, {FRESH_CLONE} (no target of its own): {fresh.wall:.1f} s wall, "
            f"{fresh.cpu:.1f} s CPU"
        )
        edit = this[1000]["one edit + promtool"]
        lines.append(
            f"- one edit with its promtool proof ≤ {TARGET_EDIT_S:g} s: "
            f"**{'met' if edit.wall <= TARGET_EDIT_S else 'missed'}** "
            f"({edit.wall:.1f} s wall, {edit.cpu:.1f} s CPU; an SLO objective edit, which "
            f"every burn-rate assertion reads: {this[1000][SLO_EDIT].wall:.1f} s wall)"
        )
    sizes = sorted(this)
    for small, big in itertools.pairwise(sizes):
        a, b = this[small]["cold"].cpu, this[big]["cold"].cpu
        lines.append(
            f"- linear: {small} → {big} specs (×{big / small:g}) costs ×{b / a:.2f} CPU cold"
        )
    for name, _, _, _, _, cpu in proofs:
        if name == EDITED:
            lines.append(
                f"- {EDITED} promtool proof ≤ {TARGET_PROOF_CPU_S:g} s CPU: "
                f"**{'met' if float(cpu) <= TARGET_PROOF_CPU_S else 'missed'}** ({cpu} s)"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
