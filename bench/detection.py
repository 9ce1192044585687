"""Time to page and time to resolve of obsgen's SLO alerts, measured with promtool.

For every spec (default: ``specs/*.yaml``), every SLO on counters or classic histograms and
every burn-rate tier, three scenarios run through ``promtool test rules`` (the real PromQL
engine) against the rule file's SLO groups only:

- **total outage**: healthy traffic for the longest long window + 10m, then every event bad;
  the first evaluation at which the tier fires;
- **partial outage at 2× the tier's factor** (bad share 2 × threshold; ``n/a`` when that is
  over 100 %): the same;
- **reset**: every event bad for the longest short window + 10m, then every event good; the
  first evaluation at which the tier no longer fires.

Counters are scraped at the spec's scrape interval; the SLO groups are evaluated at their
``interval`` (1m when a group has none, Prometheus' default); the onset is on a scrape that is
also an evaluation. Checks sit at every evaluation from 5 before to 10 after the Workbook's
figure (SRE Workbook ch. 5: ``threshold × long window / bad share`` to fire, ``short window ×
(1 − threshold)`` to reset); promtool lists the alerts that fire at each check. ``≤ x`` means
the tier already fired at the first check, ``> x`` that it did not fire by the last.

``--rules-dir DIR`` reads ``DIR/<service>.rules.yaml`` instead of rendering the specs with this
checkout (e.g. another checkout's committed rules: a "before" column). ``--json`` writes the
raw figures, ``--before`` shows an earlier run's beside these, ``--from-json`` prints the table
from saved figures without measuring again. Beside each measured time the table gives
``obsgen explain``'s figure for this checkout's rules (:func:`generator.slo.detection_ms`,
:func:`generator.slo.reset_ms`) and the spec's evaluation / scrape interval. Prints one
markdown table and the command.

The longest tiers cost the most: promtool evaluates every SLO window at every step, so a 2×
partial outage on the 3d/6h tier evaluates 4.5 days of 3d windows (BENCHMARKS.md gives the
wall time); ``--tiers`` and ``--scenarios`` narrow a run.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _rules
from _common import REPO, command_line, machine, markdown_table

from generator import naming, slo
from generator.builders.rulefile import rule_file
from generator.cases.slo_cases import bad_class
from generator.parts.promtool_series import Klass, traffic
from generator.plan import ServicePlan, SLOPlan
from generator.promql import go_float, quote
from generator.render import find_specs, load_plans
from generator.slo import Tier
from generator.units import format_duration_ms, parse_duration_ms, seconds_text

PER_MIN = 600_000  # events per minute: far above any minimum-events guard
SETTLE_MS = 10 * 60_000  # healthy history beyond the longest window, and the reset margin
BEFORE, AFTER = 5, 10  # checks around the Workbook figure, in evaluations
SCENARIOS = ("total", "2x", "reset")


@dataclass(frozen=True)
class Figure:
    """One measured time (ms) and the check range it was looked for in."""

    service: str
    slo: str
    tier: str
    scenario: str  # "total", "2x", "reset"
    workbook_ms: float | None  # None: the scenario cannot happen (2x factor above 100 %)
    measured_ms: int | None
    first_check_ms: int
    last_check_ms: int
    evaluation_interval_ms: int

    def within_one_evaluation(self) -> bool:
        """The detection target: not before the Workbook's figure, at most one evaluation
        interval after it (True when the scenario cannot happen)."""
        if self.workbook_ms is None:
            return True
        if self.measured_ms is None:
            return False
        return (
            self.workbook_ms <= self.measured_ms <= self.workbook_ms + self.evaluation_interval_ms
        )

    def text(self) -> str:
        """The measured time for people: ``1m``, ``≤ 3m``, ``> 1h10m``, ``n/a``."""
        if self.workbook_ms is None:
            return "n/a"
        if self.measured_ms is None:
            return f"> {_ms(self.last_check_ms)}"
        if self.measured_ms <= self.first_check_ms and (
            self.scenario == "reset" or self.first_check_ms > self.evaluation_interval_ms
        ):
            # Already there at the first check: it fired earlier, or was not firing at recovery.
            return f"≤ {_ms(self.measured_ms)}"
        return _ms(self.measured_ms)


def _ms(ms: int) -> str:
    return seconds_text(Fraction(ms, 1000))


def slo_groups_only(doc: dict[str, Any], service: str, tiers: Sequence[str] = ()) -> dict[str, Any]:
    """The rule file document with only the service's SLO groups (``obsgen.<svc>.slo.*``),
    each with only its alerts (of ``tiers``, ``1h/5m`` …, when given) and the records they
    read, directly or not (the SLO-window ratio, SLI and budget records decide no alert and
    cost promtool the most; so do the 3d windows in a run for a shorter tier). Every rule
    kept is evaluated exactly as in the full file: a rule reads only the records it names."""
    prefix = naming.group_name(service, "slo.")

    def wanted(rule: dict[str, Any]) -> bool:
        labels = rule.get("labels", {})
        return not tiers or f"{labels.get('long_window')}/{labels.get('short_window')}" in tiers

    return _rules.prune(doc, lambda g: g["name"].startswith(prefix), wanted)


def evaluation_interval_ms(doc: dict[str, Any]) -> int:
    """The SLO groups' ``interval`` (ms); 1m when they set none. Raises on mixed intervals."""
    found = {parse_duration_ms(str(g.get("interval", "1m"))) for g in doc["groups"]}
    if len(found) != 1:
        raise ValueError(f"SLO groups with different intervals: {sorted(found)}")
    return found.pop()


def series(
    plan: ServicePlan, phases: Sequence[tuple[int, Sequence[Klass]]], end_ms: int, scrape_ms: int
) -> list[dict[str, str]]:
    """promtool input series: counters from 0 at time 0, sampled every ``scrape_ms`` until
    ``end_ms``; the events between two scrapes follow the phase the later scrape is in, so
    a phase starting at ``start`` (a multiple of ``scrape_ms``) counts from the first scrape
    after it (phase ``i`` covers ``(start_i, start_i+1]``, as the model's profiles)."""
    per_phase = [traffic(plan, classes).counters for _, classes in phases]
    keys = sorted({k for counters in per_phase for k in counters})
    last_steps = [start // scrape_ms for start, _ in phases[1:]] + [end_ms // scrape_ms]
    out = []
    for key in keys:
        value, parts, previous = 0.0, [], 0
        for i, counters in enumerate(per_phase):
            inc = counters.get(key, 0.0) * scrape_ms / 60_000
            count = last_steps[i] - previous  # scrapes in this phase after the previous one
            if i == 0:
                parts.append(f"0+{go_float(inc)}x{count}")
            else:
                parts.append(f"{go_float(value + inc)}+{go_float(inc)}x{count - 1}")
            value += inc * count
            previous = last_steps[i]
        labels = ",".join(f"{k}={quote(v)}" for k, v in key[1])
        out.append({"series": f"{key[0]}{{{labels}}}", "values": " ".join(parts)})
    return out


def mix(per_min: int, share: Fraction, bad: Klass) -> list[Klass]:
    """``per_min`` events a minute, ``share`` (0–1) of them of class ``bad``."""
    n_bad = float(share * per_min)
    return [Klass(per_min - n_bad), Klass(n_bad, bad.error, bad.durations)]


def _round_up(ms: float, step: int) -> int:
    return -(-int(ms) // step) * step if ms == int(ms) else (int(ms) // step + 1) * step


@dataclass(frozen=True)
class Case:
    """One promtool test group: an SLO, a scenario, when the change happens, what is checked."""

    slo: SLOPlan
    scenario: str
    change_ms: int  # onset (total, 2x) or recovery (reset)
    checks: dict[str, list[int]]  # tier key -> check times (ms since the change)
    workbook: dict[str, float | None]  # tier key -> Workbook figure (ms)
    group: dict[str, Any]


def _tier_key(tier: Tier) -> str:
    return f"{format_duration_ms(tier.long_window_ms)}/{format_duration_ms(tier.short_window_ms)}"


def cases(
    plan: ServicePlan, e: int, tiers: Sequence[str] = (), scenarios: Sequence[str] = SCENARIOS
) -> list[Case]:
    """The scenarios of every SLO of ``plan`` (SLOs on native histograms left out): one total
    outage for all tiers, one 2× case per tier (its own bad share and history), one reset.
    ``tiers`` (``1h/5m`` …) keeps only those tiers; ``scenarios`` only those scenarios."""
    s_ms = plan.scrape_interval_ms
    step = math.lcm(e, s_ms)  # onsets on a scrape that is also an evaluation
    good = [Klass(PER_MIN)]
    out = []

    def around(ideal: float) -> list[int]:
        first = max(e, _round_up(ideal, e) - BEFORE * e)
        return list(range(first, _round_up(ideal, e) + AFTER * e + 1, e))

    for s in plan.slos:
        kept = [t for t in s.tiers if not tiers or _tier_key(t) in tiers]
        if not kept or (s.histogram is not None and s.histogram.native):
            continue
        one = bad_class(s)
        bad = Klass(PER_MIN, one.error, one.durations)
        if "total" in scenarios:
            history = _round_up(max(t.long_window_ms for t in kept) + SETTLE_MS, step)
            ideals = {_tier_key(t): float(t.detection_seconds() * 1000) for t in kept}
            phases = [(0, good), (history, [bad])]
            checks = {k: around(v) for k, v in ideals.items()}
            out.append(_case(plan, s, "total", history, phases, checks, dict(ideals), s_ms))
        for t in kept if "2x" in scenarios else []:
            share = 2 * t.threshold
            if share > 1:
                out.append(Case(s, "2x", 0, {_tier_key(t): []}, {_tier_key(t): None}, {}))
                continue
            ideal = float(t.detection_seconds(share) * 1000)
            onset = _round_up(t.long_window_ms + SETTLE_MS, step)
            phases = [(0, good), (onset, mix(PER_MIN, share, bad))]
            key = _tier_key(t)
            out.append(
                _case(plan, s, "2x", onset, phases, {key: around(ideal)}, {key: ideal}, s_ms)
            )
        if "reset" in scenarios:
            # The outage fills the longest short window, then full recovery.
            recovery = _round_up(max(t.short_window_ms for t in kept) + SETTLE_MS, step)
            ideals = {_tier_key(t): float(t.reset_seconds() * 1000) for t in kept}
            checks = {
                k: list(range(0, _round_up(v, e) + AFTER * e + 1, e)) for k, v in ideals.items()
            }
            phases = [(0, [bad]), (recovery, good)]
            out.append(_case(plan, s, "reset", recovery, phases, checks, dict(ideals), s_ms))
    return out


def _case_name(s: SLOPlan, scenario: str, checks: dict[str, list[int]]) -> str:
    return f"{s.name} {scenario}" + (f" {next(iter(checks))}" if scenario == "2x" else "")


def _case(
    plan: ServicePlan,
    s: SLOPlan,
    scenario: str,
    change: int,
    phases: list[tuple[int, Sequence[Klass]]],
    checks: dict[str, list[int]],
    workbook: dict[str, float | None],
    scrape_ms: int,
) -> Case:
    times = sorted({change + c for cs in checks.values() for c in cs})
    group = {
        "name": _case_name(s, scenario, checks),
        "interval": format_duration_ms(scrape_ms),
        "input_series": series(plan, phases, times[-1], scrape_ms),
        "alert_rule_test": [
            {
                "eval_time": format_duration_ms(t),
                "alertname": naming.ALERT_ERROR_BUDGET_BURN,
                "exp_alerts": [],
            }
            for t in times
        ],
    }
    return Case(s, scenario, change, checks, workbook, group)


def firing(output: str) -> dict[tuple[str, int], set[tuple[str, str]]]:
    """(test group name, eval time ms) → {(slo, tier)} firing there, from promtool's failures."""
    return {
        key: {(a["slo"], f"{a['long_window']}/{a['short_window']}") for a in alerts}
        for key, alerts in _rules.firing(output).items()
    }


def measure(
    plan: ServicePlan,
    doc: dict[str, Any],
    work: Path,
    tiers: Sequence[str] = (),
    scenarios: Sequence[str] = SCENARIOS,
) -> list[Figure]:
    """Run the cases of ``plan`` (:func:`cases`) against rule document ``doc``; one Figure per
    tier and scenario."""
    slo_doc = slo_groups_only(doc, plan.name, tiers)
    e = evaluation_interval_ms(slo_doc)
    all_cases = cases(plan, e, tiers, scenarios)
    rules = work / f"{plan.name}.rules.yaml"
    rules.write_text(yaml.safe_dump(slo_doc, sort_keys=False), encoding="utf-8")
    test = work / f"{plan.name}.test.yaml"
    test.write_text(
        yaml.safe_dump(
            {
                "rule_files": [rules.name],
                "evaluation_interval": format_duration_ms(e),
                "tests": [c.group for c in all_cases if c.group],
            },
            sort_keys=False,
            width=1_000_000,
        ),
        encoding="utf-8",
    )
    proc = subprocess.run(
        ["promtool", "test", "rules", test.name],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    fired = firing(proc.stdout + proc.stderr)
    if proc.returncode != 0 and not fired:
        raise RuntimeError(f"promtool test rules failed:\n{proc.stdout}\n{proc.stderr}")
    figures = []
    for c in all_cases:
        for key, checks in c.checks.items():
            at = None
            name = _case_name(c.slo, c.scenario, c.checks)
            for check in checks:
                on = (c.slo.name, key) in fired.get((name, c.change_ms + check), set())
                if on != (c.scenario == "reset"):
                    at = check
                    break
            figures.append(
                Figure(
                    plan.name,
                    c.slo.name,
                    key,
                    c.scenario,
                    c.workbook[key],
                    at,
                    checks[0] if checks else 0,
                    checks[-1] if checks else 0,
                    e,
                )
            )
    return figures


def run(
    specs: Sequence[Path],
    rules_dir: Path | None,
    jobs: int,
    tiers: Sequence[str] = (),
    scenarios: Sequence[str] = SCENARIOS,
) -> list[Figure]:
    """Figures for every spec, rendering rules with this checkout unless ``rules_dir`` is given.

    One promtool run per service and tier (``jobs`` at once, longest windows first), each
    with only that tier's alerts: a 1h/5m case then evaluates no 3d window. Figures come
    back in spec, SLO and tier order."""
    plans = load_plans(find_specs([str(p) for p in specs], REPO), REPO)
    docs = {
        plan.name: rule_file(plan)
        if rules_dir is None
        else yaml.safe_load((rules_dir / f"{plan.name}.rules.yaml").read_text())
        for plan in plans
    }
    work = []
    for plan in plans:
        keys = {_tier_key(t): t.long_window_ms for s in plan.slos for t in s.tiers}
        work += [(plan, k, ms) for k, ms in keys.items() if not tiers or k in tiers]
    work.sort(key=lambda w: -w[2])

    def one(item: tuple[ServicePlan, str, int]) -> list[Figure]:
        plan, key, _ = item
        with tempfile.TemporaryDirectory(prefix=f"obsgen-detect-{plan.name}-") as tmp:
            return measure(plan, docs[plan.name], Path(tmp), [key], scenarios)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        found = [f for figures in pool.map(one, work) for f in figures]
    order = {
        (plan.name, s.name, _tier_key(t)): i
        for i, (plan, s, t) in enumerate(
            (plan, s, t) for plan in plans for s in plan.slos for t in s.tiers
        )
    }
    order_scenario = {x: i for i, x in enumerate(SCENARIOS)}
    return sorted(
        found, key=lambda f: (order[(f.service, f.slo, f.tier)], order_scenario[f.scenario])
    )


def explain_figures(plans: Sequence[ServicePlan]) -> dict[tuple[str, str, str, str], int | None]:
    """``obsgen explain``'s times (ms) for this checkout's rules, keyed like the measured
    figures: (service, slo, tier, scenario); None where the tier never fires (or, for ``2x``,
    where twice the threshold is over 100 %)."""
    out: dict[tuple[str, str, str, str], int | None] = {}
    for plan in plans:
        how = slo.Sampling(plan.evaluation_interval_ms, plan.scrape_interval_ms)
        for s in plan.slos:
            for t in s.tiers:
                key = (plan.name, s.name, _tier_key(t))
                double = 2 * t.threshold
                out[(*key, "total")] = slo.detection_ms(t, Fraction(1), how)
                out[(*key, "2x")] = slo.detection_ms(t, double, how) if double <= 1 else None
                out[(*key, "reset")] = slo.reset_ms(t, how)
    return out


def intervals(plans: Sequence[ServicePlan]) -> dict[str, str]:
    """Per service its ``evaluation / scrape`` interval, e.g. ``1m / 15s``."""
    return {
        p.name: f"{format_duration_ms(p.evaluation_interval_ms)} / "
        f"{format_duration_ms(p.scrape_interval_ms)}"
        for p in plans
    }


def _workbook_text(ms: float | None) -> str:
    if ms is None:
        return "n/a"
    return (
        f"{ms / 1000:g}s"
        if ms < 60_000
        else format_duration_ms(int(ms)) + ("" if ms == int(ms) else f" (+{(ms - int(ms)):g}ms)")
    )


def report(
    figures: Sequence[Figure],
    before: Sequence[Figure] = (),
    explain: dict[tuple[str, str, str, str], int | None] | None = None,
    every: dict[str, str] | None = None,
) -> str:
    """One markdown row per tier: the service's evaluation / scrape interval (``every``, when
    given), then per scenario the Workbook's figure, the ``before`` figure (when given),
    ``obsgen explain``'s figure (``explain``, when given) and the measured one; then whether
    every measured time lies within [Workbook, Workbook + one evaluation interval] and equals
    explain's."""
    rows: dict[tuple[str, str, str], dict[str, Figure]] = {}
    for f in figures:
        rows.setdefault((f.service, f.slo, f.tier), {})[f.scenario] = f
    old = {(f.service, f.slo, f.tier, f.scenario): f for f in before}
    scenarios = [x for x in SCENARIOS if any(x in by for by in rows.values())]
    table, misses, differ = [], [], []
    for (service, slo_name, tier), by in rows.items():
        cells: list[str] = [service, slo_name, tier]
        if every is not None:
            cells.append(every.get(service, "-"))
        for scenario in scenarios:
            f = by.get(scenario)
            was = old.get((service, slo_name, tier, scenario))
            cells.append("-" if f is None else _seconds(f.workbook_ms))
            if before:
                cells.append("-" if was is None else was.text())
            if explain is not None:
                predicted = explain.get((service, slo_name, tier, scenario))
                cells.append("n/a" if predicted is None else _ms(predicted))
                if f is not None and f.workbook_ms is not None and predicted != f.measured_ms:
                    differ.append(f"{service} {slo_name} {tier} {scenario}")
            cells.append("-" if f is None else f.text())
            if f is not None and not f.within_one_evaluation():
                misses.append(f"{service} {slo_name} {tier} {scenario}")
        table.append(cells)
    headers = ["service", "slo", "tier", *(["evaluation / scrape"] if every is not None else [])]
    names = {"total": "total outage", "2x": "2× factor", "reset": "reset"}
    for scenario in scenarios:
        headers += [
            f"{names[scenario]}: Workbook",
            *(["before"] if before else []),
            *(["explain"] if explain is not None else []),
            "measured",
        ]
    verdict = (
        "Every measured time is within [Workbook, Workbook + one evaluation interval]: **yes**."
        if not misses
        else "Outside [Workbook, Workbook + one evaluation interval]: " + ", ".join(misses)
    )
    if explain is not None:
        verdict += (
            " Measured = `obsgen explain`: **yes**."
            if not differ
            else " Measured ≠ `obsgen explain`: " + ", ".join(differ)
        )
    return markdown_table(headers, table) + "\n\n" + verdict


def _seconds(ms: float | None) -> str:
    return "n/a" if ms is None else seconds_text(Fraction(ms) / 1000)


def main(argv: list[str] | None = None) -> int:
    """Parse options, measure, print the table and the command."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="*", type=Path, default=[REPO / "specs"])
    parser.add_argument("--rules-dir", type=Path, help="read <service>.rules.yaml from here")
    parser.add_argument("--jobs", type=int, default=2, help="promtool processes at once")
    parser.add_argument("--json", type=Path, help="also write the raw figures to this file")
    parser.add_argument(
        "--before", type=Path, help="figures (--json) of an earlier run, shown beside these"
    )
    parser.add_argument("--tiers", default="", help="only these tiers, e.g. 1h/5m,6h/30m")
    parser.add_argument(
        "--scenarios", default=",".join(SCENARIOS), help="a subset of total,2x,reset"
    )
    parser.add_argument(
        "--from-json", type=Path, help="print the table from these figures (--json), no run"
    )
    args = parser.parse_args(argv)
    tiers = [x for x in args.tiers.split(",") if x]
    if args.from_json:
        figures = [Figure(**f) for f in json.loads(args.from_json.read_text())]
    else:
        figures = run(args.specs, args.rules_dir, args.jobs, tiers, args.scenarios.split(","))
    if args.json:
        args.json.write_text(json.dumps([asdict(f) for f in figures], indent=1))
    print(f"# Time to page\n\nMachine: {machine()}\n")
    before = []
    if args.before:
        before = [Figure(**f) for f in json.loads(args.before.read_text())]
    plans = load_plans(find_specs([str(p) for p in args.specs], REPO), REPO)
    # explain's figures describe this checkout's rules, not those of another --rules-dir.
    explain = explain_figures(plans) if args.rules_dir is None else None
    print(report(figures, before, explain, intervals(plans)))
    print(f"\nCommand: `{command_line()}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
