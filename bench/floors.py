"""Floors under the fleet render targets: what any render or proof of the same size costs here.

* :func:`write_floor`: two processes writing as many files of the same sizes as a rendered
  fleet (no rendering, no Python beyond the write loop), then ``os.sync()``: what the cold
  render's 0.9 GB of files cost on this machine's disk and kernel whatever obsgen does.
* :func:`promtool_evaluation_ms`: promtool's CPU per rule evaluation, from test groups that
  evaluate a rule file at many steps on one input series.

Times the rule evaluations a proof asks for (:func:`generator.proof_split.estimated_cost`,
which counts them to share proof parts out between processes), the figure above is the CPU a
proof cannot go below.
"""

from __future__ import annotations

import os
import resource
import subprocess
import tempfile
import time
from multiprocessing import get_context
from pathlib import Path

import yaml

from generator.naming import OUTPUT_DIRS


def _write_sizes(job: tuple[str, list[tuple[str, int]]]) -> None:
    base, files = job
    for rel, size in files:
        path = Path(base, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)


def write_floor(repo: Path, work: Path) -> tuple[int, int, float, float, float]:
    """Write files of the sizes of ``repo``'s outputs under a folder of ``work`` from two
    processes, then sync. Returns (files, bytes, wall seconds of the writes, CPU seconds of
    the writes, seconds of the sync)."""
    found = [
        (path.relative_to(repo).as_posix(), path.stat().st_size)
        for directory in OUTPUT_DIRS
        for path in sorted((repo / directory).rglob("*"))
        if path.is_file()
    ]
    target = Path(tempfile.mkdtemp(prefix="floor-", dir=work))
    halves = [(str(target), found[0::2]), (str(target), found[1::2])]
    os.sync()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with get_context("fork").Pool(2) as pool:
        pool.map(_write_sizes, halves)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    os.sync()
    synced = time.perf_counter() - start
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return len(found), sum(size for _, size in found), wall, cpu, synced


def _rule_count(paths: list[Path]) -> int:
    return sum(
        len(group.get("rules") or [])
        for path in paths
        for group in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("groups") or []
    )


def promtool_evaluation_ms(rule_file: Path, groups: int = 4, steps: int = 60) -> float:
    """promtool's CPU milliseconds per rule evaluation: ``groups`` test groups that each
    evaluate every rule of ``rule_file`` at ``steps`` one-minute steps over one input series."""
    with tempfile.TemporaryDirectory(prefix="floor-promtool-") as tmp:
        folder = Path(tmp)
        (folder / "rules.yaml").write_bytes(rule_file.read_bytes())
        tests = [
            {
                "name": f"steps {index}",
                "interval": "1m",
                "input_series": [{"series": 'up{job="floor"}', "values": f"1+0x{steps}"}],
                "alert_rule_test": [
                    {"eval_time": f"{steps - 1}m", "alertname": "NoSuchAlert", "exp_alerts": []}
                ],
            }
            for index in range(groups)
        ]
        test_file = folder / "floor.test.yaml"
        test_file.write_text(
            yaml.safe_dump(
                {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}
            ),
            encoding="utf-8",
        )
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            ["promtool", "test", "rules", str(test_file)], check=True, capture_output=True
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu * 1000 / (groups * steps * _rule_count([rule_file]))
