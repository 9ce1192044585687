"""Time ``obsgen lint`` over the real rule corpus (tests/data/corpus/rules), target <= 1 s.

Usage::

    .venv/bin/python bench/lint_corpus.py [--repeat 5] [--corpus PATH]

Prints a Markdown table: best and median wall time of a whole lint run (read, parse, checks)
with and without the single ``promtool check rules`` step, plus the promtool step alone. Each
run is in-process and starts from cold caches (the PromQL parse cache is cleared).
"""

from __future__ import annotations

import argparse
import platform
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


def _time(func: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        promql.parse.cache_clear()
        promql._WALKED.clear()
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
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
        target = f"<= {TARGET_S:g} s" if name.startswith("lint") else ""
        print(f"| {name} | {min(times):.3f} | {statistics.median(times):.3f} | {target} |")
    return 0 if statistics.median(rows[0][1]) <= TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
