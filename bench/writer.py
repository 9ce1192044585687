"""The writer's own cost: ``write_all`` moving a 1,000-service fleet's spooled files
into an empty root, on tmpfs where there is one, so that the disk's state does not drown the
Python work (on this machine's ext4, creating the same files costs 0.9–9.5 s from one run to
the next).

The fleet is synthetic: per service, five rule and test files, a dashboard, a values file, a
manifest and 20 runbooks, spooled by :func:`generator.fleet.filebacked.spool` as a render spools
them, plus one file built in the main process. ``--baseline REV`` also times obsgen's writer
as of git revision REV (exported with ``git archive``), alternating runs in one table.

Each run is a fresh Python process: user and system CPU of ``write_all`` alone (``getrusage``),
and its wall time. Prints a markdown table with the median of ``--runs`` runs, and the command.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, command_line, export_paths, machine, markdown_table

_RUN = r"""
import os, resource, shutil, sys, time
from pathlib import Path
from generator import writer
from generator.fleet.bundle import BundleFiles
from generator.fleet.filebacked import spool

root = Path(sys.argv[1])
shutil.rmtree(root, ignore_errors=True)
root.mkdir(parents=True)
outputs = {}
for i in range(int(sys.argv[2])):
    for name in ("rules/s{0}.rules.yaml", "rules/s{0}.test.yaml", "rules/s{0}.slow-10m.test.yaml",
                 "rules/s{0}.slow-1h.test.yaml", "rules/s{0}.slow-3h.test.yaml",
                 "dashboards/s{0}.json", "helm/values-s{0}.yaml", "manifests/s{0}-rules.yaml"):
        outputs[name.format(f"{i:04d}")] = "x" * 200
    for alert in range(20):
        outputs[f"docs/runbooks/s{i:04d}/Alert{alert}.md"] = "y" * 100
spooled = spool(root / ".obsgen-spool-bench", outputs)
bundle = BundleFiles([spooled, {"helm/values-observability.yaml": "z" * 1000}])
before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
changed = writer.write_all(root, bundle, [])
wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF)
assert len(changed) == len(bundle)
print(writer.__file__, len(changed), after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, wall)
shutil.rmtree(root)
"""


def _time(code: Path, folder: Path, services: int) -> tuple[int, float, float, float]:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(folder), str(services)],
        env={"PYTHONPATH": str(code), "PATH": "/usr/bin:/bin"},
        cwd=folder.parent,  # not the repository: `python -c` puts the working folder first
        capture_output=True,
        text=True,
        check=True,
    )
    where, files, user, system, wall = done.stdout.split()
    if not where.startswith(str(code)):
        raise SystemExit(f"timed the writer of {where}, not of {code}")
    return int(files), float(user), float(system), float(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--services", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", help="git revision to time the same writes with")
    args = parser.parse_args()
    shm = Path("/dev/shm")
    base = Path(tempfile.mkdtemp(prefix="obsgen-bench-writer-", dir=shm if shm.is_dir() else None))
    codes = {"this": REPO}
    if args.baseline:
        codes = {
            f"baseline {args.baseline}": export_paths(args.baseline, base / "old", "generator")
        }
        codes["this"] = REPO
    found: dict[str, list[tuple[int, float, float, float]]] = {name: [] for name in codes}
    try:
        for _ in range(args.runs):  # alternating, so that a slower moment hits both alike
            for name, code in codes.items():
                found[name].append(_time(code, base / "root", args.services))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    rows = []
    for name, runs in found.items():
        rows.append(
            [
                name,
                runs[0][0],
                f"{statistics.median(r[1] for r in runs):.2f}",
                f"{statistics.median(r[2] for r in runs):.2f}",
                f"{statistics.median(r[3] for r in runs):.2f}",
            ]
        )
    print(f"Machine: {machine()}; folder: {base} ({'tmpfs' if shm.is_dir() else 'temp'})\n")
    headers = ["obsgen", "files", "user CPU (s)", "system CPU (s)", "wall (s)"]
    print(markdown_table(headers, rows))
    print(f"\nMedian of {args.runs} runs each. Command: `{command_line()}`")


if __name__ == "__main__":
    main()
