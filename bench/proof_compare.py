"""The promtool proof before and after a change: each example's committed rule and
test files of git revision REV and of this checkout, proved as ``obsgen render`` proves them,
in alternating runs.

A proof is ``promtool check rules`` on the rule file, then the test files split by the rules
each test group observes (:func:`generator.proof_split.split_test_file`) through
:func:`generator.promtool.test_rules` (one promtool per core, parts shared out by estimated
cost, Go's collector held back). Its cost is the CPU time (user + system) of those promtool
processes. Both revisions' files are split by this checkout's code, so only the files differ.
Runs alternate between the two, so a machine that slows down mid-run slows both alike; the
median of each side is compared. Prints a markdown table and the command.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, command_line, export_paths, machine, machine_speed, markdown_table

sys.path.insert(0, str(REPO))
from generator import promtool
from generator.proof_split import estimated_cost, split_test_file


def proof_cpu(rules: Path, example: str) -> float:
    """CPU seconds of ``example``'s proof over the files in ``rules``.

    Raises:
        RuntimeError: the proof failed.
    """
    with tempfile.TemporaryDirectory(prefix="obsgen-bench-proof-") as tmp:
        folder = Path(tmp)
        for path in rules.glob(f"{example}.*"):
            shutil.copy(path, folder)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        parts = [
            p for f in sorted(folder.glob(f"{example}.*test.yaml")) for p in split_test_file(f)
        ]
        prove_as_render(folder, example, parts)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def prove_as_render(folder: Path, example: str, parts: list[Path]) -> None:
    """``promtool check rules`` on ``example``'s rule file in ``folder``, then its split test
    files ``parts`` through :func:`generator.promtool.test_rules`, as ``obsgen render`` runs
    them.

    Raises:
        RuntimeError: the proof failed.
    """
    checked = promtool.check_rules([folder / f"{example}.rules.yaml"])
    tested = promtool.test_rules(parts, cost=estimated_cost)
    if not (checked.ok and tested.ok):
        raise RuntimeError(f"{example}: the proof failed:\n{checked.output}{tested.output}")


def main(argv: list[str] | None = None) -> int:
    """Prove each example with both revisions' files, ``--runs`` times each, alternating."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="git revision to compare with")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("examples", nargs="+", help="service names, e.g. o1-preview")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="obsgen-bench-compare-") as tmp:
        old = export_paths(args.baseline, Path(tmp), "rules") / "rules"
        sides = {args.baseline: old, "this": REPO / "rules"}
        rows = []
        for example in args.examples:
            runs: dict[str, list[float]] = {side: [] for side in sides}
            for _ in range(args.runs):
                for side, rules in sides.items():
                    runs[side].append(proof_cpu(rules, example))
            old, new = (statistics.median(runs[side]) for side in sides)
            shown = [
                ", ".join(f"{r:.2f}" for r in runs[side])
                + f" (median {statistics.median(runs[side]):.2f})"
                for side in sides
            ]
            rows.append([example, *shown, f"{(new - old) / old * 100:+.0f} %"])
    print(f"# Promtool proof before and after\n\nMachine: {machine()}")
    print(f"Machine speed: {machine_speed()}\n")
    headers = ["service", f"{args.baseline} (CPU s)", "this checkout (CPU s)", "change"]
    print(markdown_table(headers, rows))
    print(f"\nCommand: `{command_line()}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
