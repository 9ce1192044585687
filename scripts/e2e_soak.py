"""``make e2e-soak``: tests/e2e ``--runs`` times in a row (10 by default) on a loaded machine,
each run's pass count reported; exit 1 when any run failed a test.

The load is ``--load`` CPU-bound processes (2 by default: a load average about 2 above the
suite's own): ``stress-ng --cpu`` when it is on PATH (``make e2e-soak`` installs Debian's), else
one Python busy loop per process. Both stop by themselves after the soak's time bound, and are
stopped (by process group) as soon as the runs are over. Why the suite holds under load:
docs/scale-out.md, "The end-to-end suite".
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUN_BOUND_S = 900
"""Bound of one run of tests/e2e (about 150 s on a loaded 2-core machine)."""


_TIMING = re.compile(r"^(e2e-\S+)\s+(.+?)\s+((?:[a-z]+\s+[0-9.]+\s*)+)$")
"""A line of the suite's table "e2e engine timings": service, event, engine seconds pairs."""


@dataclass
class Run:
    """One run's outcome: tests passed, failed (failures and errors), skipped; seconds; the
    1-minute load average before and after; the failed tests' ids and first message lines;
    the seconds each engine took per (service, event) from the suite's timing table."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)
    failures: list[str] = field(default_factory=list)
    timings: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)


def timings(output: str) -> dict[tuple[str, str], dict[str, float]]:
    """The suite's table "e2e engine timings" in a run's ``output``."""
    found = {}
    for line in output.splitlines():
        match = _TIMING.match(line.strip())
        if match:
            pairs = match.group(3).split()
            took = {pairs[i]: float(pairs[i + 1]) for i in range(0, len(pairs), 2)}
            found[(match.group(1), match.group(2))] = took
    return found


def lag_table(runs: list[Run]) -> list[str]:
    """Per (service, event): each engine's median seconds over the runs, VictoriaMetrics'
    median and largest lag behind Prometheus."""
    events = sorted({key for run in runs for key in run.timings})
    lines = []
    for key in events:
        seen = [run.timings[key] for run in runs if key in run.timings]
        prom = [t["prometheus"] for t in seen if "prometheus" in t]
        lags = [t["victoriametrics"] - t["prometheus"] for t in seen if len(t) == 2]
        line = f"{key[0]:18} {key[1]:48} n={len(seen):2} prometheus {statistics.median(prom):5.1f}"
        if lags:
            vm = statistics.median(t["victoriametrics"] for t in seen if len(t) == 2)
            line += f"  victoriametrics {vm:5.1f}  lag {statistics.median(lags):5.1f}"
            line += f" (max {max(lags):5.1f})"
        lines.append(line)
    return lines


def _busy(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


@contextlib.contextmanager
def cpu_load(workers: int, seconds: float) -> Iterator[str]:
    """``workers`` CPU-bound processes for at most ``seconds``; yields what runs them."""
    if workers <= 0:
        yield "no load"
        return
    stress = shutil.which("stress-ng")
    if stress:
        command = [stress, "--cpu", str(workers), "--timeout", f"{int(seconds)}s", "--quiet"]
        process = subprocess.Popen(
            command,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield f"stress-ng --cpu {workers}"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(30)
        return
    loops = [multiprocessing.Process(target=_busy, args=(seconds,)) for _ in range(workers)]
    for loop in loops:
        loop.start()
    try:
        yield f"{workers} Python busy loops"
    finally:
        for loop in loops:
            loop.terminate()
            loop.join(30)


def run_once(report: Path) -> Run:
    """One run of tests/e2e; its outcome read from the junit report it writes and its output
    (kept beside the report, ``.log``)."""
    started, load = time.monotonic(), os.getloadavg()[0]
    command = [sys.executable, "-m", "pytest", "-q", "-n0", "tests/e2e", f"--junitxml={report}"]
    try:
        done = subprocess.run(
            command,
            cwd=REPO,
            timeout=RUN_BOUND_S,
            check=False,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    except subprocess.TimeoutExpired:
        return Run(failed=1, seconds=RUN_BOUND_S, failures=[f"run over {RUN_BOUND_S} s"])
    report.with_suffix(".log").write_text(done.stdout, encoding="utf-8")
    outcome = Run(seconds=time.monotonic() - started, load=(load, os.getloadavg()[0]))
    outcome.timings = timings(done.stdout)
    if not report.exists():
        outcome.failed, outcome.failures = 1, ["no junit report (pytest did not run)"]
        return outcome
    for case in ET.parse(report).getroot().iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            outcome.failed += 1
            message = (problem.get("message") or "").splitlines()
            where = f"{case.get('classname')}::{case.get('name')}"
            outcome.failures.append(f"{where}: {message[0] if message else ''}"[:400])
        elif case.find("skipped") is not None:
            outcome.skipped += 1
        else:
            outcome.passed += 1
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of tests/e2e (10)")
    parser.add_argument("--load", type=int, default=2, help="CPU-bound processes (2)")
    parser.add_argument("--logs", type=Path, help="keep each run's output and report here")
    args = parser.parse_args(argv)
    runs: list[Run] = []
    with (
        tempfile.TemporaryDirectory(prefix="obsgen-soak-") as tmp,
        cpu_load(args.load, args.runs * RUN_BOUND_S) as load,
    ):
        logs = args.logs or Path(tmp)
        logs.mkdir(parents=True, exist_ok=True)
        print(f"e2e soak: {args.runs} runs of tests/e2e under {load}", flush=True)
        for n in range(1, args.runs + 1):
            run = run_once(logs / f"run-{n}.xml")
            runs.append(run)
            total = run.passed + run.failed
            print(
                f"e2e soak: run {n:2}: {run.passed}/{total} passed, {run.failed} failed, "
                f"{run.skipped} skipped, {run.seconds:.0f} s, load average "
                f"{run.load[0]:.1f} -> {run.load[1]:.1f}",
                flush=True,
            )
            for failure in run.failures:
                print(f"e2e soak:         {failure}", flush=True)
    print("e2e soak: engine timings over the runs (seconds from the fault, medians)")
    for line in lag_table(runs):
        print(f"e2e soak:   {line}")
    clean = sum(1 for r in runs if r.failed == 0 and r.passed > 0)
    passed, total = sum(r.passed for r in runs), sum(r.passed + r.failed for r in runs)
    print(f"e2e soak: {clean} of {len(runs)} runs passed every test ({passed}/{total} tests)")
    return 0 if clean == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
