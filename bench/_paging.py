"""Time to page and false pages of obsgen's and Sloth's rules for one SLO, measured with
``promtool test rules`` (the real PromQL engine), for bench/sloth_compare.py.

Scenarios: a total outage and a burn just above each Workbook factor after healthy history
filling the longest window (every evaluation from the onset checked), and healthy and noisy
traffic within budget (every evaluation of the checked span). Both rule files are pruned to
their burn-rate alerts and what those read (:func:`_rules.prune`); promtool lists the alerts
that fire at each check (:func:`_rules.firing`).
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import subprocess
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import _rules
import _sloth
import yaml
from _common import markdown_table
from detection import PER_MIN, mix
from detection import series as step_series

from generator import naming, slo
from generator.builders.rulefile import rule_file
from generator.cases.slo_cases import bad_class
from generator.parts.promtool_series import Klass, series_text, traffic
from generator.plan import ServicePlan, SLOPlan
from generator.promql import go_float
from generator.units import format_duration_ms, seconds_text

PAGE, TICKET = "critical", "warning"
ABOVE = Fraction(105, 100)  # burn-rate scenarios run 5 % above each Workbook factor
WORKBOOK_FACTORS = (Fraction(144, 10), Fraction(6), Fraction(3), Fraction(1))
HEALTHY_BURN = Fraction(1, 2)  # healthy traffic burns half the budget
HEALTHY_HOURS = 6  # hours of healthy traffic checked
NOISY_PER_MIN = 2.0  # noisy traffic: a quiet endpoint, Poisson counts per scrape
NOISY_BASE = Fraction(1, 4)  # base bad share × budget
NOISY_BURST = (40, 5, 6 * 60)  # burst burn (× budget, at most all bad), minutes, every … minutes
NOISY_RESTART_H = 12  # a pod restart (counters back to 0) every … hours
MARGIN_MS = 10 * 60_000  # healthy history beyond the longest window


def slo_metrics(plan: ServicePlan, slos: Sequence[SLOPlan]) -> set[str]:
    """Metric names the SLIs of ``slos`` read (both rule sets read the same)."""
    names = {
        plan.requests.name,
        *([plan.requests.failure_name] if plan.requests.failure_name else []),
    }
    for s in slos:
        if s.histogram is not None:
            names |= {n + suffix for n in s.histogram.names for suffix in ("_bucket", "_count")}
    return names


def slo_counters(
    plan: ServicePlan, slos: Sequence[SLOPlan], classes: Sequence[Klass]
) -> dict[Any, float]:
    wanted = slo_metrics(plan, slos)
    return {k: v for k, v in traffic(plan, classes).counters.items() if k[0] in wanted}


@dataclass(frozen=True)
class Scenario:
    """One promtool test group: a name, its input series, the evaluations checked (ms) and
    when the change happened (``onset``, ms); ``workbook``: per severity the Workbook's time
    to fire (ms) or None where no tier of it can fire."""

    name: str
    series: list[dict[str, str]]
    onset: int
    checks: list[int]
    workbook: dict[str, float | None]
    peaks: tuple[int, ...] = ()  # long windows (ms) whose peak ratio is asked for


def _workbook(s: SLOPlan, share: Fraction) -> dict[str, float | None]:
    out: dict[str, float | None] = {PAGE: None, TICKET: None}
    for t in s.tiers:
        if share > t.threshold:
            ms = float(t.detection_seconds(share) * 1000)
            best = out[t.severity]
            out[t.severity] = ms if best is None else min(best, ms)
    return out


def _only(plan: ServicePlan, s: SLOPlan, rows: list[dict[str, str]]) -> list[dict[str, str]]:
    wanted = slo_metrics(plan, [s])
    return [r for r in rows if re.split(r"[{ ]", r["series"], maxsplit=1)[0] in wanted]


def onset_scenarios(plan: ServicePlan, s: SLOPlan, factors: Sequence[Fraction]) -> list[Scenario]:
    """A total outage and a burn 5 % above each of ``factors`` (× budget), each after healthy
    traffic filling the longest window; checks at every evaluation from the onset until the
    slowest expected alert plus 10 evaluations — and an hour more where a tier's long window
    sums obsgen's hourly tiles (:func:`generator.slo.tiled`: it may fire up to an hour later)."""
    e = plan.evaluation_interval_ms
    tiles = any(slo.tiled(t.long_window_ms, e) for t in s.tiers)
    slack = 10 * e + (slo.TILE_MS if tiles else 0)
    onset = -(-(max(t.long_window_ms for t in s.tiers) + MARGIN_MS) // e) * e
    bad = bad_class(s)
    out = []
    for factor in (None, *factors):
        share = Fraction(1) if factor is None else factor * ABOVE * s.error_budget
        if share > 1:
            continue
        workbook = _workbook(s, share)
        last = max(v for v in workbook.values() if v is not None)
        end = onset + int(-(-last // e)) * e + slack
        after = (
            [Klass(PER_MIN, bad.error, bad.durations)]
            if factor is None
            else mix(PER_MIN, share, bad)
        )
        phases = [(0, [Klass(PER_MIN)]), (onset, after)]
        rows = _only(plan, s, step_series(plan, phases, end, plan.scrape_interval_ms))
        name = (
            "total outage"
            if factor is None
            else f"{go_float(float(factor * ABOVE))}× (5 % above {go_float(float(factor))}×)"
        )
        out.append(Scenario(name, rows, onset, list(range(onset + e, end + 1, e)), workbook))
    return out


def _poisson(rng: random.Random, mean: float) -> int:
    limit, k, p = math.exp(-mean), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def noise_scenarios(plan: ServicePlan, s: SLOPlan, hours: float, seed: int) -> list[Scenario]:
    """Healthy traffic (``HEALTHY_BURN`` × budget bad, steady; every window's ratio is constant
    once the warm-up fills it, so ``HEALTHY_HOURS`` are checked) and noisy traffic (Poisson
    counts at ``NOISY_PER_MIN``, ``NOISY_BASE`` × budget bad, bursts ``NOISY_BURST``, a
    restart every ``NOISY_RESTART_H`` hours; ``hours`` checked), both within budget: checks
    at every evaluation after a warm-up filling the longest window."""
    e, scrape = plan.evaluation_interval_ms, plan.scrape_interval_ms
    warm = -(-(max(t.long_window_ms for t in s.tiers) + MARGIN_MS) // e) * e
    end = warm + int(hours * 3_600_000) // e * e
    checks = list(range(warm + e, end + 1, e))
    calm = warm + int(min(hours, HEALTHY_HOURS) * 3_600_000) // e * e
    peaks = tuple(sorted({t.long_window_ms for t in s.tiers}))
    bad = bad_class(s)
    budget = s.error_budget
    healthy_rows = _only(
        plan, s, step_series(plan, [(0, mix(PER_MIN, HEALTHY_BURN * budget, bad))], calm, scrape)
    )
    good_unit = slo_counters(plan, [s], [Klass(1)])
    bad_unit = slo_counters(plan, [s], [Klass(1, bad.error, bad.durations)])
    keys = sorted(set(good_unit) | set(bad_unit))
    rng = random.Random(seed)
    burn, minutes, every = NOISY_BURST
    steps = end // scrape
    per_scrape = NOISY_PER_MIN * scrape / 60_000
    burst_steps = {
        first + i
        for period in range(0, steps, every * 60_000 // scrape)
        for first in [period + rng.randrange(every * 60_000 // scrape)]
        for i in range(minutes * 60_000 // scrape)
    }
    restart = NOISY_RESTART_H * 3_600_000 // scrape
    totals = dict.fromkeys(keys, 0)
    values: dict[Any, list[str]] = {k: ["0"] for k in keys}
    for step in range(1, steps + 1):
        if step % restart == 0:
            totals = dict.fromkeys(keys, 0)
        share = min(1.0, float((burn if step in burst_steps else NOISY_BASE) * budget))
        n = _poisson(rng, per_scrape)
        n_bad = sum(rng.random() < share for _ in range(n))
        for k in keys:
            totals[k] += round((n - n_bad) * good_unit.get(k, 0) + n_bad * bad_unit.get(k, 0))
            values[k].append(str(totals[k]))
    noisy_rows = [
        {"series": series_text(name, dict(labels)), "values": " ".join(values[(name, labels)])}
        for name, labels in keys
    ]
    none: dict[str, float | None] = {PAGE: None, TICKET: None}
    return [
        Scenario("healthy", healthy_rows, warm, [t for t in checks if t <= calm], none, peaks),
        Scenario("noisy", noisy_rows, warm, checks, none, peaks),
    ]


def _peak_query(
    ruleset: str, plan: ServicePlan, s: SLOPlan, window_ms: int, over_ms: int, scenario: str
) -> str:
    """The peak of ``ruleset``'s recorded error ratio over ``window_ms`` in the last
    ``over_ms``, labelled with the scenario (promtool names no test group beside a failed
    expression)."""
    if ruleset == "obsgen":
        record = naming.record(plan.group_by, naming.SLI_ERROR, naming.ratio_rate(window_ms))
        sel = f'{record}{{service="{plan.name}",slo="{s.name}"}}'
    else:
        w = format_duration_ms(window_ms)
        sel = f'slo:sli_error:ratio_rate{w}{{sloth_service="{plan.name}",sloth_slo="{s.name}"}}'
    peak = f"max(max_over_time({sel}[{format_duration_ms(over_ms)}]))"
    return f'label_replace({peak}, "scenario", "{scenario}", "", "")'


def promtool_run(
    ruleset: str,
    plan: ServicePlan,
    s: SLOPlan,
    doc: dict[str, Any],
    scenarios: list[Scenario],
    work: Path,
    promtool: str,
) -> dict[str, Any]:
    """Run ``scenarios`` against ``ruleset``'s rules for ``s`` (pruned to its burn-rate
    alerts and what they read); per scenario the firing (time ms, severity) pairs after the
    onset and the peak ratio of each asked window over the checked span."""
    if ruleset == "obsgen":
        group = naming.group_name(plan.name, f"slo.{s.name}")
        alert = naming.ALERT_ERROR_BUDGET_BURN
        pruned = _rules.prune(doc, lambda g: g["name"] == group, lambda r: r["alert"] == alert)
    else:
        alert = _sloth.ALERT
        names = {_sloth.group_name(k, plan.name, s.name) for k in _sloth.GROUP_KINDS}
        pruned = _rules.prune(doc, lambda g: g["name"] in names, lambda r: True)
    folder = work / f"{ruleset}-{s.name}"
    folder.mkdir(parents=True)
    (folder / "rules.yaml").write_text(yaml.safe_dump(pruned, sort_keys=False))
    tests = []
    peak_exprs: dict[str, dict[int, str]] = {}
    for sc in scenarios:
        span = sc.checks[-1] - sc.onset
        exprs = {w: _peak_query(ruleset, plan, s, w, span, sc.name) for w in sc.peaks}
        peak_exprs[sc.name] = exprs
        tests.append(
            {
                "name": sc.name,
                "interval": format_duration_ms(plan.scrape_interval_ms),
                "input_series": sc.series,
                "alert_rule_test": [
                    {"eval_time": format_duration_ms(t), "alertname": alert, "exp_alerts": []}
                    for t in sc.checks
                ],
                "promql_expr_test": [
                    {"expr": x, "eval_time": format_duration_ms(sc.checks[-1]), "exp_samples": []}
                    for x in exprs.values()
                ],
            }
        )
    (folder / "test.yaml").write_text(
        yaml.safe_dump(
            {
                "rule_files": ["rules.yaml"],
                "evaluation_interval": format_duration_ms(plan.evaluation_interval_ms),
                # Without an order promtool evaluates the groups of one instant in random order:
                # Sloth's alerts would read its SLI group's records of this instant or of the
                # last one by chance. File order: the records first, its best case.
                "group_eval_order": [g["name"] for g in pruned["groups"]],
                "tests": tests,
            },
            sort_keys=False,
            width=1_000_000,
        )
    )
    clock = time.monotonic()
    with (folder / "output.txt").open("w+") as log:
        proc = subprocess.Popen(
            [promtool, "test", "rules", "test.yaml"], cwd=folder, stdout=log, stderr=log
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        output = log.read()
    if proc.returncode != 0 and "FAILED" not in output:
        raise RuntimeError(f"promtool test rules ({ruleset}, {s.name}) failed:\n{output[-3000:]}")
    fired = _rules.firing(output)
    out: dict[str, Any] = {
        "seconds": time.monotonic() - clock,
        "cpu": usage.ru_utime + usage.ru_stime,
        "done": time.monotonic(),
    }
    for sc in scenarios:
        events = sorted(
            (t - sc.onset, a.get("severity", "?"))
            for (name, t), alerts in fired.items()
            if name == sc.name
            for a in alerts
        )
        peaks = {}
        for w, expr in peak_exprs[sc.name].items():
            # promtool prints one sample without brackets: `got: {scenario="x"} 2.2E-04`.
            got = r"got: \[?" + re.escape(f'{{scenario="{sc.name}"}} ') + r"([^\s\]]+)"
            match = re.search(re.escape(json.dumps(expr)) + r",[^\n]*\n[^\n]*\n\s*" + got, output)
            if match is None:
                raise RuntimeError(f"promtool printed no peak for {expr} ({ruleset})")
            peaks[w] = float(match.group(1)) / float(s.error_budget)
        out[sc.name] = {"events": events, "peaks": peaks}
    return out


def _when(ms: int | float | None) -> str:
    return "never" if ms is None else seconds_text(Fraction(int(ms), 1000))


def _first(events: list[tuple[int, str]], severity: str) -> int | None:
    return next((t for t, sev in events if sev == severity), None)


def _measured(
    events: list[tuple[int, str]], severity: str, expected: float | None, last: int
) -> str:
    first = _first(events, severity)
    if first is not None:
        return _when(first)
    return "never" if expected is None else f"> {_when(last)}"


def report_detection(
    plan: ServicePlan,
    slos: list[SLOPlan],
    scenarios: dict[str, list[Scenario]],
    runs: dict[Any, Any],
) -> str:
    """Markdown: per SLO and scenario, the Workbook's time to page / ticket and both measured."""
    rows = []
    for s in slos:
        for sc in scenarios[s.name]:
            if sc.peaks:
                continue
            last = sc.checks[-1] - sc.onset
            cells = [f"{s.name} ({go_float(float(s.objective))} %)", sc.name]
            for severity in (PAGE, TICKET):
                expected = sc.workbook[severity]
                cells.append(
                    "never" if expected is None else seconds_text(Fraction(expected) / 1000)
                )
                for ruleset in ("obsgen", "sloth"):
                    events = runs[(ruleset, s.name)][sc.name]["events"]
                    cells.append(_measured(events, severity, expected, last))
            rows.append(cells)
    return markdown_table(
        [
            "SLO",
            "scenario (burn rate)",
            "page: Workbook",
            "obsgen",
            "Sloth",
            "ticket: Workbook",
            "obsgen",
            "Sloth",
        ],
        rows,
    )


def _episodes(events: list[tuple[int, str]], severity: str, e: int) -> tuple[int, int]:
    times = sorted({t for t, sev in events if sev == severity})
    starts = sum(1 for i, t in enumerate(times) if i == 0 or t - times[i - 1] > e)
    return starts, len(times)


def report_noise(
    plan: ServicePlan,
    slos: list[SLOPlan],
    scenarios: dict[str, list[Scenario]],
    runs: dict[Any, Any],
) -> str:
    """Markdown: pages and tickets (episodes, firing evaluations) per SLO and traffic, and the
    peak burn rate each rule set recorded over every tier's long window."""
    rows = []
    e = plan.evaluation_interval_ms
    for s in slos:
        for sc in scenarios[s.name]:
            if not sc.peaks:
                continue
            cells = [
                f"{s.name} ({go_float(float(s.objective))} %)",
                sc.name,
                _when(sc.checks[-1] - sc.onset),
            ]
            for severity in (PAGE, TICKET):
                for ruleset in ("obsgen", "sloth"):
                    n, evals = _episodes(runs[(ruleset, s.name)][sc.name]["events"], severity, e)
                    cells.append(f"{n} ({evals})")
            peaks = []
            for w in sc.peaks:
                o, t = (runs[(r, s.name)][sc.name]["peaks"][w] for r in ("obsgen", "sloth"))
                peaks.append(f"{format_duration_ms(w)} {o:.2f} / {t:.2f}")
            cells.append(", ".join(peaks))
            rows.append(cells)
    return markdown_table(
        [
            "SLO",
            "traffic",
            "checked",
            "pages obsgen",
            "pages Sloth",
            "tickets obsgen",
            "tickets Sloth",
            "peak burn over each long window (× budget), obsgen / Sloth",
        ],
        rows,
    )


def run_promtool(
    plan: ServicePlan,
    slos: list[SLOPlan],
    docs: dict[str, dict[str, Any]],
    parts: Sequence[str],
    factors: Sequence[Fraction],
    noise_hours: float,
    work: Path,
    promtool: str,
) -> tuple[dict[str, list[Scenario]], dict[Any, Any]]:
    """Every scenario of ``parts`` for each SLO, against both rule sets: two promtool
    processes at a time, one per rule set and SLO."""
    scenarios = {}
    for i, s in enumerate(slos):
        found = onset_scenarios(plan, s, factors) if "detection" in parts else []
        if "noise" in parts:
            found += noise_scenarios(plan, s, noise_hours, seed=42 + i)
        scenarios[s.name] = found
    ours = rule_file(plan)
    jobs = [(r, s) for s in slos for r in ("obsgen", "sloth")]

    def one(job: tuple[str, SLOPlan]) -> dict[str, Any]:
        ruleset, s = job
        doc = ours if ruleset == "obsgen" else docs[plan.name]
        return promtool_run(ruleset, plan, s, doc, scenarios[s.name], work, promtool)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, jobs))
    return scenarios, {(r, s.name): out for (r, s), out in zip(jobs, results, strict=True)}
