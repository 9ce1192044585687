"""Before/after of a change: the CPU of a cold render of N realistic distinct specs, two codes.

``--baseline REV`` is exported with ``git archive``; this checkout is the other code. Each
round renders the same fleet (:func:`_fleet_specs.realistic_specs`) with each code in turn,
``obsgen render --skip-promtool -q --no-cache`` into an empty repository, and takes the CPU of
obsgen and its children (``wait4``); the first round checks that both wrote the same bytes.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, command_line, export_paths, machine, markdown_table
from _fleet_specs import realistic_specs


def _cpu_of(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _same_tree(a: Path, b: Path) -> bool:
    found = filecmp.dircmp(a, b, ignore=["specs"])
    stack = [found]
    while stack:
        cmp = stack.pop()
        if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
            return False
        stack.extend(cmp.subdirs.values())
    return True


def main(argv: list[str] | None = None) -> int:
    """Render alternately with each code; print the CPU table and the command."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="git revision to compare with")
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="obsgen-bench-ab-"))
    try:
        codes = {
            f"baseline ({args.baseline})": export_paths(args.baseline, work / "base", "generator"),
            "this checkout": REPO,
        }
        realistic_specs(work / "specs", args.count)
        cpu: dict[str, list[float]] = {label: [] for label in codes}
        same = True
        for round_ in range(args.rounds):
            repos = []
            for index, (label, code) in enumerate(codes.items()):
                repo = work / f"repo-{round_}-{index}"
                shutil.copytree(work / "specs", repo / "specs")
                env = {**os.environ, "PYTHONPATH": str(code)}
                env["OBSGEN_CACHE_DIR"] = str(repo.with_suffix(".cache"))
                command = [sys.executable, "-m", "generator", "render", "--skip-promtool"]
                cpu[label].append(_cpu_of([*command, "-q", "--no-cache"], repo, env))
                repos.append(repo)
            if round_ == 0:
                same = _same_tree(repos[0], repos[1])
        rows = [
            (
                label,
                ", ".join(f"{c:.2f}" for c in runs),
                f"{min(runs) / args.count * 1000:.0f}",
            )
            for label, runs in cpu.items()
        ]
        print(f"# Render A/B\n\nMachine: {machine()}; {args.count} distinct services\n")
        print(markdown_table(["obsgen", "CPU (s) per round", "best, ms per service"], rows))
        print(f"\nSame bytes written: {'yes' if same else 'NO'}\n\nCommand: `{command_line()}`")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
