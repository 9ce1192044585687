"""Where a distinct service's render CPU goes: the builders' shares, and the test generation's.

Builds the files of the first ``--count`` specs of the realistic fleet
(:func:`_fleet_specs.realistic_specs`) with :func:`generator.core.outputs.service_outputs`, in this
process, no promtool: first timed (best of ``--runs``: CPU ms per service, and the share of
:func:`generator.cases.rule_tests.service_rule_tests`), then under cProfile, printing each
builder's cumulative share of ``service_outputs``. ``--without-tests``: as a render that
neither writes nor runs the tests builds (no test generation). Run alone (``make bench``
skips it).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, command_line, machine, markdown_table
from _fleet_specs import realistic_specs

sys.path.insert(0, str(REPO))
from generator.core import outputs  # this checkout's
from generator.render import load_plans

PARTS = (
    ("service_rule_tests", "promtool tests (builders/rule_tests.py)"),
    ("guard_groups", "… input-guard cases"),
    ("detection_groups", "… detection-time cases"),
    ("slo_groups", "… SLO burn cases"),
    ("merge_cases", "… merged into shared input blocks"),
    ("traffic", "… synthetic traffic counters"),
    ("dump_yaml", "YAML writing (all files)"),
    ("service_dashboard_output", "dashboard"),
    ("service_overlay", "Helm values and manifests"),
    ("rule_groups", "rule groups"),
    ("service_runbook_outputs", "runbooks"),
)


def main(argv: list[str] | None = None) -> int:
    """Time, then profile; print both tables and the command."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--without-tests", action="store_true")
    parser.add_argument("--top", type=int, default=0, help="also the N costliest functions")
    args = parser.parse_args(argv)
    tests = not args.without_tests
    with tempfile.TemporaryDirectory(prefix="obsgen-bench-profile-") as tmp:
        root = Path(tmp)
        plans = load_plans(realistic_specs(root / "specs", args.count), root, jobs=0)
        real, spent = outputs.service_rule_tests, [0.0]

        def timed(*a: object) -> object:
            start = time.process_time()
            try:
                return real(*a)  # type: ignore[arg-type]
            finally:
                spent[0] += time.process_time() - start

        outputs.service_rule_tests = timed  # type: ignore[assignment]
        best: tuple[float, float] | None = None
        for _ in range(args.runs):
            spent[0] = 0.0
            start = time.process_time()
            for plan in plans:
                outputs.service_outputs(plan, tests=tests)
            total = time.process_time() - start
            best = (total, spent[0]) if best is None or total < best[0] else best
        outputs.service_rule_tests = real
        profile = cProfile.Profile()
        profile.enable()
        for plan in plans:
            outputs.service_outputs(plan, tests=tests)
        profile.disable()
    assert best is not None
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    cumulative: dict[str, float] = {}
    for (_, _, name), (_, _, _, cum, _) in stats.items():
        cumulative[name] = max(cumulative.get(name, 0.0), cum)
    whole = cumulative["service_outputs"]
    n = len(plans)
    print(f"# Per-service render profile\n\nMachine: {machine()}\n")
    print(
        markdown_table(
            ["services", "CPU ms per service", "promtool test generation (ms)", "the rest (ms)"],
            [
                (
                    n,
                    f"{best[0] / n * 1000:.0f}",
                    f"{best[1] / n * 1000:.0f}",
                    f"{(best[0] - best[1]) / n * 1000:.0f}",
                )
            ],
        )
    )
    print()
    rows = [(label, f"{100 * cumulative.get(name, 0.0) / whole:.0f} %") for name, label in PARTS]
    print(markdown_table(["part (cProfile, cumulative)", "share of service_outputs"], rows))
    if args.top:
        print()
        pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)
    print(f"\nCommand: `{command_line()}`")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
