"""Check a resolved spec against a live Prometheus: do the series the bundle reads exist?

:func:`verify_plan` asks the server's HTTP API (``/api/v1/query``, ``/api/v1/targets``,
``/api/v1/status/buildinfo``) and returns one :class:`Row` per check (target, scrape interval,
series, unit, buckets, le spelling, threshold, goodput, models, pods, kubernetes, gpu).
Status ``missing`` and ``wrong`` fail the check; ``warning`` does not. What each check asks
and when it fails: docs/verify.md, "The checks" (the rules it cites: docs/contracts.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence

from generator import naming
from generator.errors import printable
from generator.families import FAMILIES
from generator.parts import pods
from generator.plan import HistogramPlan, ServicePlan
from generator.presets import renames
from generator.project_config import DEFAULT_REPLICA_LABELS, TARGET_COPY_LABELS
from generator.prometheus_api import PrometheusAPI
from generator.promql import Matcher, le_matcher, prometheus3_le, selector
from generator.signals import SIGNALS
from generator.units import TIME_UNITS, decimal_str, format_duration_ms, parse_duration_ms, unit_of
from generator.verify_models import adapters_and_transfers, model_rows
from generator.verify_report import Row as Row
from generator.verify_report import Status as Status
from generator.verify_report import _Report as _Report

RATE_WINDOW_MS = 300_000
"""The fixed rate window of the generated rules (``rate(…[5m])``), in ms."""


def _matches(matchers: Iterable[Matcher], labels: dict[str, str]) -> bool:
    """Whether target ``labels`` satisfy every matcher (RE2 regexes approximated by ``re``)."""
    for m in matchers:
        value = labels.get(m.label, "")
        full = re.fullmatch(m.value, value) is not None if m.op in ("=~", "!~") else None
        if (
            (m.op == "=" and value != m.value)
            or (m.op == "!=" and value == m.value)
            or (m.op == "=~" and not full)
            or (m.op == "!~" and full)
        ):
            return False
    return True


def _le_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _le_order(text: str) -> tuple[float, str]:
    value = _le_float(text)
    return (math.inf if value is None else value, text)


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)


def _target(r: _Report) -> None:
    plan = r.plan
    expr = selector("up", plan.matchers)
    result = r.api.query(expr)
    if not result:
        r.add("target", expr, Status.MISSING, "no scrape target has these labels")
    elif not any(float(s["value"][1]) == 1 for s in result):
        r.add("target", expr, Status.WRONG, f"all {len(result)} targets are down")
    else:
        up = sum(float(s["value"][1]) == 1 for s in result)
        r.add("target", expr, Status.OK, f"{up}/{len(result)} targets up")


def _windows(plan: ServicePlan) -> list[tuple[str, int]]:
    windows = [("rate window", RATE_WINDOW_MS)]
    for slo in (*plan.slos, *plan.goodput):
        for tier in slo.tiers:
            windows.append((f"slo {slo.name} longWindow", tier.long_window_ms))
            windows.append((f"slo {slo.name} shortWindow", tier.short_window_ms))
    return windows


def _scrape_interval(r: _Report) -> None:
    plan = r.plan
    subject = selector("up", plan.matchers)
    intervals = []
    for target in r.api.active_targets():
        labels = target.get("labels") or {}
        text = target.get("scrapeInterval")
        if isinstance(labels, dict) and isinstance(text, str) and _matches(plan.matchers, labels):
            try:
                intervals.append(parse_duration_ms(text))
            except ValueError:
                continue
    if not intervals:
        r.add(
            "scrape interval",
            subject,
            Status.WARNING,
            "no active target reports scrapeInterval; windows checked against the spec's "
            f"{format_duration_ms(plan.scrape_interval_ms)} only",
        )
        return
    actual = max(intervals)
    too_short = [
        f"{name} {format_duration_ms(ms)}" for name, ms in _windows(plan) if ms < 4 * actual
    ]
    if too_short:
        r.add(
            "scrape interval",
            subject,
            Status.WRONG,
            f"scraped every {format_duration_ms(actual)}: {', '.join(too_short)} shorter than "
            f"4 × {format_duration_ms(actual)}; rate() needs at least 4 samples",
        )
    elif actual != plan.scrape_interval_ms:
        r.add(
            "scrape interval",
            subject,
            Status.WARNING,
            f"scraped every {format_duration_ms(actual)} but spec.prometheus.scrapeInterval is "
            f"{format_duration_ms(plan.scrape_interval_ms)}; set it to "
            f"{format_duration_ms(actual)} so window checks use the real interval",
        )
    else:
        r.add(
            "scrape interval", subject, Status.OK, f"{format_duration_ms(actual)}, as the spec says"
        )


def _present(r: _Report, metric: str, matchers: Sequence[Matcher]) -> int:
    found = r.api.query(f"count({selector(metric, matchers)})")
    return int(float(found[0]["value"][1])) if found else 0


def _requests(r: _Report) -> None:
    plan = r.plan
    req = plan.requests
    expr = selector(req.name, req.matchers)
    count = _present(r, req.name, req.matchers)
    if not count:
        # Another request counter this server exposes in another release or variant?
        others = [o for o in plan.preset.other_requests if o.name != req.name]
        there = [o for o in others if _present(r, o.name, plan.matchers)]
        if there:
            other = there[0]
            how = (
                "set spec.serverVariant and spec.serverVersion to what the pods run"
                if plan.preset.variant is not None
                else "set spec.serverVersion to the release the pods run"
            )
            detail = (
                f"no series, but {other.name} is there ({other.source}): the pods run another "
                f"release or variant than the spec says — {how}, or set "
                f"spec.metrics.requests.name: {other.name}; until then the error ratio and "
                "availability SLOs see no traffic"
            )
        else:
            detail = "no series; request rates, error ratio and SLOs read it"
        r.add("series", expr, Status.MISSING, detail)
        return
    r.add("series", expr, Status.OK, f"{count} series")
    for m in req.error_matchers:
        labelled = Matcher(m.label, "!=", "")
        r.series(
            "series",
            req.name,
            [*req.matchers, labelled],
            Status.WRONG,
            f"no request series has label {m.label!r}, so error matcher {m.render()} can never match",
        )
    if req.failure_name:
        r.series(
            "series",
            req.failure_name,
            req.matchers,
            Status.WARNING,
            "the failure counter may only appear after the first failure",
        )


def _renamed(
    r: _Report, what: str, names: Sequence[str], matchers: Sequence[Matcher], suffix: str = ""
) -> str | None:
    """The name the server has, of ``names`` (read by the rules) or of their known renames,
    after adding an OK / renamed / missing row; None when it has none of them."""
    first = names[0]
    expr = selector(first + suffix, matchers)
    count = _present(r, first + suffix, matchers)
    if count:
        r.add("series", expr, Status.OK, f"{count} series")
        return first
    read = list(names[1:])
    known = renames(r.plan.server, r.plan.metric_prefix)
    unread = [n for n in known.get(first, ()) if n not in read]
    for name in (*read, *unread):
        found = _present(r, name + suffix, matchers)
        if not found:
            continue
        if name in read:
            r.add(
                "series",
                expr,
                Status.WARNING,
                f"no series, but the server exposes {name}{suffix} ({found} series), the same "
                f"{what} under its name in another release; the rules read both, so the alerts "
                "work — set spec.serverVersion to the release the pods run",
            )
        else:
            r.add(
                "series",
                expr,
                Status.MISSING,
                f"no series, but the server exposes {name}{suffix}, the same {what} under its "
                "name in another release; the rules read only the spec's name — set "
                f"spec.metrics name to {name} (or drop it and set spec.serverVersion)",
            )
        return name
    r.add(
        "series",
        expr,
        Status.MISSING,
        f"no series; {what} panels and alerts read it; fix spec.metrics or the selector",
    )
    return None


def _gauges(r: _Report) -> None:
    """The series of each signal verify checks (:attr:`generator.signals.base.Signal.verified`)."""
    for signal in SIGNALS:
        value = signal.of(r.plan)
        if signal.verified is not None and value is not None:
            _renamed(r, signal.verified, signal.reads(value), value.matchers)


def _thresholds(plan: ServicePlan, hist: HistogramPlan) -> list[tuple[str, float]]:
    """(where, bound in metric unit) of every bucket bound the rules select with ``le``."""
    found = []
    for i, slo in enumerate(plan.slos):
        if slo.histogram is not None and slo.histogram.key == hist.key and slo.threshold_bound:
            found.append((f"spec.slos[{i}].threshold", slo.threshold_bound))
    for family in FAMILIES:  # the bounds the alerts' families read
        for read in family.histogram_reads(plan):
            if read.key == hist.key and read.bound:
                found.append((f"spec.alerts.{family.spec_field}.threshold", read.bound))
    for goodput in plan.goodput:
        for j, target in enumerate(goodput.targets):
            if target.histogram.key == hist.key:
                found.append((f"slo {goodput.name} targets[{j}].threshold", target.bound))
    return found


def _histogram(r: _Report, hist: HistogramPlan) -> None:
    plan = r.plan
    what = f"{hist.indicator} latency histogram"
    if hist.native:
        _renamed(r, what, hist.names, hist.matchers)
        return
    exposed = hist.metric
    if not _present(r, hist.metric + "_bucket", hist.matchers):
        found = _renamed(r, what, hist.names, hist.matchers, "_bucket")
        if found is None:
            return
        exposed = found
    expr = selector(f"{exposed}_bucket", hist.matchers)
    result = r.api.query(f"group by (le) ({expr})")
    spellings = sorted({str(s["metric"].get("le", "")) for s in result}, key=_le_order)
    server = [(t, v) for t in spellings if (v := _le_float(t)) is not None and not math.isinf(v)]
    _unit(r, hist, expr, [v for _, v in server])
    spec_only = [b for b in hist.buckets if not any(_same(b, v) for _, v in server)]
    server_only = [t for t, v in server if not any(_same(b, v) for b in hist.buckets)]
    listing = "le: " + ", ".join(spellings)
    if spec_only:
        r.add(
            "buckets",
            expr,
            Status.WRONG,
            f"spec buckets not on the server: {', '.join(decimal_str(b) for b in spec_only)}; {listing}",
        )
    elif server_only:
        r.add(
            "buckets",
            expr,
            Status.WARNING,
            f"server has buckets the spec does not list: {', '.join(server_only)}; {listing}",
        )
    else:
        r.add("buckets", expr, Status.OK, listing)
    _spelling(r, expr, server)
    by_value = dict((v, t) for t, v in server)
    for where, bound in _thresholds(plan, hist):
        stored = next((t for v, t in by_value.items() if _same(v, bound)), None)
        seconds = decimal_str(bound * hist.seconds_per_unit)
        if stored is None:
            below = [v for v in by_value if v < bound]
            above = [v for v in by_value if v > bound]
            near = ", ".join(
                f"{word} {decimal_str(v)}"
                for word, v in (
                    ("below", max(below, default=None)),
                    ("above", min(above, default=None)),
                )
                if v is not None
            )
            r.add(
                "threshold",
                where,
                Status.WRONG,
                f"{seconds}s is not a bucket of {hist.metric} on the server (nearest: {near}); "
                "the SLI would select nothing and the alert could never fire",
            )
            continue
        matcher = le_matcher(bound, plan.le_version)
        hit = (
            stored == matcher.value
            if matcher.op == "="
            else re.fullmatch(matcher.value, stored) is not None
        )
        if hit:
            r.add(
                "threshold",
                where,
                Status.OK,
                f"{seconds}s is bucket le={stored!r}; {matcher.render()} matches it",
            )
        else:
            r.add(
                "threshold",
                where,
                Status.WRONG,
                f"the rules select {matcher.render()} but the server stores le={stored!r}; "
                "set spec.prometheus.version: compat",
            )


# Where the median bucket bound of an LLM latency histogram lies, in seconds: from 0.5 ms (the
# finest inter-token histograms) to 100 s (the coarsest end-to-end ones). A median outside is
# a unit mistake by a factor of 1000 or more: vLLM's e2e bounds (0.3 … 7680 s) have a median of
# 20 s, Istio's millisecond bounds read as seconds one of 1000 s.
PLAUSIBLE_MEDIAN_S = (0.0005, 100.0)


def _unit(r: _Report, hist: HistogramPlan, expr: str, bounds: Sequence[float]) -> None:
    """Whether the server's ``le`` bounds look like the unit the plan converts them from."""
    if not bounds:
        return
    ordered = sorted(bounds)
    median = ordered[len(ordered) // 2]
    median_s = median * hist.seconds_per_unit
    unit = unit_of(hist.seconds_per_unit)
    low, high = PLAUSIBLE_MEDIAN_S
    if low <= median_s <= high:
        r.add(
            "unit",
            expr,
            Status.OK,
            f"le bounds in {unit}: median bound {decimal_str(median)} = {decimal_str(median_s)}s",
        )
        return
    fits = [
        name
        for name, factor in TIME_UNITS.items()
        if low <= median * factor <= high and factor != hist.seconds_per_unit
    ]
    fix = (
        f"if it records {fits[0]}, set spec.metrics.{hist.key}.unit: {fits[0]} (and buckets "
        "in seconds)"
        if fits
        else "check the histogram's unit"
    )
    r.add(
        "unit",
        expr,
        Status.WRONG,
        f"le bounds do not look like {unit}: the median bound {decimal_str(median)} would be "
        f"{decimal_str(median_s)}s, outside the {decimal_str(low)}–{decimal_str(high)}s of "
        f"latency histograms; {fix} — every threshold and quantile is off by the same factor",
    )


def _spelling(r: _Report, expr: str, server: list[tuple[str, float]]) -> None:
    """How whole-number bounds are spelled, and which ``prometheus.version`` fits."""
    version = r.plan.le_version
    mismatched = [t for t, v in server if t != prometheus3_le(v)]
    style = (
        "Prometheus 3 / client_python style (1.0, 1.8e+06)"
        if not mismatched
        else f"not Prometheus 3 style ({', '.join(mismatched[:3])})"
    )
    fits = "3 or compat" if not mismatched else "compat (or 2)"
    if version == "3" and mismatched:
        r.add(
            "le spelling",
            expr,
            Status.WRONG,
            f"{style}; spec.prometheus.version 3 matches le exactly as 1.0 — use {fits}",
        )
    else:
        r.add(
            "le spelling",
            expr,
            Status.OK,
            f"{style}; prometheus.version {version} fits ({fits} would)",
        )


def _pods(r: _Report) -> None:
    """Pods attributed to the workload: by kube-state-metrics owner series, by the targets'
    ``pod`` label, both (and whether they agree), or neither ("pods not attributed").
    Records in ``r.pods_attributed`` whether any pod is attributed."""
    plan = r.plan
    workload = f"{plan.workload_kind}/{plan.deployment_name}"
    by_owner = r.count(pods.ksm_owner_expr(plan))
    targets = pods.target_pods_expr(plan)
    by_target = r.count(targets)
    subject = f"{pods.KSM_POD_OWNER} → {workload}"
    if by_owner == 0 and by_target == 0:
        r.add(
            "pods",
            subject,
            Status.MISSING,
            f"pods not attributed: no {pods.KSM_POD_OWNER} series names {workload} and no target "
            f"of {selector('up', plan.matchers)} has a pod label; memory alerts and panels see "
            "no pod — scrape kube-state-metrics, or fix spec.deployment.name/kind",
        )
        return
    if by_owner == 0:
        r.add(
            "pods",
            subject,
            Status.WARNING,
            f"{by_target} pods attributed by their targets' pod label only: no "
            f"{pods.KSM_POD_OWNER} series names {workload} (kube-state-metrics not scraped, or "
            "spec.deployment.name/kind wrong); pods whose target is down drop out",
        )
        r.pods_attributed = True
        return
    strays = r.count(f"{targets} unless on (namespace, pod) {pods.ksm_owner_expr(plan)}")
    if strays:
        r.add(
            "pods",
            subject,
            Status.WRONG,
            f"{strays} of the service's scraped pods are not owned by {workload}: "
            "spec.deployment.name/kind name another workload",
        )
    else:
        r.add("pods", subject, Status.OK, f"{by_owner} pods owned by {workload}")
    r.pods_attributed = True


def _kubernetes(r: _Report) -> None:
    plan = r.plan
    memory = {"memory_headroom", "memory_exhaustion", "oom_killed"} & set(plan.alerts)
    if not memory or not r.pods_attributed:
        return
    # Kept to the attributed pods, as the rules read them.
    owner = pods.owner_expr(plan)

    def owned(metric: str, *extra: Matcher) -> tuple[str, str]:
        sel = selector(metric, (*plan.container_matchers, *extra))
        return f"({sel} and on (namespace, pod) ({owner}))", sel

    expr, subject = owned(naming.CADVISOR_WORKING_SET)
    r.exists(
        "kubernetes",
        expr,
        Status.MISSING,
        "cAdvisor (kubelet) is not scraped or deployment.container does not match",
        subject,
    )
    if {"memory_headroom", "memory_exhaustion"} & memory:
        has_fallback = plan.memory_limit_bytes is not None
        expr, subject = owned(naming.KSM_LIMITS, Matcher("resource", "=", "memory"))
        r.exists(
            "kubernetes",
            expr,
            Status.WARNING if has_fallback else Status.MISSING,
            "kube-state-metrics is not scraped"
            + (
                "; the rules fall back to spec.deployment.memoryLimit"
                if has_fallback
                else " and the spec has no deployment.memoryLimit"
            ),
            subject,
        )
    if "oom_killed" in memory:
        expr, subject = owned(naming.KSM_RESTARTS)
        r.exists(
            "kubernetes",
            expr,
            Status.MISSING,
            "kube-state-metrics is not scraped; ModelContainerOOMKilled reads it",
            subject,
        )
        expr, subject = owned(naming.KSM_LAST_TERMINATED)
        r.exists(
            "kubernetes",
            expr,
            Status.WARNING,
            "kube-state-metrics shows it only after a container terminated",
            subject,
        )


def _gpu(r: _Report) -> None:
    plan = r.plan
    if plan.gpu_source != "sidecar":  # dcgm: the input guards name each missing field
        return
    why = "the NVML sidecar is not scraped or its pod/container labels differ"
    for metric in ("up", naming.GPU_EXPORTER_UP, naming.GPU_MEMORY_TOTAL, naming.GPU_MEMORY_FREE):
        r.series("gpu", metric, plan.gpu_matchers, Status.MISSING, why)


def _histograms(r: _Report) -> None:
    for key in sorted(r.plan.histograms):
        _histogram(r, r.plan.histograms[key])


_FORM_NEEDS = {"classic": ("classic",), "native": ("native",), "nhcb": ("native",)}
"""The series each declared form's rules read; ``both`` reads either."""


def _forms(r: _Report) -> None:
    """Per latency histogram, the form the server holds — classic (``<name>_bucket`` series),
    native (histogram samples of ``<name>``: ``histogram_count`` reads only those, NHCB
    included) or both — against ``spec.metrics.<key>.histogram``, naming what is missing."""
    for key in sorted(r.plan.histograms):
        hist = r.plan.histograms[key]
        classic = r.count(selector(f"{hist.metric}_bucket", hist.matchers))
        native = r.count(f"histogram_count({selector(hist.metric, hist.matchers)})")
        seen = (
            "both" if classic and native else "classic" if classic else "native" if native else None
        )
        counts = f"{classic} classic _bucket series, {native} native histogram series"
        subject = f"{hist.metric} ({hist.indicator})"
        if seen is None:
            r.add(
                "histogram form",
                subject,
                Status.WRONG,
                f"spec says {hist.form}; the server holds neither form: no {hist.metric}_bucket "
                f"series and no native samples of {hist.metric}",
            )
            continue
        need = _FORM_NEEDS.get(hist.form, ("classic", "native"))
        missing = [f for f in ("classic", "native") if f != seen and seen != "both"]
        if seen in need or seen == "both":
            detail = f"spec says {hist.form}, server holds {seen}: {counts}"
            if missing:
                detail += f"; {missing[0]} missing"
            r.add("histogram form", subject, Status.OK, detail)
            continue
        fix = (
            "set histogram: native (or nhcb for a converted classic exposition)"
            if seen == "native"
            else "set histogram: classic, or scrape it natively / with "
            "convert_classic_histograms_to_nhcb"
        )
        r.add(
            "histogram form",
            subject,
            Status.WRONG,
            f"spec says {hist.form} but the server holds {seen} only ({counts}): the "
            f"{need[0]} {'_bucket series are' if need[0] == 'classic' else 'samples are'} "
            f"missing and the latency rules read nothing; {fix}",
        )


def _goodput(r: _Report) -> None:
    """Per goodput SLO, one row: every target's histogram has series (its ``_count``, or the
    native series), since the union bound sums every target's share and is not recorded while
    one is missing (:mod:`generator.builders.goodput_rules`) — its alerts would stay silent."""
    for s in r.plan.goodput:
        present, missing = [], []
        for t in s.targets:
            h = t.histogram
            suffix = "" if h.native else "_count"
            counts = [(name, _present(r, name + suffix, h.matchers)) for name in h.names]
            there = next(((name, n) for name, n in counts if n), None)
            described = f"{h.indicator} ≤ {decimal_str(t.threshold_seconds)}s"
            if there is None:
                missing.append(f"{described} ({h.metric}{suffix})")
            else:
                present.append(f"{described} ({there[0]}{suffix}: {there[1]} series)")
        alerts = " and ".join(
            a
            for a, on in (
                (naming.ALERT_GOODPUT_BURN, bool(s.tiers)),
                (naming.ALERT_GOODPUT_BUDGET_LOW, bool(s.budget_levels)),
            )
            if on
        )
        if missing:
            r.add(
                "goodput",
                f"slo {s.name}",
                Status.MISSING,
                f"no series of target {', '.join(missing)}: the union bound is not recorded "
                f"while a target's histogram is missing, so {alerts or 'its records'} "
                "stay silent; fix spec.metrics or the selector, or drop the target",
            )
        else:
            r.add(
                "goodput",
                f"slo {s.name}",
                Status.OK,
                "every target's histogram has series: " + ", ".join(present),
            )


Check = Callable[[_Report], None]


def _duplicates(r: _Report) -> None:
    """Copies of the service's targets the rules would read twice: ``up`` series that differ
    only by a replica label (an HA pair nobody deduplicates before the ruler), and pods of the
    service scraped under several ``job``/``endpoint``/``instance`` (a second scrape
    configuration). Seen with ``ruler.deduplication: rules`` they are reported ``ok`` (the rules
    collapse them); otherwise the joins of the rules fail ("found duplicate series") and sums
    double: ``wrong``. docs/scale-out.md, "What the ruler must provide"."""
    plan = r.plan
    replicas = plan.replica_labels or DEFAULT_REPLICA_LABELS
    up = selector("up", plan.matchers)
    pods_matchers = [m for m in plan.matchers if m.label not in TARGET_COPY_LABELS]
    pod_up = selector("up", [*pods_matchers, Matcher("pod", "!=", "")])
    asks = (
        ("replicas", f"count without ({', '.join(replicas)}) ({up}) > 1", "an HA replica label"),
        (
            "targets",
            f"count without ({', '.join(sorted({*TARGET_COPY_LABELS, *replicas}))}) "
            f"({pod_up} and on (namespace, pod) {up}) > 1",
            "job/endpoint/instance (a second scrape configuration)",
        ),
    )
    for _, expr, how in asks:
        found = r.api.query(expr)
        if not found:
            r.add("duplicates", expr, Status.OK, "no copies")
            continue
        example = ", ".join(
            f"{k}={v}" for k, v in sorted(found[0].get("metric", {}).items()) if k != "__name__"
        )
        detail = f"{len(found)} series seen more than once, differing only by {how} ({example})"
        if plan.copy_labels:
            r.add(
                "duplicates",
                expr,
                Status.OK,
                f"{detail}; ruler.deduplication: rules collapses them",
            )
        else:
            r.add(
                "duplicates",
                expr,
                Status.WRONG,
                f"{detail}: the rules' joins fail (found duplicate series) and their sums double; "
                "deduplicate before the ruler (Thanos --query.replica-label, Mimir's HA tracker, "
                "one scrape configuration per pod) or set ruler.deduplication: rules in "
                "obsgen.yaml",
            )


CHECKS: tuple[Check, ...] = (
    _target,
    _scrape_interval,
    _requests,
    _gauges,
    _histograms,
    _forms,
    _goodput,
    model_rows,
    adapters_and_transfers,
    _pods,
    _kubernetes,
    _gpu,
    _duplicates,
)
"""The checks, in report order; each adds its rows to the report (``_pods`` before
``_kubernetes``, which reads only the attributed pods)."""


def verify_plan(plan: ServicePlan, api: PrometheusAPI) -> list[Row]:
    """Run every check of :data:`CHECKS` for ``plan``; one :class:`Row` each.

    Raises:
        ObsgenError: the server cannot be reached or answers errors (exit code 2).
    """
    report = _Report(plan, api)
    for check in CHECKS:
        check(report)
    return report.rows


def format_table(rows: Sequence[Row]) -> str:
    """Rows as an aligned text table with a header (``SERVICE CHECK STATUS SUBJECT DETAIL``)."""
    header = ("SERVICE", "CHECK", "STATUS", "SUBJECT", "DETAIL")
    # Subjects and details quote the server's label values: no control characters echoed.
    cells = [
        header,
        *(
            (r.service, r.check, r.status.value, printable(r.subject), printable(r.detail))
            for r in rows
        ),
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    lines = ["  ".join([*(c[i].ljust(widths[i]) for i in range(4)), c[4]]).rstrip() for c in cells]
    return "\n".join(lines)
