"""Realistic fleet: N distinct services rendered cold, warm and after a one-spec edit.

The fleet is :func:`_fleet_specs.realistic_specs` (deterministic from ``--seed``), rendered
with ``obsgen render --skip-promtool -q`` into an empty repository and cache. Rows: wall, CPU
(obsgen and its children, ``wait4``), peak RSS (one process; all of obsgen's), then bytes and
files per service by folder and install path. ``--install`` / ``--outputs`` write an
``obsgen.yaml`` first (docs/config.md). ``--prove N``: N services cold *with* the proof (tests
generated in a temporary folder, run by ``$PROMTOOL``), then after a one-spec edit. Targets:
1,000 services cold ≤ 40 s wall on 2 cores, linear, peak ≤ 1 GiB; ≤ 300 KB per service."""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import command_line, machine, markdown_table
from _fleet_specs import realistic_specs
from render_scale import Run, _load, obsgen, timed

TARGET_1000_S = 40.0
TARGET_RSS_MIB = 1024
TARGET_BYTES_PER_SERVICE = 300_000


def tree_sizes(repo: Path) -> dict[str, tuple[int, int]]:
    """Bytes and files under ``repo`` by top-level folder (``obsgen.yaml`` and specs/ left
    out: the user writes those)."""
    sizes: dict[str, tuple[int, int]] = {}
    for path in repo.rglob("*"):
        if not path.is_file():
            continue
        top = path.relative_to(repo).parts[0]
        if top in ("specs", "obsgen.yaml"):
            continue
        size, count = sizes.get(top, (0, 0))
        sizes[top] = (size + path.stat().st_size, count + 1)
    return dict(sorted(sizes.items()))


def kind_sizes(repo: Path) -> dict[str, int]:
    """Bytes under ``repo`` by install path (:func:`generator.naming.output_kind`: the promtool
    tests apart from the rule files, the per-service Helm values apart from the fleet's)."""
    from generator.naming import OUTPUT_DIRS, output_kind

    sizes: dict[str, int] = {}
    for top in OUTPUT_DIRS:
        for path in (repo / top).rglob("*"):
            if path.is_file():
                kind = output_kind(path.relative_to(repo).as_posix())
                sizes[kind] = sizes.get(kind, 0) + path.stat().st_size
    return dict(sorted(sizes.items()))


def main(argv: list[str] | None = None) -> int:
    """Render each size cold and warm; print the tables, the verdicts and the command."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100])
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--outputs", nargs="+", help="render.outputs of obsgen.yaml")
    parser.add_argument(
        "--install", choices=("rules", "manifests", "helm"), help="render.install of obsgen.yaml"
    )
    parser.add_argument(
        "--prove", type=int, default=0, metavar="N", help="also time a proving render of N"
    )
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="obsgen-bench-realistic-"))
    rows, folders, verdicts = [], [], []
    try:
        for size in args.sizes:
            repo = work / f"fleet-{size}"
            realistic_specs(repo / "specs", size, args.seed)
            if args.outputs:
                (repo / "obsgen.yaml").write_text(
                    "render:\n  outputs: [" + ", ".join(args.outputs) + "]\n", encoding="utf-8"
                )
            elif args.install:
                (repo / "obsgen.yaml").write_text(
                    f"render:\n  install: {args.install}\n", encoding="utf-8"
                )
            command, env = obsgen(None)
            env["OBSGEN_CACHE_DIR"] = str(work / f"cache-{size}")
            load_before = _load()
            cold = timed([*command, "--skip-promtool", "-q"], repo, env)
            sizes = tree_sizes(repo)
            kinds = kind_sizes(repo)
            warm = timed([*command, "--skip-promtool", "-q"], repo, env)
            edit_one_spec(repo)
            edited = timed([*command, "--skip-promtool", "-q"], repo, env)
            loads = f"load average {load_before} before, {_load()} after"
            total = sum(b for b, _ in sizes.values())
            files = sum(n for _, n in sizes.values())
            for mode, run in (("cold", cold), ("warm", warm), ("one spec edited", edited)):
                rows.append(time_row(size, mode, run))
            folders.append(
                (
                    f"{size:,}",
                    f"{total:,}",
                    f"{files:,}",
                    f"{total / size / 1000:.0f}",
                    f"{files / size:.1f}",
                    ", ".join(f"{top} {b / size / 1000:.0f}" for top, (b, _) in sizes.items()),
                    ", ".join(f"{kind} {b / size / 1000:.0f}" for kind, b in kinds.items()),
                )
            )
            scaled = cold.wall * 1000 / size
            verdicts.append(
                f"- {size:,} services: cold {cold.wall:.1f} s wall "
                f"(×{1000 / size:g} = {scaled:.0f} s for 1,000 if linear; target "
                f"{TARGET_1000_S:.0f} s), peak {cold.rss_all:.0f} MiB (target {TARGET_RSS_MIB}), "
                f"{total / size / 1000:.0f} KB per service (target "
                f"{TARGET_BYTES_PER_SERVICE // 1000}); {loads}"
            )
        if args.prove:
            rows.extend(_proof_rows(work, args.prove, args.seed))
        print(f"# Realistic fleet\n\nMachine: {machine()}; load average before: {_load()}\n")
        print(
            markdown_table(
                [
                    "services",
                    "render",
                    "wall (s)",
                    "CPU (s)",
                    "CPU ms per service",
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
                    "services",
                    "bytes written",
                    "files",
                    "KB per service",
                    "files per service",
                    "KB per service by folder",
                    "KB per service by output kind",
                ],
                folders,
            )
        )
        print()
        print("\n".join(verdicts))
        print()
        print(f"Command: `{command_line()}`")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _proof_rows(work: Path, size: int, seed: int) -> list[tuple[str, ...]]:
    """One row: ``size`` services rendered cold with the full proof (tests generated, promtool
    run over them; CPU counts promtool's processes too)."""
    repo = work / f"proof-{size}"
    realistic_specs(repo / "specs", size, seed)
    command, env = obsgen(None)
    env["OBSGEN_CACHE_DIR"] = str(work / f"proof-cache-{size}")
    cold = timed([*command, "-q"], repo, env)
    edit_one_spec(repo)
    edited = timed([*command, "-q"], repo, env)
    return [
        time_row(size, mode, run)
        for mode, run in (("cold, proved", cold), ("one spec edited, proved", edited))
    ]


def time_row(size: int, mode: str, run: Run) -> tuple[str, ...]:
    """One row of the time table: ``size`` services rendered as ``mode`` took ``run``."""
    return (
        f"{size:,}",
        mode,
        f"{run.wall:.2f}",
        f"{run.cpu:.2f}",
        f"{run.cpu / size * 1000:.0f}",
        f"{run.rss_one:.0f}",
        f"{run.rss_all:.0f}",
    )


def edit_one_spec(repo: Path) -> None:
    """A one-line threshold change: the first spec's ``queueDepth.max`` one higher."""
    pattern = re.compile(r"queueDepth: \{max: (\d+)")
    for spec in sorted((repo / "specs").glob("*.yaml")):
        text = spec.read_text(encoding="utf-8")
        found = pattern.search(text)
        if found is not None:
            break
    else:
        raise RuntimeError(f"{repo / 'specs'}: no spec with a queueDepth.max to edit")
    edited = f"queueDepth: {{max: {int(found[1]) + 1}"
    spec.write_text(text[: found.start()] + edited + text[found.end() :], encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
