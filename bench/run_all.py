"""Run every bench script in ``bench/`` and save each one's markdown table (``make bench``).

Scripts are the ``bench/*.py`` files not starting with ``_`` (and not this one), run with their
default options, in a fixed order for the known ones (rule evaluation, realistic fleet, exporter
scrape, linter corpus), then any others alphabetically, except those in :data:`ALONE`, which
take longer than the whole budget and run on their own (``--only`` still picks them). Each
one's stdout is written to
``bench/results/<script>.md`` (or ``--out``) and echoed. Defaults are sized so the whole run
fits in 10 minutes on a 2-core machine; a script that overruns its share is stopped and
reported, and the others still run.

Exit status: 0 when every script succeeded, 1 otherwise.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
KNOWN_ORDER = ("rule_eval", "realistic_fleet", "exporter_scrape", "lint_corpus")
# Run only when named (``--only detection --budget 3600``): days of 1m promtool evaluations
# per tier, about half an hour on 2 cores (BENCHMARKS.md, "Time to page"); and proof_compare,
# which needs the git revision to compare with: run it directly (`--baseline REV`); and
# proof_rule_cost, a few minutes of promtool per rule of one test group; and render_scale, the
# fleet of copies of the example specs (the realistic fleet is the headline figure); and
# profile_service, which profiles the per-service build; and render_ab, a before/after that
# needs its baseline revision.
ALONE = (
    "detection",
    "profile_service",
    "proof_compare",
    "proof_rule_cost",
    "render_ab",
    "render_scale",
)
BUDGET_S = 600


def bench_scripts(folder: Path = BENCH) -> list[Path]:
    """The bench scripts present, known ones first in :data:`KNOWN_ORDER`, then the rest."""
    found = {
        p.stem: p
        for p in folder.glob("*.py")
        if not p.name.startswith("_") and p.resolve() != Path(__file__).resolve()
    }
    known = [found.pop(name) for name in KNOWN_ORDER if name in found]
    return known + [found[name] for name in sorted(found)]


def main(argv: list[str] | None = None) -> int:
    """Run the scripts one after another; print a summary table of status and wall time."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=BENCH / "results", help="where tables go")
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds for all scripts")
    parser.add_argument("--only", nargs="*", help="script names (stems) to run")
    args = parser.parse_args(argv)

    scripts = [
        s for s in bench_scripts() if (s.stem in args.only if args.only else s.stem not in ALONE)
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    summary = []
    failed = False
    for script in scripts:
        left = args.budget - (time.monotonic() - started)
        if left <= 5:
            summary.append((script.name, "skipped: budget spent", "0"))
            failed = True
            continue
        clock = time.monotonic()
        try:
            proc = subprocess.run(
                [sys.executable, str(script)],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=left,
                check=False,
            )
            status = "ok" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
            output, errors = proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as err:
            status = f"stopped after {left:.0f} s (budget)"
            output = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
            errors = err.stderr.decode() if isinstance(err.stderr, bytes) else (err.stderr or "")
        elapsed = time.monotonic() - clock
        failed = failed or status != "ok"
        print(output, flush=True)
        if status != "ok":
            print(errors[-3000:], file=sys.stderr, flush=True)
        else:
            (args.out / f"{script.stem}.md").write_text(output, encoding="utf-8")
        summary.append((script.name, status, f"{elapsed:.0f}"))

    total = time.monotonic() - started
    print("| script | status | wall (s) |\n|---|---|---|")
    for row in summary:
        print("| " + " | ".join(row) + " |")
    print(f"\nAll bench scripts: {total:.0f} s (budget {args.budget:.0f} s). Tables in {args.out}.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
