"""obsgen and the real Sloth 0.16, side by side: the same SLOs, the same series, Prometheus 3.16.

Parts (``--parts``): ``cost``, rule-evaluation time of both rule sets in one Prometheus 3 over
the same backfilled history and live tail; ``detection``, time to page and to ticket on a total
outage and just above each Workbook burn rate (promtool 3 ``test rules``); ``noise``, pages
and tickets on healthy and on noisy traffic; ``generate``, ``obsgen render`` of 1,000 services
against ``sloth generate`` of the same SLOs. Every choice is explained in BENCHMARKS.md ("obsgen
and Sloth, side by side"); ``--small`` is a quick run for development. Prints markdown.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import _paging
import _sloth
import _tsdb
from _common import REPO, Prometheus, command_line, machine, markdown_table
from _fleet_specs import realistic_specs
from render_scale import Run, obsgen, timed
from toolchain import binary, tools

from generator import naming
from generator.builders.rulefile import rule_file
from generator.builders.slo_rules import events_record, tiles_record
from generator.cases.slo_cases import bad_class
from generator.parts.promtool_series import Klass, series_text
from generator.plan import ServicePlan
from generator.render import find_specs, load_plans
from generator.units import format_duration_ms

STEP_S = 30  # scrape and evaluation interval of both rule sets, history step
TARGET = '{version: "3", scrapeInterval: 30s, evaluationInterval: 30s}'  # the cost run
PAGING_TARGET = '{version: "3", scrapeInterval: 30s}'  # promtool runs: 1m evaluations (default)
PARTS = ("cost", "detection", "noise", "generate")
COST_BURN = Fraction(1, 5)  # the cost run's steady bad share, × each SLO's budget


# --- the fleet and both rule sets --------------------------------------------------------


def fleet(folder: Path, count: int, target: str | None) -> list[ServicePlan]:
    """The first ``count`` services of the realistic fleet (``_fleet_specs``), resolved, in
    fleet order; ``target`` replaces each spec's ``prometheus`` mapping."""
    realistic_specs(folder, count, prometheus=target)
    plans = load_plans(find_specs([str(folder)], REPO), REPO)
    return sorted(plans, key=lambda p: p.name.rsplit("-", 1)[1])


def slo_doc(plan: ServicePlan) -> dict[str, Any]:
    """obsgen's rule groups for ``plan``'s SLOs (records, burn-rate and budget alerts)."""
    prefix = naming.group_name(plan.name, "slo.")
    return {"groups": [g for g in rule_file(plan)["groups"] if g["name"].startswith(prefix)]}


def sloth_docs(plans: list[ServicePlan], work: Path, sloth: str) -> dict[str, dict[str, Any]]:
    """Sloth's generated rule file per service (``sloth generate`` over a folder of specs)."""
    specs, out = work / "sloth-specs", work / "sloth-rules"
    _sloth.write_specs(plans, specs)
    out.mkdir(parents=True, exist_ok=True)
    _tsdb.run_checked(_sloth.generate_command(sloth, specs, out), "sloth generate")
    return {p.name: yaml.safe_load((out / f"{p.name}.yaml").read_text()) for p in plans}


# --- cost: one Prometheus 3 with both rule sets -------------------------------------------


class Steady:
    """The cost run's series: per service ``pods`` pods of steady traffic, 0.8–1.4 requests a
    second each, ``COST_BURN`` × each SLO's budget bad; counters are exact functions of time
    (seconds since the epoch, 0 at ``origin``)."""

    def __init__(self, plans: list[ServicePlan], pods: list[int], origin: int) -> None:
        self.plans, self.pods, self.origin = plans, pods, origin
        self.rows = [self._rows(i) for i in range(len(plans))]

    def _rows(self, index: int) -> list[tuple[str, float]]:
        """(series text, events per second) of every series of service ``index``."""
        plan = self.plans[index]
        rest = 1 - sum(COST_BURN * s.error_budget for s in plan.slos)
        classes = [Klass(float(rest))]
        for s in plan.slos:
            bad = bad_class(s)
            classes.append(Klass(float(COST_BURN * s.error_budget), bad.error, bad.durations))
        out = []
        for pod in range(self.pods[index]):
            per_s = 0.8 + (pod % 7) * 0.1
            extra = {"pod": f"{plan.deployment_name}-{pod}", "instance": f"10.1.{index}.{pod}:8000"}
            for (name, labels), share in sorted(
                _paging.slo_counters(plan, plan.slos, classes).items()
            ):
                out.append((series_text(name, {**dict(labels), **extra}), share * per_s))
        return out

    def exposition(self, t: float) -> str:
        """Text exposition of every series at time ``t`` (the live tail)."""
        return "".join(
            f"{text} {rate * (t - self.origin):.6f}\n" for rows in self.rows for text, rate in rows
        )

    def write(self, path: Path, services: Sequence[int], end: int) -> int:
        """OpenMetrics history of ``services`` every ``STEP_S`` until ``end``; sample count."""
        stamps = range(self.origin, end + 1, STEP_S)
        count = 0
        with path.open("w", encoding="utf-8") as out:
            for i in services:
                for text, rate in self.rows[i]:
                    out.write(
                        "".join(f"{text} {rate * (t - self.origin):.6f} {t}\n" for t in stamps)
                    )
                    count += len(stamps)
            out.write("# EOF\n")
        return count


def run_cost(
    plans: list[ServicePlan],
    docs: dict[str, dict[str, Any]],
    work: Path,
    days: float,
    samples: int,
    prometheus: str,
    promtool: str,
    pods: int | None = None,
    recorded_days: float = 0.0,
    quiet: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Both rule sets in one Prometheus 3 over the same history and live tail: per-group
    durations, the recorded ratios of both beside the scenario's exact ones, firing alerts.
    ``quiet()`` returns once nothing else of this run uses the CPU: the timed evaluations
    start after it (other parts may run during the setup). ``pods`` per service: each spec's
    replicas when None. ``recorded_days`` (> ``days``): the recorded series that long windows
    read reach that far back (:func:`_tsdb.extend_back`), raw history ``days``."""
    now = int(time.time()) // STEP_S * STEP_S
    origin = now - int(days * 86400)
    steady = Steady(plans, [pods or p.replicas for p in plans], origin)
    ours = {"groups": [g for p in plans for g in slo_doc(p)["groups"]]}
    theirs = {"groups": [g for p in plans for g in docs[p.name]["groups"]]}
    ours_path, theirs_path = work / "obsgen.rules.yaml", work / "sloth.rules.yaml"
    ours_path.write_text(yaml.safe_dump(ours, sort_keys=False))
    theirs_path.write_text(yaml.safe_dump(theirs, sort_keys=False))
    backfill = work / "backfill.rules.yaml"
    records = {events_record(p) for p in plans} | {"slo:sli_error:ratio_rate5m"}
    backfill.write_text(yaml.safe_dump(_tsdb.backfill_rules((ours, theirs), records)))
    tail = _tsdb.serve_exposition(steady.exposition)
    try:
        port = tail.server_address[1]
        config, log, data = work / "prometheus.yml", work / "prometheus.log", work / "data"
        config.write_text(
            yaml.safe_dump(_tsdb.scrape_config("sloth-compare", port, [], STEP_S, STEP_S))
        )
        # Services per OpenMetrics file, up to ~1,000 series: promtool holds a whole file in
        # memory (2.42 took 1.9 GiB for 1,500 series of 3 days).
        chunks: list[list[int]] = [[]]
        for i, rows in enumerate(steady.rows):
            if chunks[-1] and sum(len(steady.rows[j]) for j in chunks[-1]) + len(rows) > 1000:
                chunks.append([])
            chunks[-1].append(i)
        history = _tsdb.build_history(
            config=config,
            data=data,
            log=log,
            write_chunk=lambda path, i: steady.write(path, chunks[i], now),
            chunks=len(chunks),
            backfill=backfill,
            start=origin,
            end=now,
            step_s=STEP_S,
            promtool=promtool,
            prometheus=prometheus,
        )
        recorded = 0
        if recorded_days > days:
            clock = time.monotonic()
            recorded = _tsdb.extend_back(
                config=config,
                data=data,
                log=log,
                records=records,
                at=now,
                average_s=min(86400, now - origin),
                start=now - int(recorded_days * 86400),
                end=origin - STEP_S,
                step_s=STEP_S,
                promtool=promtool,
                prometheus=prometheus,
            )
            history.timings["recorded series extended back"] = time.monotonic() - clock
        # obsgen's hourly tiles (the sum of an hour of increments, one sample an hour): their
        # rule reads the increments over a range, which a backfill cannot inline, so they are
        # written at the increments' steady average × evaluations an hour, on the hour, over
        # the whole history up to now (the live rules add the next one, an hour later).
        tiles = {
            tiles_record(p): f"avg_over_time({events_record(p)}[{min(86400, now - origin)}s])"
            f" * {3600_000 // p.evaluation_interval_ms}"
            for p in plans
        }
        clock = time.monotonic()
        recorded += _tsdb.extend_back(
            config=config,
            data=data,
            log=log,
            records=set(tiles),
            at=now,
            average_s=min(86400, now - origin),
            start=(now - int(max(days, recorded_days) * 86400)) // 3600 * 3600 + 3600,
            end=now // 3600 * 3600,
            step_s=3600,
            promtool=promtool,
            prometheus=prometheus,
            queries=tiles,
        )
        history.timings["hourly tiles written"] = time.monotonic() - clock
        rules = [ours_path, theirs_path]
        config.write_text(
            yaml.safe_dump(_tsdb.scrape_config("sloth-compare", port, rules, STEP_S, STEP_S))
        )
        timings = dict(history.timings)
        with Prometheus(config, data, log, binary=prometheus) as prom:
            clock = time.monotonic()
            _tsdb.wait_for_compaction(prom, timeout_s=150)
            timings["startup compaction wait"] = time.monotonic() - clock
            clock = time.monotonic()
            quiet()
            timings["waiting for the promtool runs"] = time.monotonic() - clock
            clock = time.monotonic()
            durations = _tsdb.collect_durations(
                prom, samples, timeout_s=max(240, samples * STEP_S * 4), after=time.time()
            )
            timings["rule evaluations"] = time.monotonic() - clock
            ratios = cost_ratios(prom, plans)
            rules = rule_times(prom)
            alerts = [a["labels"] for a in prom.api("alerts")["alerts"] if a["state"] == "firing"]
    finally:
        tail.shutdown()
    series = sum(len(rows) for rows in steady.rows)
    return {
        "durations": durations,
        "ratios": ratios,
        "rules": rules,
        "alerts": alerts,
        "timings": timings,
        "series": series,
        "samples": history.samples,
        "recorded_samples": recorded,
        "days": days,
        "recorded_days": max(days, recorded_days),
        "pods": sum(steady.pods),
    }


COST_WINDOWS_MS = (300_000, 3_600_000, 21_600_000, 86_400_000, 259_200_000, 2_592_000_000)


def cost_ratios(prom: Prometheus, plans: list[ServicePlan]) -> list[tuple[str, float, float]]:
    """Per window: the largest relative deviation of each rule set's recorded error ratio from
    the scenario's exact one (``COST_BURN`` × budget) over every SLO: (window, obsgen, Sloth);
    infinite where a ratio is missing."""
    out = []
    for ms in COST_WINDOWS_MS:
        w = format_duration_ms(ms)
        worst = [0.0, 0.0]
        for plan in plans:
            ours = naming.record(plan.group_by, naming.SLI_ERROR, naming.ratio_rate(ms))
            for s in plan.slos:
                exact = float(COST_BURN * s.error_budget)
                queries = (
                    f'max({ours}{{service="{plan.name}",slo="{s.name}"}})',
                    f"max(slo:sli_error:ratio_rate{w}"
                    f'{{sloth_service="{plan.name}",sloth_slo="{s.name}"}})',
                )
                for i, query in enumerate(queries):
                    result = prom.api("query", query=query)["result"]
                    value = float(result[0]["value"][1]) if result else math.inf
                    worst[i] = max(worst[i], abs(value / exact - 1))
        out.append((w, worst[0], worst[1]))
    return out


def rule_times(prom: Prometheus) -> list[tuple[str, str, float]]:
    """(rule set, rule, seconds) of every rule's last evaluation, summed over the SLOs: records
    by name, alerts by name and long window (obsgen) or severity (Sloth); costliest first."""
    sums: dict[tuple[str, str], float] = {}
    for group in prom.api("rules")["groups"]:
        who = "obsgen" if group["name"].startswith("obsgen.") else "Sloth"
        for rule in group["rules"]:
            labels = rule.get("labels", {})
            name = rule["name"]
            if rule["type"] == "alerting":
                which = ("long_window", "sloth_severity", naming.BUDGET_LEFT)
                name = " ".join([name, *(labels[k] for k in which if k in labels)])
            key = (who, name)
            sums[key] = sums.get(key, 0.0) + float(rule.get("evaluationTime", 0.0))
    return sorted(
        ((w, n, v) for (w, n), v in sums.items()), key=lambda x: (x[0] != "obsgen", -x[2])
    )


def report_cost(case: dict[str, Any], plans: list[ServicePlan]) -> str:
    """Markdown: per SLO kind the summed medians of each rule set and their ratio."""
    by_group = {k.split(";", 1)[1]: v for k, v in case["durations"].items()}
    kinds: dict[str, list[tuple[str, str]]] = {"availability": [], "latency": []}
    for plan in plans:
        for s in plan.slos:
            kinds[s.kind].append((plan.name, s.name))
    rows = []
    for kind, slos in [*kinds.items(), ("**all SLOs**", [x for v in kinds.values() for x in v])]:
        sums = {key: [0.0] * 5 for key in ("median", "fastest")}
        for service, slo in slos:
            names = [naming.group_name(service, f"slo.{slo}")] + [
                _sloth.group_name(k, service, slo) for k in _sloth.GROUP_KINDS
            ]
            for i, name in enumerate(names):
                values = by_group.get(name)
                if not values:
                    raise RuntimeError(f"no evaluations timed for rule group {name}")
                sums["median"][i] += statistics.median(values)
                sums["fastest"][i] += min(values)
        for key in sums:
            sums[key][4] = sum(sums[key][1:4])
        m, f = sums["median"], sums["fastest"]
        rows.append(
            (
                kind,
                len(slos),
                f"{m[0] * 1000:.2f}",
                *(f"{x * 1000:.2f}" for x in m[1:4]),
                f"{m[4] * 1000:.2f}",
                f"**{m[0] / m[4]:.3f}**" if kind.startswith("**") else f"{m[0] / m[4]:.3f}",
                f"{f[0] / f[4]:.3f}",
            )
        )
    evaluations = min(len(v) for v in by_group.values())
    totals = {who: 0.0 for who in ("obsgen", "Sloth")}
    for who, _name, ms in case["rules"]:
        totals[who] += ms
    ratios = [(w, f"{o:.2e}", f"{s:.2e}") for w, o, s in case["ratios"]]
    burn = [
        a
        for a in case["alerts"]
        if a.get("alertname") in (naming.ALERT_ERROR_BUDGET_BURN, _sloth.ALERT)
    ]
    return "\n".join(
        [
            f"{len(plans)} services, {case['pods']} pods, {case['series']:,} raw series, "
            f"{case['days']:g} days of raw history ({case['samples']:,} samples), recorded series "
            f"reaching back {case['recorded_days']:g} days ({case['recorded_samples']:,} samples "
            f"before the raw history); every group evaluated every {STEP_S}s; "
            f"median and fastest of ≥ {evaluations} evaluations per group (cold one dropped), "
            "summed over the SLOs of each row:",
            "",
            markdown_table(
                [
                    "SLOs",
                    "count",
                    "obsgen (ms)",
                    "Sloth SLI records (ms)",
                    "Sloth metadata (ms)",
                    "Sloth alerts (ms)",
                    "Sloth, all (ms)",
                    "obsgen / Sloth (medians)",
                    "obsgen / Sloth (fastest)",
                ],
                rows,
            ),
            "",
            "Same SLIs: largest relative deviation of each rule set's recorded error ratio from "
            "the scenario's exact one, over every SLO, per window (the live rules started after "
            "the import, so the recorded windows miss those minutes; the shares are steady):",
            "",
            markdown_table(["window", "obsgen", "Sloth"], ratios),
            "",
            "Where the time goes: each rule's `evaluationTime` at its group's last evaluation "
            "(`/api/v1/rules`), summed over the SLOs, the most expensive rules of each set "
            "(one evaluation each, so noisier than the medians above):",
            "",
            markdown_table(
                ["rule set", "rule", "ms", "share of its set"],
                [
                    (who, f"`{name}`", f"{ms * 1000:.2f}", f"{ms / totals[who]:.0%}")
                    for who, name, ms in case["rules"]
                    if ms / totals[who] >= 0.04
                ],
            ),
            "",
            f"Burn-rate alerts firing at the end (none expected): {len(burn)}. Setup (s): "
            + ", ".join(f"{k} {v:.1f}" for k, v in case["timings"].items())
            + ".",
        ]
    )


# --- generation time ---------------------------------------------------------------------

_GROUP = re.compile(r"^\s*-?\s*name: (\S+)$")
_RULE = re.compile(r"^\s*- (record|alert): ")


def count_rules(files: Sequence[Path], slo_only: bool) -> int:
    """Rules in rule ``files``; ``slo_only``: only in SLO groups (obsgen's ``.slo.`` groups).
    Counted by line: parsing thousands of files would cost more than generating them."""
    total = 0
    for path in files:
        in_slo = not slo_only
        for line in path.read_text().splitlines():
            group = _GROUP.match(line)
            if group and slo_only:
                in_slo = ".slo." in group.group(1)
            elif in_slo and _RULE.match(line):
                total += 1
    return total


def _size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def run_generate(
    count: int, work: Path, sloth: str, all_outputs: bool
) -> tuple[list[tuple[str, ...]], int]:
    """``obsgen render`` (rules only; with ``all_outputs`` also every default output) and
    ``sloth generate`` of the same ``count`` services' SLOs, each cold; table rows and the
    number of SLOs."""
    base = work / "generate"
    specs = base / "specs"
    plans = fleet(specs, count, None)
    slos = sum(len(p.slos) for p in plans)
    _sloth.write_specs(plans, base / "sloth-specs")
    rows = []
    command, env = obsgen(None)
    renders = [("rules only", "[rules]")] + ([("default outputs", "")] if all_outputs else [])
    for label, outputs in renders:
        repo = base / f"obsgen-{label.split()[0]}"
        shutil.copytree(specs, repo / "specs")
        if outputs:
            (repo / "obsgen.yaml").write_text(f"render:\n  outputs: {outputs}\n")
        env = {**env, "OBSGEN_CACHE_DIR": str(base / f"cache-{label.split()[0]}")}
        run = timed([*command, "--skip-promtool", "-q"], repo, env)
        rule_files = list((repo / "rules").glob("*.rules.yaml"))
        size = sum(p.stat().st_size for p in rule_files)
        all_files = sum(_size(p)[0] for p in repo.iterdir() if p.is_dir() and p.name != "specs")
        rows.append(
            _gen_row(
                f"`obsgen render --skip-promtool` ({label})",
                run,
                f"{all_files:,} files, of which {len(rule_files):,} rule files "
                f"({size / 1e6:.1f} MB)",
                count_rules(rule_files, slo_only=True),
                count_rules(rule_files, slo_only=False),
            )
        )
    out = base / "sloth-rules"
    out.mkdir()
    run = timed(_sloth.generate_command(sloth, base / "sloth-specs", out), base, dict(env))
    files, size = _size(out)
    n = count_rules(list(out.glob("*.yaml")), slo_only=False)
    rows.append(
        _gen_row(
            "`sloth generate` (folder in, folder out)",
            run,
            f"{files:,} rule files ({size / 1e6:.1f} MB)",
            n,
            n,
        )
    )
    return rows, slos


def _gen_row(what: str, run: Run, written: str, slo_rules: int, rules: int) -> tuple[str, ...]:
    return (
        what,
        f"{run.wall:.1f}",
        f"{run.cpu:.1f}",
        f"{run.rss_all:.0f}",
        written,
        f"{slo_rules:,}",
        f"{rules:,}",
    )


def wait(future: Future[Any]) -> None:
    """Wait for ``future`` (raising what it raised)."""
    future.result()


# --- main --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Parse options, run the parts asked for, print their tables and the command."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--parts", default=",".join(PARTS), help="comma-separated subset of " + ",".join(PARTS)
    )
    parser.add_argument("--services", type=int, default=8, help="fleet services in the cost run")
    parser.add_argument(
        "--pods", type=int, help="pods per service in the cost run (default: each spec's replicas)"
    )
    parser.add_argument("--days", type=float, default=3.0, help="history of the cost run (days)")
    parser.add_argument(
        "--recorded-days",
        type=float,
        default=30.0,
        help="how far back the recorded series reach (the steady values copied back)",
    )
    parser.add_argument("--samples", type=int, default=6, help="timed evaluations per group")
    parser.add_argument(
        "--noise-hours", type=float, default=24.0, help="hours checked for false pages"
    )
    parser.add_argument("--generate", type=int, default=1000, help="services rendered / generated")
    parser.add_argument(
        "--all-outputs",
        action="store_true",
        help="also time obsgen render with every default output (minutes at 1,000 services)",
    )
    parser.add_argument("--small", action="store_true", help="a quick run for development")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder")
    parser.add_argument("--json", type=Path, help="also write raw results here")
    args = parser.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    factors: Sequence[Fraction] = _paging.WORKBOOK_FACTORS
    if args.small:
        args.services, args.days, args.samples = 2, 1.0, 3
        args.noise_hours, args.generate, factors = 2.0, 50, _paging.WORKBOOK_FACTORS[:1]
    prometheus, promtool = binary("prometheus3", "prometheus"), binary("prometheus3", "promtool")
    sloth = binary("sloth")
    known = tools()
    work = Path(tempfile.mkdtemp(prefix="obsgen-bench-sloth-"))
    raw: dict[str, Any] = {}
    out = [
        "# obsgen and Sloth, side by side",
        "",
        f"Machine: {machine()}; Prometheus/promtool {known['prometheus3'].release}, "
        f"Sloth {known['sloth'].release} (built from their tagged sources).",
        "",
    ]
    try:
        plans = fleet(work / "fleet", max(args.services, 1), TARGET)
        docs = sloth_docs(plans, work, sloth)
        paging = None
        pool = ThreadPoolExecutor(max_workers=1)
        if "detection" in parts or "noise" in parts:
            # The first fleet service again, at obsgen's and Prometheus's default 1m evaluation
            # interval: Sloth's rules do not depend on it (its groups set none).
            plan = fleet(work / "paging", 1, PAGING_TARGET)[0]
            if _sloth.spec(plan) != _sloth.spec(plans[0]):
                raise RuntimeError("the 1m plan's Sloth spec differs from the cost run's")
            slos = [
                next(s for s in plan.slos if s.kind == kind) for kind in ("availability", "latency")
            ]
            started = time.monotonic()
            # promtool runs during the cost run's setup (history import, backfill), never
            # during its timed evaluations.
            paging = pool.submit(
                _paging.run_promtool,
                plan,
                slos,
                docs,
                parts,
                factors,
                args.noise_hours,
                work,
                promtool,
            )
        if "cost" in parts:
            clock = time.monotonic()
            case = run_cost(
                plans[: args.services],
                docs,
                work,
                args.days,
                args.samples,
                prometheus,
                promtool,
                args.pods,
                args.recorded_days,
                quiet=lambda: None if paging is None else wait(paging),
            )
            raw["cost"] = case
            out += [
                "## Rule evaluation cost",
                "",
                report_cost(case, plans[: args.services]),
                "",
                f"Part wall time: {time.monotonic() - clock:.0f} s (with the promtool runs "
                "during its setup).",
                "",
            ]
        if paging is not None:
            scenarios, runs = paging.result()
            pool.shutdown()
            raw["promtool"] = {f"{k[0]} {k[1]}": v for k, v in runs.items()}
            where = (
                f"service `{plan.name}` ({plan.server}), promtool {known['prometheus3'].release}"
            )
            if "detection" in parts:
                out += [
                    "## Time to page",
                    "",
                    f"{where}:",
                    "",
                    _paging.report_detection(plan, slos, scenarios, runs),
                    "",
                ]
            if "noise" in parts:
                out += [
                    "## False pages",
                    "",
                    f"{where}:",
                    "",
                    _paging.report_noise(plan, slos, scenarios, runs),
                    "",
                ]
            cpu = ", ".join(f"{k[0]} {k[1]} {v['cpu']:.0f}" for k, v in runs.items())
            out += [
                f"promtool CPU seconds per run: {cpu}; wall time "
                f"{max(v['done'] for v in runs.values()) - started:.0f} s (two runs at a time).",
                "",
            ]
        if "generate" in parts:
            rows, slos_n = run_generate(args.generate, work, sloth, args.all_outputs)
            out += [
                f"## Generation: {args.generate:,} services, {slos_n:,} SLOs",
                "",
                markdown_table(
                    [
                        "command",
                        "wall (s)",
                        "CPU (s)",
                        "peak RSS (MiB)",
                        "written",
                        "SLO rules",
                        "rules",
                    ],
                    rows,
                ),
                "",
            ]
        out.append(f"Command: `{command_line()}`")
        print("\n".join(out))
        if args.json:
            args.json.write_text(json.dumps(raw, indent=1, default=str))
    finally:
        if args.keep:
            print(f"\nKept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
