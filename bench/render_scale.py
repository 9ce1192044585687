"""Render scale: wall time and peak RSS of ``obsgen render`` over 10, 100, 1000 generated specs.

Specs are generated into a temp dir, cycling through every preset in
``generator.presets.PRESETS`` (so presets added later are picked up), each with an availability
SLO, a latency SLO on the preset's first classic histogram when one fits, and every other
service with the GPU sidecar. Each size is rendered ``--repeat`` times into a fresh output dir,
with ``--skip-promtool`` and with the promtool step. ``$PROMTOOL`` points to a wrapper script
that logs every call, which shows promtool runs once per step per render, not once per file.

Target: time linear in the spec count; 1000 specs ≤ 2 s without promtool.
Prints markdown tables and the command that produced them.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import REPO, command_line, machine, markdown_table

from generator.presets import PRESETS, get_preset

TARGET_1000_S = 2.0


def latency_slo(server: str) -> str | None:
    """A latency SLO line for ``server``'s first classic histogram, at a bound in whole ms."""
    preset = get_preset(server, None)
    for key, hist in sorted(preset.latency.items()):
        if hist.native:
            continue
        bounds = [b * hist.seconds_per_unit * 1000 for b in hist.buckets]
        whole = [ms for ms in bounds if abs(ms - round(ms)) < 1e-9 and ms >= 100]
        if whole:
            ms = round(whole[len(whole) // 2])
            return (
                f"    - {{name: latency, indicator: {key}, threshold: {ms}ms, "
                f"objective: 99, window: 30d}}\n"
            )
    return None


def spec_text(index: int, servers: list[str]) -> str:
    """One generated spec: preset ``servers[index % len]``, unique name, job and deployment."""
    server = servers[index % len(servers)]
    name = f"svc-{index:04d}"
    latency = latency_slo(server) or ""
    gpu = "sidecar" if index % 2 else "none"
    return (
        "apiVersion: obsgen/v1alpha1\n"
        "kind: ModelService\n"
        f"metadata: {{name: {name}, team: team-{index % 7}}}\n"
        "spec:\n"
        f"  server: {server}\n"
        f"  selector: {{namespace: ns-{index % 10}, job: {name}}}\n"
        "  slos:\n"
        "    - {name: availability, objective: 99.9, window: 30d}\n"
        f"{latency}"
        f"  gpu: {{exporter: {gpu}}}\n"
        f"  deployment: {{name: {name}, container: server, memoryLimit: 16Gi}}\n"
    )


def write_specs(folder: Path, count: int) -> list[str]:
    """Write ``count`` specs into ``folder``; return the servers cycled through."""
    servers = sorted(PRESETS)
    folder.mkdir(parents=True)
    for index in range(count):
        (folder / f"svc-{index:04d}.yaml").write_text(spec_text(index, servers), encoding="utf-8")
    return servers


def promtool_wrapper(folder: Path, log: Path) -> Path:
    """A ``promtool`` stand-in that logs its arguments (one line per call) and runs the real one."""
    real = shutil.which("promtool")
    if real is None:
        raise RuntimeError("promtool not found on PATH (run `make prometheus`)")
    wrapper = folder / "promtool"
    wrapper.write_text(
        f'#!/bin/sh\nprintf "%s %s %s\\n" "$1" "$2" "$#" >> "{log}"\nexec "{real}" "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    return wrapper


def render_once(
    specs: Path, out: Path, skip_promtool: bool, env: dict[str, str]
) -> tuple[float, float]:
    """Run ``obsgen render`` once; return (wall seconds, peak RSS MiB of it and its children).

    Raises:
        RuntimeError: render failed (its stderr is included).
    """
    args = [str(REPO / ".venv" / "bin" / "obsgen"), "render", "--out", str(out), str(specs)]
    if skip_promtool:
        args.append("--skip-promtool")
    start = time.perf_counter()
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=out
    )
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"obsgen render failed ({proc.returncode}):\n{stderr.decode()[-3000:]}")
    return wall, usage.ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    """Generate specs, render each size with and without promtool, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 500])
    parser.add_argument("--repeat", type=int, default=1, help="renders per size and mode")
    parser.add_argument(
        "--promtool-sizes",
        type=int,
        nargs="+",
        default=[10],
        help="sizes also rendered with the promtool step (promtool test rules costs ~10 s of "
        "CPU per service, so 1000 specs would take hours on 2 cores)",
    )
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="obsgen-bench-render-"))
    try:
        log = work / "promtool-calls.log"
        env = dict(os.environ, PROMTOOL=str(promtool_wrapper(work, log)))
        rows = []
        calls_rows = []
        medians: dict[tuple[int, bool], float] = {}
        servers: list[str] = []
        for size in args.sizes:
            specs = work / f"specs-{size}"
            servers = write_specs(specs, size)
            for skip in (True, False):
                if not skip and size not in args.promtool_sizes:
                    continue
                walls, rss = [], []
                for attempt in range(args.repeat):
                    out = work / f"out-{size}-{skip}-{attempt}"
                    out.mkdir()
                    log.write_text("")
                    wall, peak = render_once(specs, out, skip, env)
                    walls.append(wall)
                    rss.append(peak)
                    calls = log.read_text().splitlines()
                    files = sum(1 for _ in (out / "rules").glob("*.rules.yaml"))
                medians[(size, skip)] = statistics.median(walls)
                rows.append(
                    (
                        size,
                        "no (`--skip-promtool`)" if skip else "yes",
                        f"{statistics.median(walls):.2f}",
                        f"{min(walls):.2f}–{max(walls):.2f}",
                        f"{statistics.median(walls) / size * 1000:.1f}",
                        f"{max(rss):.0f}",
                    )
                )
                if not skip:
                    calls_rows.append(
                        (
                            size,
                            files,
                            len(calls),
                            "; ".join(sorted(set(" ".join(c.split()[:2]) for c in calls))),
                        )
                    )
        print(f"# Render scale\n\nMachine: {machine()}\nPresets cycled: {', '.join(servers)}\n")
        print(
            markdown_table(
                [
                    "specs",
                    "promtool step",
                    "median wall (s)",
                    "min–max (s)",
                    "ms per spec",
                    "peak RSS (MiB)",
                ],
                rows,
            )
        )
        print()
        print(
            "Peak RSS is the larger of the `obsgen` process and its biggest child (promtool), "
            "from `wait4`."
        )
        print()
        growth = []
        sizes = sorted(args.sizes)
        for skip in (True, False):
            for small, big in itertools.pairwise(sizes):
                if (small, skip) not in medians or (big, skip) not in medians:
                    continue
                a, b = medians[(small, skip)], medians[(big, skip)]
                marginal = (b - a) / (big - small) * 1000
                growth.append(
                    (
                        "without promtool" if skip else "with promtool",
                        f"{small} → {big}",
                        f"×{big / small:g}",
                        f"×{b / a:.2f}",
                        f"{marginal:.2f}",
                    )
                )
        print(
            markdown_table(
                ["mode", "specs", "count grows", "time grows", "marginal ms per added spec"],
                growth,
            )
        )
        print()
        print(
            markdown_table(
                ["specs", "rule files", "promtool calls per render", "calls"], calls_rows
            )
        )
        print()
        if 1000 in args.sizes:
            t = medians[(1000, True)]
            verdict = "met" if t <= TARGET_1000_S else "MISSED"
            print(
                f"Target 1000 specs ≤ {TARGET_1000_S:g} s without promtool: **{verdict}** ({t:.2f} s)."
            )
            print()
        print(f"Command: `{command_line()}`")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
