"""Rule evaluation cost: obsgen's SLO rules against rules of the usual shape, in one Prometheus.

What it does, per case (``--pods N``):

1. Writes 3 days (``--days``) of history at 30 s, ending at the start of the run ("now"), as
   OpenMetrics: for each of N pods a 12-bucket latency histogram (``_bucket`` + ``_count``) and
   a request counter with ``status="2xx"|"5xx"``. The scenario: a steady 1.5 % of requests
   slower than the 2.5 s SLO threshold, 0.01 % errors, then an error burst of 5 % for the last
   60 minutes (still going on). Turned into TSDB blocks with
   ``promtool tsdb create-blocks-from openmetrics``, ``--chunk-pods`` pods per file (promtool
   holds a whole file in memory: 100 pods were 1.9 GiB), so 300 pods or more fit in memory.
2. A tiny exporter on 127.0.0.1 continues the same counters live, so short windows (5m) keep
   real data while the bench runs; Prometheus scrapes it every 30 s.
3. Renders obsgen's rules for an equivalent spec through the generator API, and writes rules
   of the usual shape: every window's error ratio from raw counters
   (``sum(rate(bad[w])) / sum(rate(total[w]))`` for 5m … 3d) and the 30-day SLI as the time
   average of the recorded 5m ratio (``sum_over_time / count_over_time``).
4. Both rule sets have recorded series that longer windows read (obsgen: the bad and total
   events of each 30 s evaluation, ``increase30s``: the bench spec's ``evaluationInterval``
   equals the history's step; usual: the 5m error ratio). Live rules only write them from now
   on, so both are backfilled over the whole history at 30 s with ``promtool tsdb
   create-blocks-from rules`` against a first Prometheus run over the raw blocks. The 3d and
   30d windows then read 3 days of data in both rule sets.
5. Restarts Prometheus on raw + backfilled blocks with both rule files loaded (evaluation
   interval ``--interval``, 30 s, the bench spec's: obsgen's increments then tile the live part
   as they tile the history), waits for its startup compaction of the overlapping blocks to
   finish, and reads ``prometheus_rule_group_last_duration_seconds`` from its
   ``/metrics`` after every evaluation until each group has ``--samples`` evaluations after the
   compaction (the first one, cold, is dropped).
6. Compares the firing ``ErrorBudgetBurn`` tiers of both rule sets with the expected ones, and
   the error ratios they record per window; reports obsgen's SLO groups against the usual shape
   (goal ≤ 0.10×) and its other groups (traffic, latency quantiles, …) with their cost per
   1,000 raw series.
7. The same on VictoriaMetrics + vmalert (``--engines``): imports the same TSDB folder (raw and
   backfilled blocks) with ``vmctl prometheus``, scrapes the same live tail, evaluates the same
   two rule files at the same interval with vmalert (reading from and remote-writing to
   VictoriaMetrics, every other flag at its default) and reads each group's time per
   evaluation from ``vmalert_iteration_duration_seconds`` (a query over HTTP included, as a
   vmalert pays it), then the same alert decisions and recorded ratios.

Prints markdown tables and the command that produced them.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _tsdb
from _common import Prometheus, command_line, machine, markdown_table
from _victoriametrics import VictoriaMetrics, VMAlert

from generator import naming
from generator.builders.rulefile import rule_file
from generator.builders.slo_rules import events_record
from generator.plan import ServicePlan, resolve
from generator.spec import load_spec
from generator.units import decimal_str, format_duration_ms

STEP_S = 30
JOB = "llm-api"
NAMESPACE = "bench"
INSTANCE = "bench"
HISTOGRAM = "http_request_duration_seconds"
REQUESTS = "http_requests_total"
THRESHOLD = 2.5  # latency SLO threshold, seconds (a bucket bound)
# Cumulative share of requests at or below each bound (slow share s applied above THRESHOLD).
BOUNDS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120)
SLOW_SHARE = 0.015  # requests slower than THRESHOLD, whole history
ERROR_BASE = 0.0001  # 5xx share before the burst
ERROR_BURST = 0.05  # 5xx share during the burst
# The burst started this long before "now" and is still going on. Every window's ratio stays
# clear of its tiers' thresholds however long the setup takes (up to ~15 minutes): at 70
# minutes the 3d ratio crossed 0.001 during a slow run and the expected decision flipped.
BURST_S = 60 * 60

SPEC = f"""\
apiVersion: obsgen/v1alpha1
kind: ModelService
metadata: {{name: {JOB}, team: bench}}
spec:
  server: openai-http
  selector: {{namespace: {NAMESPACE}, job: {JOB}}}
  prometheus: {{version: "2", scrapeInterval: 30s, evaluationInterval: 30s}}
  metrics:
    requestDuration:
      name: {HISTOGRAM}
      buckets: [{", ".join(map(str, BOUNDS))}]
    requests:
      name: {REQUESTS}
      errorMatchers: {{status: "5.."}}
  slos:
    - {{name: availability, objective: 99.9, window: 30d}}
    - {{name: latency, indicator: requestDuration, threshold: 2500ms, objective: 99, window: 30d}}
  deployment: {{name: {JOB}, container: server}}
"""

USUAL_PREFIX = "usual"
USUAL_ALERT = "UsualErrorBudgetBurn"
ENGINES = ("prometheus", "victoriametrics")
SETTLE_S = 240  # longest wait for vmalert's alert decisions to match Prometheus's, seconds
PROBE_AGO_S = 30 * 60  # same-data queries run at now − 30 min: inside the history and the burst


def cumulative_share(bound: float) -> float:
    """Share (0–1) of requests with latency ≤ ``bound`` seconds in the scenario."""
    below = {0.1: 0.05, 0.25: 0.2, 0.5: 0.45, 1: 0.75}
    above = {5: 0.5, 10: 0.2, 20: 0.05, 30: 0.01, 60: 0.001, 120: 0.0}
    if bound == THRESHOLD:
        return 1 - SLOW_SHARE
    if bound in below:
        return below[bound]
    return 1 - SLOW_SHARE * above[bound]


@dataclass(frozen=True)
class Scenario:
    """The synthetic service: counters as exact functions of time (seconds since epoch)."""

    pods: int
    origin: int  # counters are 0 here (start of history)
    now: int  # end of history, start of the live tail
    burst_start: int

    def pod_rate(self, pod: int) -> float:
        """Requests per second of one pod (0.8–1.4, varies by pod)."""
        return 0.8 + (pod % 7) * 0.1

    def totals(self, t: float) -> tuple[float, float]:
        """(requests, errors) per unit of pod rate from ``origin`` to ``t``."""
        elapsed = t - self.origin
        before = min(t, self.burst_start) - self.origin
        during = max(0.0, t - self.burst_start)
        return elapsed, ERROR_BASE * before + ERROR_BURST * during

    def series(self, pod: int) -> Iterator[tuple[str, float, float]]:
        """(series text, multiplier of total requests, multiplier of errors) for one pod."""
        base = f'instance="{INSTANCE}",job="{JOB}",namespace="{NAMESPACE}",pod="{JOB}-{pod:04d}"'
        for bound in (*BOUNDS, math.inf):
            le = "+Inf" if bound == math.inf else str(bound)
            share = 1.0 if bound == math.inf else cumulative_share(bound)
            yield f'{HISTOGRAM}_bucket{{{base},le="{le}"}}', share, 0.0
        yield f"{HISTOGRAM}_count{{{base}}}", 1.0, 0.0
        yield f'{REQUESTS}{{{base},status="2xx"}}', 1.0, -1.0
        yield f'{REQUESTS}{{{base},status="5xx"}}', 0.0, 1.0

    def exposition(self, t: float) -> str:
        """Prometheus text exposition of every series at time ``t`` (the live tail)."""
        total, errors = self.totals(t)
        lines = []
        for pod in range(self.pods):
            rate = self.pod_rate(pod)
            for name, k_total, k_err in self.series(pod):
                lines.append(f"{name} {(k_total * total + k_err * errors) * rate:.4f}\n")
        return "".join(lines)


def write_history(scenario: Scenario, path: Path, pods: range | None = None) -> int:
    """Write the OpenMetrics history of ``pods`` (default all); return the number of samples."""
    stamps = range(scenario.origin, scenario.now + 1, STEP_S)
    totals = [scenario.totals(t) for t in stamps]
    count = 0
    with path.open("w", encoding="ascii") as out:
        for pod in pods if pods is not None else range(scenario.pods):
            rate = scenario.pod_rate(pod)
            for name, k_total, k_err in scenario.series(pod):
                out.write(
                    "".join(
                        f"{name} {(k_total * tot + k_err * err) * rate:.4f} {t}\n"
                        for t, (tot, err) in zip(stamps, totals, strict=True)
                    )
                )
                count += len(stamps)
        out.write("# EOF\n")
    return count


def obsgen_rules(work: Path) -> tuple[ServicePlan, dict[str, Any]]:
    """Resolve the bench spec and build obsgen's rule file document through the generator API."""
    spec_path = work / f"{JOB}.yaml"
    spec_path.write_text(SPEC, encoding="utf-8")
    plan = resolve(load_spec(spec_path, spec_path.name), spec_path.name)
    return plan, rule_file(plan)


def _raw(metric: str, window: str, extra: str = "") -> str:
    selector = f'job="{JOB}",namespace="{NAMESPACE}"{extra}'
    return f"sum by (namespace) (rate({metric}{{{selector}}}[{window}]))"


def usual_rules(plan: ServicePlan) -> dict[str, Any]:
    """Rules of the usual shape for the same SLOs and burn-rate tiers as ``plan``.

    Written from the public description of that shape: per SLO, one recorded error ratio per
    window, each computed from raw counters over that window; the SLO-window SLI as the time
    average of the 5m ratio; one alert per tier comparing the long and short window ratios with
    ``factor × budget``.
    """
    groups = []
    for s in plan.slos:
        windows = sorted(
            {300_000, *(t.long_window_ms for t in s.tiers), *(t.short_window_ms for t in s.tiers)}
        )
        rules: list[dict[str, Any]] = []
        labels = {"slo": s.name}
        for ms in windows:
            w = format_duration_ms(ms)
            total = _raw(REQUESTS if s.kind == "availability" else f"{HISTOGRAM}_count", w)
            if s.kind == "availability":
                bad = _raw(REQUESTS, w, ',status=~"5.."')
                expr = f"{bad} / {total}"
            else:
                good = _raw(f"{HISTOGRAM}_bucket", w, f',le="{THRESHOLD}"')
                expr = f"({total} - {good}) / {total}"
            rules.append(
                {
                    "record": f"{USUAL_PREFIX}:slo_sli_error:ratio_rate{w}",
                    "expr": expr,
                    "labels": labels,
                }
            )
        ratio5m = f'{USUAL_PREFIX}:slo_sli_error:ratio_rate5m{{slo="{s.name}"}}'
        w = format_duration_ms(s.window_ms)
        budget = decimal_str(s.error_budget)
        rules += [
            {
                "record": f"{USUAL_PREFIX}:slo_sli_error:ratio_rate{w}",
                "expr": f"sum_over_time({ratio5m}[{w}]) / count_over_time({ratio5m}[{w}])",
                "labels": labels,
            },
            {
                "record": f"{USUAL_PREFIX}:slo_error_budget_remaining:ratio",
                "expr": f'1 - {USUAL_PREFIX}:slo_sli_error:ratio_rate{w}{{slo="{s.name}"}} / {budget}',
                "labels": labels,
            },
        ]
        for tier in s.tiers:
            long_w = format_duration_ms(tier.long_window_ms)
            short_w = format_duration_ms(tier.short_window_ms)
            threshold = decimal_str(tier.threshold)
            rules.append(
                {
                    "alert": USUAL_ALERT,
                    "expr": (
                        f'{USUAL_PREFIX}:slo_sli_error:ratio_rate{long_w}{{slo="{s.name}"}} > {threshold}\n'
                        f'and {USUAL_PREFIX}:slo_sli_error:ratio_rate{short_w}{{slo="{s.name}"}} > {threshold}'
                    ),
                    "labels": {
                        "slo": s.name,
                        "long_window": long_w,
                        "short_window": short_w,
                        "burn_rate": decimal_str(tier.factor),
                        "severity": tier.severity,
                    },
                }
            )
        groups.append({"name": f"{USUAL_PREFIX}.slo.{s.name}", "rules": rules})
    return {"groups": groups}


def backfill_rules(
    plan: ServicePlan, obsgen: dict[str, Any], usual: dict[str, Any]
) -> dict[str, Any]:
    """The recorded series that longer windows read, from both rule sets, for backfilling
    (:func:`_tsdb.backfill_rules`)."""
    return _tsdb.backfill_rules(
        (obsgen, usual), {events_record(plan), f"{USUAL_PREFIX}:slo_sli_error:ratio_rate5m"}
    )


def prometheus_config(tail_port: int, rule_files: list[Path], interval_s: int) -> str:
    """Configuration: scrape the live tail every 30 s, evaluate ``rule_files`` every interval."""
    config = _tsdb.scrape_config(
        JOB,
        tail_port,
        rule_files,
        STEP_S,
        interval_s,
        {"instance": INSTANCE, "namespace": NAMESPACE},
    )
    return yaml.safe_dump(config, sort_keys=True)


def firing_tiers(prom: Prometheus, alert: str) -> set[tuple[str, str, str]]:
    """(slo, long_window, short_window) of every firing ``alert``."""
    found = set()
    for a in prom.api("alerts")["alerts"]:
        labels = a["labels"]
        if labels.get("alertname") == alert and a["state"] == "firing":
            found.add((labels["slo"], labels["long_window"], labels["short_window"]))
    return found


def expected_tiers(
    plan: ServicePlan, scenario: Scenario, live_from: float
) -> set[tuple[str, str, str]]:
    """The tiers that must fire at the end of the run, from the scenario's exact error ratios
    over the data Prometheus has: the history up to ``scenario.now`` and the live tail from
    ``live_from`` (the first scrape) on. Nothing was scraped in between (the setup: minutes
    with hundreds of pods), so those events count in neither rule set."""

    def events(start: float, end: float) -> tuple[float, float]:
        if end <= start:
            return 0.0, 0.0
        (a_total, a_bad), (b_total, b_bad) = scenario.totals(start), scenario.totals(end)
        return b_total - a_total, b_bad - a_bad

    def ratio(kind: str, window_ms: int) -> float:
        if kind == "latency":
            return SLOW_SHARE
        end = time.time()
        t0 = end - window_ms / 1000
        old = events(max(t0, scenario.origin), scenario.now)  # no data before the history
        new = events(max(t0, live_from), end)
        return (old[1] + new[1]) / (old[0] + new[0])  # live_from is "now" but for seconds

    found = set()
    for s in plan.slos:
        for tier in s.tiers:
            threshold = float(tier.threshold)
            if (
                ratio(s.kind, tier.long_window_ms) > threshold
                and ratio(s.kind, tier.short_window_ms) > threshold
            ):
                found.add(
                    (
                        s.name,
                        format_duration_ms(tier.long_window_ms),
                        format_duration_ms(tier.short_window_ms),
                    )
                )
    return found


def scalar(prom: Prometheus, query: str) -> str:
    """The single value of an instant query, as text (``-`` when empty)."""
    result = prom.api("query", query=query)["result"]
    return f"{float(result[0]['value'][1]):.5f}" if result else "-"


def run_case(
    pods: int,
    days: float,
    samples: int,
    interval_s: int,
    keep: bool,
    engines: tuple[str, ...] = ENGINES,
    chunk_pods: int = 50,
) -> dict[str, Any]:
    """Run one case end to end; return timings, per-group durations and the alert comparison
    (on VictoriaMetrics too when ``engines`` names it, under ``"victoriametrics"``). The
    history is imported ``chunk_pods`` pods per file."""
    work = Path(tempfile.mkdtemp(prefix=f"obsgen-bench-rules-{pods}-"))
    timings: dict[str, float] = {}
    tail = None
    try:
        now = int(time.time()) // STEP_S * STEP_S
        origin = now - int(days * 86400)
        scenario = Scenario(pods, origin, now, now - BURST_S)
        plan, obsgen = obsgen_rules(work)
        usual = usual_rules(plan)
        obsgen_path, usual_path = work / "obsgen.rules.yaml", work / "usual.rules.yaml"
        backfill_path = work / "backfill.rules.yaml"
        # obsgen's SLO groups keep their own 30s interval unless --interval differs (step 5).
        own = interval_s == 30
        live = {
            "groups": [
                {k: v for k, v in g.items() if own or k != "interval"} for g in obsgen["groups"]
            ]
        }
        obsgen_path.write_text(yaml.safe_dump(live, sort_keys=False), encoding="utf-8")
        usual_path.write_text(yaml.safe_dump(usual, sort_keys=False), encoding="utf-8")
        backfill_path.write_text(
            yaml.safe_dump(backfill_rules(plan, obsgen, usual), sort_keys=False), encoding="utf-8"
        )
        _tsdb.run_checked(["promtool", "check", "rules", str(usual_path)], "promtool check rules")

        data = work / "data"
        # The live tail is scraped from "now" on, while the history is imported (_tsdb).
        tail = _tsdb.serve_exposition(scenario.exposition)
        config = work / "prometheus.yml"
        config.write_text(prometheus_config(tail.server_address[1], [], interval_s))
        log = work / "prometheus.log"
        live_from = time.time()

        # promtool 2.42 reads a whole OpenMetrics file into memory (~19 GiB per 1,000 pods of
        # 3 days): import the history a few pods at a time, each chunk its own blocks.
        def chunk(path: Path, i: int) -> int:
            first = i * chunk_pods
            return write_history(scenario, path, range(first, min(pods, first + chunk_pods)))

        history = _tsdb.build_history(
            config=config,
            data=data,
            log=log,
            write_chunk=chunk,
            chunks=-(-pods // chunk_pods),
            backfill=backfill_path,
            start=origin,
            end=now,
            step_s=STEP_S,
        )
        timings.update(history.timings)
        n_samples, peak_import = history.samples, history.peak_import_mib

        # Rules run from the start (no gap in the recorded series); only evaluations after
        # the startup compaction are timed.
        config.write_text(
            prometheus_config(tail.server_address[1], [obsgen_path, usual_path], interval_s)
        )
        with Prometheus(config, data, log) as prom:
            clock = time.monotonic()
            _tsdb.wait_for_compaction(prom, timeout_s=150)
            timings["startup compaction wait"] = time.monotonic() - clock
            clock = time.monotonic()
            durations = _tsdb.collect_durations(
                prom, samples, timeout_s=max(240, samples * interval_s * 4), after=time.time()
            )
            timings["rule evaluations"] = time.monotonic() - clock
            obsgen_fired = firing_tiers(prom, naming.ALERT_ERROR_BUDGET_BURN)
            usual_fired = firing_tiers(prom, USUAL_ALERT)
            ratios = []
            for s in plan.slos:
                for ms in (300_000, 3_600_000, 21_600_000, 86_400_000, 259_200_000, s.window_ms):
                    w = format_duration_ms(ms)
                    ours = naming.record(plan.group_by, naming.SLI_ERROR, f"ratio_rate{w}")
                    ratios.append(
                        (
                            s.name,
                            w,
                            scalar(prom, f'{ours}{{slo="{s.name}"}}'),
                            scalar(
                                prom,
                                f'{USUAL_PREFIX}:slo_sli_error:ratio_rate{w}{{slo="{s.name}"}}',
                            ),
                        )
                    )
        vm_case = None
        if "victoriametrics" in engines:
            clock = time.monotonic()
            vm_case = run_victoriametrics(
                work,
                data,
                tail.server_address[1],
                [obsgen_path, usual_path],
                plan,
                samples,
                interval_s,
                {
                    alert: set(tiers)
                    for alert, tiers in (
                        (naming.ALERT_ERROR_BUDGET_BURN, obsgen_fired),
                        (USUAL_ALERT, usual_fired),
                    )
                    if tiers
                },
                engine_probes(plan, obsgen, backfill_rules(plan, obsgen, usual)),
                now - PROBE_AGO_S,
            )
            timings["VictoriaMetrics import + evaluations"] = time.monotonic() - clock
        return {
            "victoriametrics": vm_case,
            "pods": pods,
            "days": days,
            "series": pods * (len(BOUNDS) + 4),
            "samples": n_samples,
            "chunk_pods": chunk_pods,
            "peak_import_mib": peak_import,
            "timings": timings,
            "durations": durations,
            "obsgen_fired": sorted(obsgen_fired),
            "usual_fired": sorted(usual_fired),
            "expected": sorted(expected_tiers(plan, scenario, live_from)),
            "gap_s": live_from - scenario.now,
            "ratios": ratios,
            "work": str(work),
        }
    finally:
        if tail is not None:
            tail.shutdown()
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def engine_probes(
    plan: ServicePlan, obsgen: dict[str, Any], backfill: dict[str, Any]
) -> list[tuple[str, str]]:
    """(what, expression) pairs whose value two engines should agree on over the same data:
    the functions obsgen's rules use, on raw counters and on the backfilled recorded series."""
    sel = f'job="{JOB}",namespace="{NAMESPACE}"'
    errors_1h = _raw(REQUESTS, "1h", ',status=~"5.."')
    probes = [
        ("rate() over 5m, requests/s", f"sum(rate({REQUESTS}{{{sel}}}[5m]))"),
        ("rate() over 30s, one scrape interval", f"sum(rate({REQUESTS}{{{sel}}}[30s]))"),
        (
            "increase() over 1h, 5xx requests",
            f'sum(increase({REQUESTS}{{{sel},status="5xx"}}[1h]))',
        ),
        (
            "error ratio over 1h from raw counters",
            f"{errors_1h} / {_raw(REQUESTS, '1h')}",
        ),
        (
            "histogram_quantile(0.99) over 5m, seconds",
            f"histogram_quantile(0.99, sum by (le) (rate({HISTOGRAM}_bucket{{{sel}}}[5m])))",
        ),
    ]
    recorded = sorted({r["record"] for g in backfill["groups"] for r in g["rules"]})
    for name in recorded:
        # every series of the record (obsgen's events: bad and total together)
        probes.append(
            (f"sum_over_time() of {name}, all series, over 6h", f"sum(sum_over_time({name}[6h]))")
        )
        probes.append(
            (
                f"count_over_time() of {name}, all series, over 1h",
                f"sum(count_over_time({name}[1h]))",
            )
        )
    ratio_1h = naming.record(plan.group_by, naming.SLI_ERROR, "ratio_rate1h")
    for g in obsgen["groups"]:
        for rule in g["rules"]:
            if rule.get("record") == ratio_1h and rule["labels"].get("slo") == "availability":
                probes.append(("obsgen's availability error ratio over 1h", rule["expr"]))
    return probes


def vm_firing_tiers(vmalert: VMAlert) -> dict[str, set[tuple[str, str, str]]]:
    """Per alert name, (slo, long_window, short_window) of every firing burn-rate alert."""
    fired: dict[str, set[tuple[str, str, str]]] = {}
    for alert in vmalert.alerts():
        labels = alert["labels"]
        if alert["state"] == "firing" and "long_window" in labels:
            fired.setdefault(labels["alertname"], set()).add(
                (labels["slo"], labels["long_window"], labels["short_window"])
            )
    return fired


def run_victoriametrics(
    work: Path,
    tsdb: Path,
    tail_port: int,
    rule_files: list[Path],
    plan: ServicePlan,
    samples: int,
    interval_s: int,
    reference: dict[str, set[tuple[str, str, str]]],
    probes: list[tuple[str, str]],
    at: int,
) -> dict[str, Any]:
    """Step 7: the Prometheus TSDB folder ``tsdb`` imported into VictoriaMetrics, the live tail
    scraped, ``rule_files`` evaluated by vmalert; per-group durations, then (once vmalert fires
    the ``reference`` tiers, Prometheus's, or after :data:`SETTLE_S`) firing tiers and ratios.
    Last, Prometheus restarted over ``tsdb`` without rules and both engines answer each of
    ``probes`` (what, expression) at the historical time ``at`` (seconds): the same query over
    the same data, so any difference is the engine's."""
    scrape = yaml.safe_load(prometheus_config(tail_port, [], interval_s))
    scrape["global"].pop("evaluation_interval")
    scrape.pop("rule_files")
    scrape_path = work / "vm-scrape.yml"
    scrape_path.write_text(yaml.safe_dump(scrape), encoding="utf-8")
    log = work / "victoriametrics.log"
    timings: dict[str, float] = {}
    with VictoriaMetrics(work / "vm-data", log, scrape_path) as server:
        clock = time.monotonic()
        server.import_prometheus(tsdb)
        timings["vmctl import"] = time.monotonic() - clock
        with VMAlert(server, rule_files, interval_s, log) as vmalert:
            clock = time.monotonic()
            durations = vmalert.collect_durations(
                samples, timeout_s=max(240, samples * interval_s * 4)
            )
            timings["rule evaluations"] = time.monotonic() - clock
            # Recorded series reach the next rule only after vmalert's remote write (5 s) and
            # VictoriaMetrics' -search.latencyOffset (30 s): wait for the decisions to settle.
            clock = time.monotonic()
            while True:
                fired = vm_firing_tiers(vmalert)
                settled = fired == reference
                if settled or time.monotonic() - clock > SETTLE_S:
                    break
                time.sleep(interval_s)
            timings["alert decisions settled" if settled else "decisions not settled after"] = (
                time.monotonic() - clock
            )
            ratios = []
            for s in plan.slos:
                for ms in (300_000, 3_600_000, 21_600_000, 86_400_000, 259_200_000, s.window_ms):
                    w = format_duration_ms(ms)
                    ours = naming.record(plan.group_by, naming.SLI_ERROR, f"ratio_rate{w}")
                    ratios.append(
                        (
                            s.name,
                            w,
                            scalar(server, f'{ours}{{slo="{s.name}"}}'),  # type: ignore[arg-type]
                            scalar(
                                server,  # type: ignore[arg-type]
                                f'{USUAL_PREFIX}:slo_sli_error:ratio_rate{w}{{slo="{s.name}"}}',
                            ),
                        )
                    )
        config = work / "prometheus-no-rules.yml"
        config.write_text(prometheus_config(tail_port, [], interval_s))
        same_data = []
        with Prometheus(config, tsdb, work / "prometheus.log") as prom:
            for what, expr in probes:
                values = [
                    engine.api("query", query=expr, time=str(at))["result"]
                    for engine in (prom, server)
                ]
                p_value, v_value = (
                    float(result[0]["value"][1]) if result else math.nan for result in values
                )
                same_data.append((what, expr, p_value, v_value))
    return {
        "same_data": same_data,
        "durations": durations,
        "obsgen_fired": sorted(fired.get(naming.ALERT_ERROR_BUDGET_BURN, set())),
        "usual_fired": sorted(fired.get(USUAL_ALERT, set())),
        "ratios": ratios,
        "timings": timings,
    }


def report_engines(case: dict[str, Any]) -> str:
    """Markdown: per-group evaluation time on Prometheus and on VictoriaMetrics + vmalert side
    by side, VictoriaMetrics' alert decisions and recorded ratios next to Prometheus's."""
    vm = case.get("victoriametrics")
    if vm is None:
        return ""
    prom = {_group_name(k): v for k, v in case["durations"].items()}
    rows = []
    for name in sorted(set(prom) | set(vm["durations"])):
        p, v = prom.get(name), vm["durations"].get(name)
        mp = statistics.median(p) * 1000 if p else None
        mv = statistics.median(v) * 1000 if v else None
        rows.append(
            (
                name,
                f"{mp:.2f}" if mp is not None else "-",
                f"{mv:.2f}" if mv is not None else "-",
                f"{mv / mp:.2f}" if mp and mv is not None else "-",
            )
        )
    same = vm["obsgen_fired"] == case["obsgen_fired"] and vm["usual_fired"] == case["usual_fired"]
    ratios = [
        (*prom_row[:2], prom_row[2], vm_row[2], prom_row[3], vm_row[3])
        for prom_row, vm_row in zip(case["ratios"], vm["ratios"], strict=True)
    ]
    return "\n".join(
        [
            "#### Prometheus vs VictoriaMetrics + vmalert",
            "",
            "Median time per evaluation of each rule group (ms; vmalert's includes its HTTP "
            "query to VictoriaMetrics, Prometheus's runs in-process):",
            "",
            markdown_table(
                ["rule group", "Prometheus (ms)", "VictoriaMetrics (ms)", "VM / Prometheus"], rows
            ),
            "",
            markdown_table(
                ["rule set", "firing tiers on Prometheus", "firing tiers on VictoriaMetrics"],
                [
                    (
                        "obsgen `ErrorBudgetBurn`",
                        _tiers(case["obsgen_fired"]),
                        _tiers(vm["obsgen_fired"]),
                    ),
                    (
                        f"usual shape `{USUAL_ALERT}`",
                        _tiers(case["usual_fired"]),
                        _tiers(vm["usual_fired"]),
                    ),
                ],
            ),
            "",
            markdown_table(
                [
                    "slo",
                    "window",
                    "obsgen Prometheus",
                    "obsgen VictoriaMetrics",
                    "usual Prometheus",
                    "usual VictoriaMetrics",
                ],
                ratios,
            ),
            "",
            "The same query over the same imported history, at the same past moment (30 minutes "
            "before the run, inside the error burst), on both engines:",
            "",
            markdown_table(
                ["what", "Prometheus", "VictoriaMetrics", "VM / Prometheus − 1"],
                [
                    (
                        f"{what}: `{expr}`" if len(expr) < 120 else what,
                        f"{p:.6g}",
                        f"{v:.6g}",
                        f"{v / p - 1:+.2%}" if p and not math.isnan(p + v) else "-",
                    )
                    for what, expr, p, v in vm["same_data"]
                ],
            ),
            "",
            "VictoriaMetrics setup (s): "
            + ", ".join(f"{k} {v:.1f}" for k, v in vm["timings"].items())
            + ".",
            "",
            "Same alert decisions on both engines: **yes**."
            if same
            else "Same alert decisions on both engines: **NO** — see the table above.",
        ]
    )


def _group_name(key: str) -> str:
    return key.split(";", 1)[1]


def report(case: dict[str, Any], interval_s: int) -> str:
    """Markdown for one case: per-group medians, obsgen/usual ratio, alert decisions, ratios."""
    durations: dict[str, list[float]] = case["durations"]
    by_group = {_group_name(k): v for k, v in durations.items()}
    rows = []
    for name in sorted(by_group):
        values = by_group[name]
        rows.append(
            (
                name,
                len(values),
                f"{statistics.median(values) * 1000:.2f}",
                f"{min(values) * 1000:.2f}–{max(values) * 1000:.2f}",
            )
        )
    out = [
        f"### {case['pods']} pods × {case['days']:g} days at {STEP_S}s "
        f"({case['series']} raw series, {case['samples']:,} raw samples)",
        "",
        markdown_table(
            ["rule group", "evaluations", "median last_duration (ms)", "min–max (ms)"], rows
        ),
        "",
    ]
    compare = []
    totals = {"median": [0.0, 0.0], "fastest": [0.0, 0.0]}
    for s in ("availability", "latency"):
        ours = by_group.get(f"obsgen.{JOB}.slo.{s}")
        theirs = by_group.get(f"{USUAL_PREFIX}.slo.{s}")
        if ours and theirs:
            mo, mu = statistics.median(ours), statistics.median(theirs)
            fo, fu = min(ours), min(theirs)
            for key, o, u in (("median", mo, mu), ("fastest", fo, fu)):
                totals[key][0] += o
                totals[key][1] += u
            compare.append(
                (s, f"{mo * 1000:.2f}", f"{mu * 1000:.2f}", f"{mo / mu:.3f}", f"{fo / fu:.3f}")
            )
    (mo, mu), (fo, fu) = totals["median"], totals["fastest"]
    if mu and fu:
        compare.append(
            (
                "**both SLOs**",
                f"{mo * 1000:.2f}",
                f"{mu * 1000:.2f}",
                f"**{mo / mu:.3f}**",
                f"{fo / fu:.3f}",
            )
        )
    per_k = case["series"] / 1000
    others = [
        (
            name.split(".", 2)[-1],
            f"{statistics.median(values) * 1000:.2f}",
            f"{statistics.median(values) * 1000 / per_k:.3f}",
        )
        for name, values in sorted(by_group.items())
        if name.startswith(f"obsgen.{JOB}.") and ".slo." not in name
    ]
    out += [
        markdown_table(
            [
                "SLO group",
                "obsgen (ms, median)",
                "usual shape (ms, median)",
                "obsgen / usual (medians)",
                "obsgen / usual (fastest evaluations: least disturbed by other load)",
            ],
            compare,
        ),
        "",
        f"obsgen's other groups (traffic and latency quantiles, memory, targets, fleet) read "
        f"raw series ({case['series']:,} here) and cost in proportion to them; the usual shape "
        "has no such groups (it would need the same records), so they are not compared:",
        "",
        markdown_table(
            ["obsgen group", "median last_duration (ms)", "ms per 1,000 raw series"], others
        ),
        "",
        "Alert decisions at the end of the run (`slo`, long window, short window of each firing "
        "burn-rate tier):",
        "",
        markdown_table(
            ["rule set", "firing tiers"],
            [
                ("expected from the scenario", _tiers(case["expected"])),
                ("obsgen `ErrorBudgetBurn`", _tiers(case["obsgen_fired"])),
                (f"usual shape `{USUAL_ALERT}`", _tiers(case["usual_fired"])),
            ],
        ),
        "",
        "Recorded error ratios at the end of the run (30d: obsgen is traffic-weighted, the usual "
        "shape is a time average of 5m ratios; both read 3 days of history here):",
        "",
        markdown_table(["slo", "window", "obsgen", "usual shape"], case["ratios"]),
        "",
        "Setup time (s): "
        + ", ".join(f"{k} {v:.1f}" for k, v in case["timings"].items())
        + f"; evaluation interval {interval_s}s; history imported {case['chunk_pods']} pods at "
        f"a time while the live tail was scraped, peak promtool RSS "
        f"{case['peak_import_mib']:.0f} MiB.",
    ]
    same = case["obsgen_fired"] == case["usual_fired"] == case["expected"]
    out.append("")
    out.append(
        "Same alert decisions: **yes**."
        if same
        else "Same alert decisions: **NO** — see the table above."
    )
    return "\n".join(out)


def _tiers(tiers: list[tuple[str, str, str]]) -> str:
    return ", ".join(f"{s} {lw}/{sw}" for s, lw, sw in tiers) or "none"


def main(argv: list[str] | None = None) -> int:
    """Parse options, run each case, print the tables and the command."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, action="append", help="pods per case (default: 100)")
    parser.add_argument("--days", type=float, default=3.0, help="history length (default: 3)")
    parser.add_argument("--samples", type=int, default=8, help="timed evaluations per group")
    parser.add_argument(
        "--interval",
        type=int,
        default=30,
        help="evaluation interval, seconds (30, the bench spec's; another one makes obsgen's "
        "SLO increments overlap or gap in the live part)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (TSDB, rules)")
    parser.add_argument(
        "--chunk-pods",
        type=int,
        default=50,
        help="pods per imported history file (promtool holds one whole file in memory)",
    )
    parser.add_argument("--json", type=Path, help="also write raw results to this file")
    parser.add_argument(
        "--engines",
        default=",".join(ENGINES),
        help="comma-separated engines to measure: prometheus (always), victoriametrics "
        "(default: both)",
    )
    args = parser.parse_args(argv)
    cases = []
    print(f"# Rule evaluation cost\n\nMachine: {machine()}\n")
    for pods in args.pods or [100]:
        engines = tuple(e.strip() for e in args.engines.split(","))
        case = run_case(
            pods,
            args.days,
            args.samples,
            args.interval,
            args.keep,
            engines,
            max(1, args.chunk_pods),
        )
        cases.append(case)
        print(report(case, args.interval), flush=True)
        print()
        if case["victoriametrics"] is not None:
            print(report_engines(case), flush=True)
            print()
    print(f"Command: `{command_line()}`")
    if args.json:
        args.json.write_text(json.dumps(cases, indent=1, default=list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
