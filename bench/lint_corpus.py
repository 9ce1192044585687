"""Time ``obsgen lint`` over the real rule corpus (tests/data/corpus/rules), target <= 1 s.

Usage::

    .venv/bin/python bench/lint_corpus.py [--repeat 5] [--corpus PATH]

Prints a Markdown table: best and median wall time of a whole lint run (read, parse, every
check) with and without the single ``promtool check rules`` step, the promtool step alone, and
the CPU time of this process for the run without promtool (wall time on a shared machine
includes waiting for a core; CPU time does not). Each run is in-process and starts from cold
caches (the PromQL parse cache is cleared; walks are remembered per run only).
"""

from __future__ import annotations

import argparse
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.lint import LintConfig, lint_paths, promql  # noqa: E402
from generator.lint.loader import load_files  # noqa: E402
from generator.lint.promtool_step import run_promtool  # noqa: E402

DEFAULT_CORPUS = ROOT / "tests" / "data" / "corpus" / "rules"
TARGET_S = 1.0


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (promtool)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _time(
    func: Callable[[], object], repeat: int, clock: Callable[[], float] = time.perf_counter
) -> list[float]:
    times = []
    for _ in range(repeat):
        promql.parse.cache_clear()
        start = clock()
        func()
        times.append(clock() - start)
    return times


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table; returns 1 when over the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args(argv)
    corpus = str(args.corpus.resolve())
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    config = LintConfig()
    report = lint_paths([corpus], config, promtool=True)
    rows = [
        (
            "lint, with promtool",
            _time(lambda: lint_paths([corpus], config, promtool=True), args.repeat),
        ),
        (
            "lint, without promtool",
            _time(lambda: lint_paths([corpus], config, promtool=False), args.repeat),
        ),
        ("promtool step alone", _time(lambda: run_promtool(load_files([corpus])), args.repeat)),
        (
            "lint, with promtool, CPU time (with promtool's)",
            _time(lambda: lint_paths([corpus], config, promtool=True), args.repeat, _cpu),
        ),
        (
            "lint, without promtool, CPU time",
            _time(
                lambda: lint_paths([corpus], config, promtool=False),
                args.repeat,
                time.process_time,
            ),
        ),
    ]
    print(f"command: python bench/lint_corpus.py --repeat {args.repeat}")
    print(f"corpus: {report.files} files, {report.rules} rules, {len(report.findings)} findings")
    print(
        f"python {platform.python_version()} on {platform.machine()}, {time.strftime('%Y-%m-%d')}"
    )
    print()
    print("| run | best (s) | median (s) | target |")
    print("|---|---|---|---|")
    for name, times in rows:
        target = f"<= {TARGET_S:g} s" if name.startswith("lint,") and "CPU" not in name else ""
        print(f"| {name} | {min(times):.3f} | {statistics.median(times):.3f} | {target} |")
    return 0 if statistics.median(rows[0][1]) <= TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
