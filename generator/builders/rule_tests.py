"""Generated ``promtool test rules`` files: proof that every rendered alert fires and stays quiet.

For each plan this builds ``rules/<service>.test.yaml`` (promtool unit-test format, rule file
named relative to the test file). Every series name, selector, ``le`` spelling and threshold is
read from the plan, so the tests follow any spec and preset.

Traffic model: the synthetic counters start at 0 and grow by a constant number of events per
minute from the first sample, so every rate window — 5m or 3d — holds the same error ratio as
soon as ``rate()`` has two samples. That makes the expectation exact for every tier without
simulating days of samples (promtool evaluates every rule of the file at every step, so a 3d
baseline would cost thousands of steps per group). Which ``ErrorBudgetBurn`` tiers fire for a
traffic mix is predicted by :func:`expected_burns` from the tier thresholds and the
minimum-events guard; each tier gets a case burning 5 % above its threshold (fires, with every
lower-threshold tier) and one 5 % below (it stays quiet).

Detection time: per tier (tiers of several SLOs with the same windows share a case), the
counters run healthy for the long window + 5m, then every SLO burns 5 % above its threshold;
the case asserts silence one evaluation before the time :func:`generator.slo.recorded_detection_ms`
gives for our rules and the alert at it (at that earlier step the short window is already
over and the long one not: the fresh-spike single-window case). Coarse tiers run in
``rules/<service>.slow-<interval>.test.yaml`` files at a coarser ``evaluation_interval``
(per file in promtool) and a 2m30s scrape, so a 3d tier costs about 50 steps, not 8000.
Beside it, a burst that ended (twice the threshold, then 95 % of it) must stay silent once the
short window holds only the low share while the long one is still over: together the two
catch a threshold broken in either window alone. A new service with fewer than ``min_events``
events in its first minutes must not page (the guard's recorded-events count). Expectations
of all these follow :func:`generator.slo.profile_window_ratio` and
:func:`generator.slo.recorded_events`, for every tier of every SLO at each checked time.

Alerts are asserted with their exact labels *and* annotations: promtool compares both, so an
expectation without annotations could never pass. Annotations are the rule's own templates
rendered by :func:`render_template`, which supports only ``$labels.x``, ``$value`` and the
``humanizePercentage``/``humanizeDuration`` filters and raises on anything else.

Native histograms: promtool 2.42's series notation has no native-histogram syntax (``{{schema:…}}``
arrived in later releases), so SLOs and alerts on native histograms get only the zero-traffic
(no series) case; their burn cases are left out and listed in a comment of the test file.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import rstr

from generator import naming, slo
from generator.builders.common import Group, Rule
from generator.builders.gpu_rules import GPU_LABELS
from generator.builders.memory_rules import POD_LABELS
from generator.builders.rulefile import rule_groups
from generator.builders.test_merge import merge_cases, reads
from generator.errors import Diagnostic, ObsgenError
from generator.plan import HistogramPlan, ServicePlan, SLOPlan
from generator.promql import Matcher, go_float, prometheus3_le, quote
from generator.slo import Tier
from generator.units import decimal_str, format_duration_ms
from generator.yamlio import dump_yaml, generated_header

INTERVAL_MS = 60_000  # series step and evaluation interval of every group
BASE_PER_MIN = 6000  # events per minute of ordinary traffic: large enough for integer ratios
MARGIN = Fraction(5, 100)  # "slightly": 5 % above / below a threshold
POD = "pod-0"  # stand-in values; replaced by a matching example when a regex demands it
UUID = "GPU-00000000-0000-0000-0000-000000000000"
INSTANCE = "10.0.0.1:8000"

_ERROR_EXAMPLES = ("500", "503", "5xx", "error", "failed", "failure", "true", "1", "abort")
_OK_EXAMPLES = ("200", "ok", "2xx", "success", "false", "0", "stop", "length")
# Values for other regex matchers a preset uses (HTTP handlers, request types).
_OTHER_EXAMPLES = ("/v1/chat/completions", "/v1/completions", "active", "context", "generation")


# --- templates -------------------------------------------------------------------------------


def _go_g4(value: float) -> str:
    """Go's ``%.4g`` (as used by Prometheus' humanize functions)."""
    text = f"{value:.4g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = exponent[0]
        digits = exponent[1:].lstrip("0").rjust(2, "0")
        text = f"{mantissa}e{sign}{digits}"
    return text


def humanize_percentage(value: float) -> str:
    """Prometheus ``humanizePercentage``: ``0.2`` → ``20%``."""
    return _go_g4(value * 100) + "%"


def humanize_duration(seconds: float) -> str:
    """Prometheus ``humanizeDuration`` for values ≥ 1 s or 0 (enough for the tests here)."""
    if seconds == 0:
        return "0s"
    if abs(seconds) < 1:
        raise ValueError("sub-second humanizeDuration is not needed by the generated tests")
    whole = int(abs(seconds))
    days, hours, minutes, secs = whole // 86400, whole // 3600 % 24, whole // 60 % 60, whole % 60
    prefix = "-" if seconds < 0 else ""
    if days:
        return f"{prefix}{days}d {hours}h {minutes}m {secs}s"
    if hours:
        return f"{prefix}{hours}h {minutes}m {secs}s"
    if minutes:
        return f"{prefix}{minutes}m {secs}s"
    return f"{prefix}{_go_g4(abs(seconds))}s"


_TEMPLATE = re.compile(r"\{\{\s*(.*?)\s*\}\}")


def render_template(text: str, labels: Mapping[str, str], value: float | None) -> str:
    """Render an alert annotation the way Prometheus would, for the constructs obsgen uses.

    Raises:
        ValueError: a construct other than ``$labels.x``, ``$value`` (optionally piped to
            ``humanizePercentage`` or ``humanizeDuration``), or ``$value`` without a value.
    """

    def one(match: re.Match[str]) -> str:
        expr = match.group(1)
        if expr.startswith("$labels."):
            return labels.get(expr[len("$labels.") :], "")
        parts = [p.strip() for p in expr.split("|")]
        if parts[0] != "$value" or value is None or len(parts) > 2:
            raise ValueError(f"cannot render template {{{{ {expr} }}}} in a generated test")
        if len(parts) == 1:
            return go_float(value)
        if parts[1] == "humanizePercentage":
            return humanize_percentage(value)
        if parts[1] == "humanizeDuration":
            return humanize_duration(value)
        raise ValueError(f"unknown template function {parts[1]!r}")

    return _TEMPLATE.sub(one, text)


# --- series --------------------------------------------------------------------------------


def _printable(value: str) -> bool:
    return value.isprintable() and value.isascii() and "{{" not in value and "$" not in value


def _example(m: Matcher, candidates: Sequence[str]) -> str:
    """A label value that satisfies matcher ``m`` (an equality value, or a regex example).

    Known values are tried first; otherwise strings drawn from the regex itself (``rstr``,
    seeded with the pattern so output stays deterministic), keeping a printable one.

    Raises:
        ValueError: no printable example found (an exotic regex).
    """
    if m.op == "=":
        return m.value
    pattern = re.compile(m.value)
    for value in candidates:
        if pattern.fullmatch(value):
            return value
    draw = rstr.Rstr(random.Random(m.value))
    for _ in range(200):
        value = draw.xeger(m.value)
        if _printable(value) and pattern.fullmatch(value):
            return value
    raise ValueError(f"no printable example value matches {m.render()}")


def _non_matching(m: Matcher, candidates: Sequence[str]) -> str | None:
    """A label value that ``m`` does not match, or None: leave the label off the series."""
    pattern = re.compile(m.value)
    for value in candidates:
        if not pattern.fullmatch(value):
            return value
    return None


def _pod(plan: ServicePlan) -> str:
    for m in plan.pod_matchers:
        if m.label == "pod":
            return _example(m, (f"{plan.deployment_name}-7d9f8b6c5d-x2k4q", POD))
    return POD


def _labels(plan: ServicePlan, matchers: Sequence[Matcher], **extra: str) -> dict[str, str]:
    """Labels of a synthetic series that ``matchers`` select, with the aggregation labels set."""
    labels = {label: f"test-{label}" for label in plan.agg_labels}
    for m in matchers:
        if m.label == "pod":
            labels["pod"] = _pod(plan)
        elif m.op in ("=", "=~"):
            labels[m.label] = _example(m, (*_ERROR_EXAMPLES, *_OK_EXAMPLES, *_OTHER_EXAMPLES))
    labels.update(extra)
    return labels


def _series(name: str, labels: Mapping[str, str]) -> str:
    inner = ",".join(f"{k}={quote(v)}" for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


@dataclass
class Series:
    """Synthetic input series, keyed by (metric, labels); values are per-step increments."""

    counters: dict[tuple[str, tuple[tuple[str, str], ...]], float] = field(default_factory=dict)
    gauges: dict[tuple[str, tuple[tuple[str, str], ...]], str] = field(default_factory=dict)

    def add(self, name: str, labels: Mapping[str, str], per_step: float) -> None:
        key = (name, tuple(sorted(labels.items())))
        self.counters[key] = self.counters.get(key, 0.0) + per_step

    def gauge(self, name: str, labels: Mapping[str, str], values: str) -> None:
        self.gauges[(name, tuple(sorted(labels.items())))] = values

    def drop(self, name: str) -> None:
        self.gauges = {k: v for k, v in self.gauges.items() if k[0] != name}

    def render(self, steps: int, reset_at: int | None = None) -> list[dict[str, str]]:
        out = []
        for (name, labels), per_step in sorted(self.counters.items()):
            inc = go_float(per_step)
            if reset_at is None:
                values = f"0+{inc}x{steps}"
            else:  # the pod restarts: every counter drops to 0 and counts on
                values = f"0+{inc}x{reset_at - 1} 0+{inc}x{steps - reset_at}"
            out.append({"series": _series(name, dict(labels)), "values": values})
        for (name, labels), values in sorted(self.gauges.items()):
            out.append({"series": _series(name, dict(labels)), "values": values})
        return out


@dataclass(frozen=True)
class Klass:
    """A class of requests: events per minute, failed or not, duration (s) per histogram key."""

    per_min: float
    error: bool = False
    durations: tuple[tuple[str, float], ...] = ()

    def duration(self, h: HistogramPlan) -> float:
        """Seconds this class takes on histogram ``h`` (fast — under the first bucket — by default)."""
        return dict(self.durations).get(h.key, h.buckets[0] * h.seconds_per_unit / 2)


def _le(bound: float, version: str) -> str:
    # What the server stores: Prometheus 3 normalises; 2 keeps the Go client's spelling.
    return prometheus3_le(bound) if version == "3" else go_float(bound)


def _status_labels(plan: ServicePlan, error: bool) -> dict[str, str]:
    req = plan.requests
    if req.failure_name is not None:
        return {}
    labels = {}
    for m in req.error_matchers:
        if error:
            labels[m.label] = _example(m, _ERROR_EXAMPLES)
        else:
            # A label only failed requests carry (e.g. status=~".+") is absent on good ones.
            ok = _non_matching(m, _OK_EXAMPLES)
            if ok is not None:
                labels[m.label] = ok
    return labels


def _shared_histogram(plan: ServicePlan) -> HistogramPlan | None:
    for h in plan.histograms.values():
        if not h.native and h.metric + "_count" == plan.requests.name:
            return h
    return None


def traffic(plan: ServicePlan, classes: Sequence[Klass], s: Series | None = None) -> Series:
    """Counters for ``classes``: request counters and every classic histogram of the plan."""
    s = s or Series()
    req = plan.requests
    shared = _shared_histogram(plan)
    for k in classes:
        status = _status_labels(plan, k.error)
        if shared is None:
            name = req.failure_name if (k.error and req.failure_name) else req.name
            s.add(name, _labels(plan, req.matchers, **status), k.per_min)
        for h in plan.histograms.values():
            if h.native:
                continue
            labels = _labels(plan, h.matchers, **(status if h is shared else {}))
            d = k.duration(h)
            for b in h.buckets:
                if d <= b * h.seconds_per_unit:
                    s.add(
                        h.metric + "_bucket", {**labels, "le": _le(b, plan.le_version)}, k.per_min
                    )
                else:
                    s.add(h.metric + "_bucket", {**labels, "le": _le(b, plan.le_version)}, 0)
            s.add(h.metric + "_bucket", {**labels, "le": "+Inf"}, k.per_min)
            s.add(h.metric + "_count", labels, k.per_min)
    return s


def healthy(plan: ServicePlan, classes: Sequence[Klass]) -> Series:
    """A healthy service: targets up, memory and GPUs fine, queue empty, plus ``classes`` traffic."""
    s = traffic(plan, classes)
    s.gauge("up", _labels(plan, plan.matchers, instance=INSTANCE), "1+0x60")
    for gauge in (plan.queue_depth, plan.running_requests):
        if gauge is not None:
            s.gauge(gauge.name, _labels(plan, gauge.matchers), "0+0x60")
    kv = plan.kv_cache_usage
    if kv is not None:
        s.gauge(kv.name, _labels(plan, kv.matchers, pod=_pod(plan)), "0+0x60")
        if kv.denominator is not None:
            s.gauge(kv.name, _labels(plan, kv.denominator, pod=_pod(plan)), "1000+0x60")
    if plan.memory_limit_bytes is not None or "memory_headroom" in plan.alerts:
        limit = _limit(plan)
        pod = _labels(plan, plan.pod_matchers)
        s.gauge(naming.KSM_LIMITS, {**pod, "resource": "memory"}, f"{limit}+0x60")
        s.gauge(naming.CADVISOR_WORKING_SET, pod, f"{limit // 4}+0x60")
        s.gauge(naming.KSM_RESTARTS, pod, "0+0x60")
    if plan.gpu_exporter:
        gpu = _labels(plan, plan.gpu_matchers)
        total = 80 * 2**30
        s.gauge(naming.GPU_MEMORY_TOTAL, {**gpu, "uuid": UUID}, f"{total}+0x60")
        s.gauge(naming.GPU_MEMORY_FREE, {**gpu, "uuid": UUID}, f"{total // 2}+0x60")
        s.gauge(naming.GPU_TEMPERATURE, {**gpu, "uuid": UUID}, "60+0x60")
        s.gauge(naming.GPU_XID_ERRORS, {**gpu, "uuid": UUID, "xid": "79"}, "0+0x60")
        s.gauge(naming.GPU_EXPORTER_UP, gpu, "1+0x60")
        s.gauge("up", gpu, "1+0x60")
    return s


def _limit(plan: ServicePlan) -> int:
    return plan.memory_limit_bytes or 32 * 2**30


# --- expectations ------------------------------------------------------------------------


def _agg(plan: ServicePlan, matchers: Sequence[Matcher]) -> dict[str, str]:
    labels = _labels(plan, matchers)
    return {k: labels[k] for k in plan.agg_labels}


_last_alert_rules: tuple[ServicePlan, list[Rule]] | None = None


def _alert_rules(plan: ServicePlan) -> list[Rule]:
    """The alerting rules of ``plan`` (read-only). Test cases ask for them hundreds of times per
    plan, and plans are rendered one after another: keep the last plan's rules."""
    global _last_alert_rules
    if _last_alert_rules is None or _last_alert_rules[0] is not plan:
        rules = [r for g in rule_groups(plan) for r in g["rules"] if "alert" in r]
        _last_alert_rules = (plan, rules)
    return _last_alert_rules[1]


def _expect(rule: Rule, series_labels: Mapping[str, str], value: float | None) -> dict[str, Any]:
    labels = {**series_labels, **rule["labels"]}
    full = {**labels, "alertname": rule["alert"]}
    return {
        "exp_labels": dict(sorted(labels.items())),
        "exp_annotations": {
            k: render_template(v, full, value) for k, v in sorted(rule["annotations"].items())
        },
    }


def slo_bad_ratio(s: SLOPlan, classes: Sequence[Klass]) -> tuple[Fraction, float]:
    """(bad-event ratio, events per second) the SLI ``s`` sees for ``classes``."""
    total = sum(Fraction(k.per_min) for k in classes)
    if total == 0:
        return Fraction(0), 0.0
    if s.histogram is None:
        bad = sum(Fraction(k.per_min) for k in classes if k.error)
    else:
        h, limit = s.histogram, s.threshold_seconds or 0.0
        bad = sum(Fraction(k.per_min) for k in classes if k.duration(h) > limit)
    return bad / total, float(total) / 60


def _burn_alerts(
    plan: ServicePlan, classes: Sequence[Klass], fires: Callable[[SLOPlan, Tier], bool]
) -> list[dict[str, Any]]:
    """Expected ``ErrorBudgetBurn`` alerts of the tiers for which ``fires(slo, tier)`` holds.

    SLOs on native histograms have no input series in promtool 2.42, so they never fire here.
    """
    rules = [r for r in _alert_rules(plan) if r["alert"] == naming.ALERT_ERROR_BUDGET_BURN]
    found = []
    for s in plan.slos:
        if s.histogram is not None and s.histogram.native:
            continue
        for tier in s.tiers:
            if not fires(s, tier):
                continue
            rule = next(
                r
                for r in rules
                if r["labels"][naming.SLO] == s.name
                and r["labels"][naming.LONG_WINDOW] == naming.window(tier.long_window_ms)
                and r["labels"][naming.SHORT_WINDOW] == naming.window(tier.short_window_ms)
            )
            series = {**_agg(plan, plan.requests.matchers), naming.SERVICE: plan.name}
            found.append(_expect(rule, {**series, naming.SLO: s.name}, None))
    return sorted(found, key=lambda a: sorted(a["exp_labels"].items()))


def expected_burns(plan: ServicePlan, classes: Sequence[Klass], at_ms: int) -> list[dict[str, Any]]:
    """Every ``ErrorBudgetBurn`` alert (labels, annotations) that steady ``classes`` traffic,
    counted from 0 at time 0, fires ``at_ms`` later (1m evaluations).

    A tier fires when the SLI's bad ratio exceeds its threshold and the minimum-events guard
    sees enough events in its long window (:func:`generator.slo.recorded_events`: no credit
    for history the series does not have yet).
    """
    return burns_for_phases(plan, [(0, classes)], at_ms, INTERVAL_MS)


def burns_for_phases(
    plan: ServicePlan,
    phases: Sequence[tuple[int, Sequence[Klass]]],
    at_ms: int,
    evaluation_interval_ms: int,
) -> list[dict[str, Any]]:
    """``ErrorBudgetBurn`` alerts ``at_ms`` after counters began at 0, for traffic that runs as
    each phase's classes from its start (ms) on, at one total rate.

    Both windows follow :func:`generator.slo.profile_window_ratio` (our rules' 5m-rate ramps,
    evaluation steps and partial history); the guard follows
    :func:`generator.slo.recorded_events`.
    """

    def fires(s: SLOPlan, tier: Tier) -> bool:
        shares = [(start, slo_bad_ratio(s, classes)[0]) for start, classes in phases]
        per_s = Fraction(slo_bad_ratio(s, phases[-1][1])[1])
        events = slo.recorded_events(per_s, at_ms, tier.long_window_ms, evaluation_interval_ms)
        return events >= s.min_events and all(
            slo.profile_window_ratio(shares, at_ms, w, evaluation_interval_ms) > tier.threshold
            for w in (tier.long_window_ms, tier.short_window_ms)
        )

    return _burn_alerts(plan, phases[-1][1], fires)


def _mix(per_min: int, ratio: Fraction, bad: Klass) -> list[Klass]:
    """``per_min`` events a minute, ``ratio`` of them of class ``bad`` (rounded to whole events)."""
    n_bad = ratio * per_min
    good = Klass(float(per_min - n_bad))
    return [good, Klass(float(n_bad), bad.error, bad.durations)] if n_bad else [good]


def _slow(h: HistogramPlan, bound_seconds: float, above: bool) -> Klass:
    """A request just above (next bucket) or just below (this bucket) ``bound_seconds``."""
    bounds = [b * h.seconds_per_unit for b in h.buckets]
    i = next(i for i, b in enumerate(bounds) if b >= bound_seconds - 1e-12)
    if above:
        d = (bounds[i] + bounds[i + 1]) / 2 if i + 1 < len(bounds) else bounds[i] * 2
    else:
        d = (bounds[i - 1] + bounds[i]) / 2 if i > 0 else bounds[i] / 2
    return Klass(0, False, ((h.key, d),))


# --- test groups ---------------------------------------------------------------------------

CHECK_MS = 15 * 60_000  # rates are steady 5m after the first sample; checked 10m later


def _group(
    name: str,
    series: list[dict[str, str]],
    tests: list[dict[str, Any]],
    interval_ms: int = INTERVAL_MS,
) -> dict[str, Any]:
    return {
        "name": name,
        "interval": format_duration_ms(interval_ms),
        "input_series": series,
        "alert_rule_test": tests,
    }


def _at(ms: int, alert: str, expected: list[dict[str, Any]]) -> dict[str, Any]:
    return {"eval_time": format_duration_ms(ms), "alertname": alert, "exp_alerts": expected}


def _steps(until_ms: int) -> int:
    return until_ms // INTERVAL_MS + 5


def _burn_group(
    plan: ServicePlan, name: str, classes: list[Klass], reset: bool = False
) -> dict[str, Any]:
    steps = _steps(CHECK_MS + 30 * 60_000 if reset else CHECK_MS)
    check = CHECK_MS + 30 * 60_000 if reset else CHECK_MS
    series = healthy(plan, classes).render(
        steps, reset_at=check // INTERVAL_MS - 10 if reset else None
    )
    tests = [_at(check, naming.ALERT_ERROR_BUDGET_BURN, expected_burns(plan, classes, check))]
    return _group(name, series, tests)


def new_service_group(plan: ServicePlan) -> dict[str, Any] | None:
    """A new service whose every request is bad, at a trickle: by 5m it has seen fewer than
    ``min_events`` events and must not page, though the mean-rate estimate alone would credit
    its 1h window with several times that; by 30m it has enough and pages. Expectations follow
    :func:`generator.slo.recorded_events`. None without burn-rate tiers."""
    slos = [s for s in plan.slos if s.tiers and not (s.histogram and s.histogram.native)]
    if not slos:
        return None
    durations: dict[str, float] = {}
    for s in slos:
        for key, d in _bad_class(s).durations:
            durations[key] = max(d, durations.get(key, 0.0))
    per_min = Fraction(min(s.min_events for s in slos), 10)  # min_events / 2 by 5 minutes
    bad = [Klass(float(per_min), True, tuple(sorted(durations.items())))]
    early, late = 5 * 60_000, 30 * 60_000
    series = traffic(plan, bad).render(_steps(late))
    fastest = min((t for s in slos for t in s.tiers), key=lambda t: t.long_window_ms)
    mean = Fraction(per_min, 60) * Fraction(3, 5) * Fraction(fastest.long_window_ms, 1000)
    tests = [
        _at(at, naming.ALERT_ERROR_BUDGET_BURN, burns_for_phases(plan, [(0, bad)], at, INTERVAL_MS))
        for at in (early, late)
    ]
    name = (
        f"a new service, every request bad at {decimal_str(per_min)}/min: "
        f"{decimal_str(per_min * 5)} events by 5m do not page (its mean rate alone credits the "
        f"{naming.window(fastest.long_window_ms)} window with {decimal_str(mean)}); by 30m it pages"
    )
    return _group(name, series, tests)


def slo_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """Per SLO and tier: 5 % above the threshold fires, 5 % below stays quiet; latency SLOs:
    slow requests just above the threshold bucket burn, just below do not; a low-traffic case
    for the minimum-events guard; a counter reset raises nothing."""
    groups = []
    for s in plan.slos:
        if s.histogram is not None and s.histogram.native:
            continue
        bad = (
            Klass(0, True)
            if s.histogram is None
            else _slow(s.histogram, s.threshold_seconds or 0.0, above=True)
        )
        for tier in s.tiers:
            where = f"{s.name} {naming.window(tier.long_window_ms)}/{naming.window(tier.short_window_ms)}"
            high = min(Fraction(1), tier.threshold * (1 + MARGIN))
            low = tier.threshold * (1 - MARGIN)
            if high > tier.threshold:
                groups.append(
                    _burn_group(
                        plan,
                        f"{where}: burning 5% above {decimal_str(tier.factor)}x fires",
                        _mix(BASE_PER_MIN * 100, high, bad),
                    )
                )
            groups.append(
                _burn_group(
                    plan,
                    f"{where}: burning 5% below {decimal_str(tier.factor)}x stays quiet",
                    _mix(BASE_PER_MIN * 100, low, bad),
                )
            )
        if s.histogram is not None and s.tiers:
            top = max(t.threshold for t in s.tiers)
            ratio = min(Fraction(1), top * 2)
            for above in (True, False):
                k = _slow(s.histogram, s.threshold_seconds or 0.0, above)
                word = "just above" if above else "just below"
                groups.append(
                    _burn_group(
                        plan,
                        f"{s.name}: slow requests {word} the threshold bucket "
                        + ("burn budget" if above else "do not burn budget"),
                        _mix(BASE_PER_MIN * 100, ratio, k),
                    )
                )
        if s.tiers:
            # Only bad events, but so few that the fastest tier's long window misses min_events.
            fastest = min(s.tiers, key=lambda t: t.long_window_ms)
            per_min = Fraction(s.min_events, 2) * 60_000 / fastest.long_window_ms
            groups.append(
                _burn_group(
                    plan,
                    f"{s.name}: fewer than {s.min_events} events in {naming.window(fastest.long_window_ms)} do not page",
                    [Klass(float(per_min), bad.error, bad.durations)],
                )
            )
    start = new_service_group(plan)
    if start is not None:
        groups.append(start)
    lowest = [t.threshold for s in plan.slos for t in s.tiers]
    if lowest:
        ratio = min(lowest) / 2
        groups.append(
            _burn_group(
                plan,
                "a counter reset (pod restart) raises no burn alert",
                _mix(BASE_PER_MIN * 100, ratio, Klass(0, True)),
                reset=True,
            )
        )
    return groups


# --- detection time ------------------------------------------------------------------------

# Evaluation intervals of detection cases, finest first; each interval gets its own test file
# (``evaluation_interval`` is per file). promtool evaluates every rule at every step, so a 3d
# tier at 1m would take thousands of steps; the coarsest interval that leaves at least
# MIN_WINDOW_SAMPLES evaluations in the long window keeps each case near 50–150 steps.
DETECTION_INTERVALS_MS = (60_000, 600_000, 3_600_000, 10_800_000)
MIN_WINDOW_SAMPLES = 24
# Scrape interval of the coarser cases: days of 1m samples dominate promtool's time, and the
# detection model needs a divisor of 5m (2 steps of the 5m rate window).
SLOW_SCRAPE_MS = 150_000


def detection_interval_ms(tier: Tier) -> int:
    """Evaluation interval (ms) of ``tier``'s detection case (see DETECTION_INTERVALS_MS)."""
    fitting = [e for e in DETECTION_INTERVALS_MS if tier.long_window_ms // e >= MIN_WINDOW_SAMPLES]
    return max(fitting, default=DETECTION_INTERVALS_MS[0])


def _onset_series(
    plan: ServicePlan,
    before: Sequence[Klass],
    after: Sequence[Klass],
    onset_steps: int,
    steps: int,
    scrape_ms: int,
) -> list[dict[str, str]]:
    """Counters scraped every ``scrape_ms``, growing as ``before`` until step ``onset_steps``,
    then as ``after``."""
    a, b = traffic(plan, before), traffic(plan, after)
    out = []
    per_step = scrape_ms / 60_000  # Klass rates are per minute
    for key in sorted(set(a.counters) | set(b.counters)):
        x, y = a.counters.get(key, 0.0) * per_step, b.counters.get(key, 0.0) * per_step
        values = (
            f"0+{go_float(x)}x{onset_steps} "
            f"{go_float(x * onset_steps + y)}+{go_float(y)}x{steps - onset_steps - 1}"
        )
        out.append({"series": _series(key[0], dict(key[1])), "values": values})
    return out


def _shares_mix(
    members: Sequence[tuple[SLOPlan, Tier]], targets: Sequence[Fraction]
) -> list[Klass] | None:
    """Traffic giving each member SLO its target bad share, every SLO by its own bad class;
    None when the shares do not fit or one class counts against another SLO."""
    total = BASE_PER_MIN * 100
    if sum(targets) > 1:
        return None
    bad = [
        Klass(float(r * total), k.error, k.durations)
        for r, (s, _) in zip(targets, members, strict=True)
        for k in [_bad_class(s)]
    ]
    mix = [Klass(float(total - sum(r * total for r in targets))), *bad]
    if any(slo_bad_ratio(s, mix)[0] != r for r, (s, _) in zip(targets, members, strict=True)):
        return None
    return mix


def detection_group(
    plan: ServicePlan, members: Sequence[tuple[SLOPlan, Tier]]
) -> tuple[int, dict[str, Any]] | None:
    """(evaluation interval, case) for tiers with the same windows (one per SLO): healthy
    traffic for the long window + 5m, then every SLO burning 5 % above its tier's threshold;
    silent one evaluation before the detection time our rules give
    (:func:`generator.slo.recorded_detection_ms`), firing at it. None when the members cannot
    share a case (different detection times, or their bad shares do not fit) or a threshold
    leaves no room above it."""
    tier = members[0][1]
    e = detection_interval_ms(tier)
    after = _shares_mix(members, [min(Fraction(1), t.threshold * (1 + MARGIN)) for _, t in members])
    if after is None:
        return None
    found = {slo.recorded_detection_ms(t, slo_bad_ratio(s, after)[0], e) for s, t in members}
    if len(found) != 1 or None in found:
        return None
    detect = found.pop()
    if detect is None:
        return None
    history = -(-(tier.long_window_ms + slo.RATE_WINDOW_MS + e) // e) * e
    scrape = INTERVAL_MS if e == INTERVAL_MS else SLOW_SCRAPE_MS
    steps = (history + detect) // scrape + 2
    series = _onset_series(
        plan, [Klass(BASE_PER_MIN * 100)], after, history // scrape, steps, scrape
    )
    tests = [
        _at(
            history + since,
            naming.ALERT_ERROR_BUDGET_BURN,
            burns_for_phases(
                plan, [(0, [Klass(BASE_PER_MIN * 100)]), (history, after)], history + since, e
            ),
        )
        for since in (detect - e, detect)
    ]
    # One evaluation earlier the short window is normally over already: a fresh spike that a
    # lowered long-window threshold would let through.
    spike = all(
        slo.recorded_window_ratio(slo_bad_ratio(s, after)[0], detect - e, t.short_window_ms, e)
        > t.threshold
        for s, t in members
    )
    # The Workbook's instant ratio crosses at threshold × long / ratio = long / 1.05.
    workbook = Fraction(tier.long_window_ms) / (1 + MARGIN)
    name = (
        f"{', '.join(s.name for s, _ in members)} "
        f"{naming.window(tier.long_window_ms)}/{naming.window(tier.short_window_ms)}: "
        f"5% above the threshold after a healthy {format_duration_ms(history)} fires "
        f"{format_duration_ms(detect)} in, not {format_duration_ms(detect - e)}"
        f"{' (short window over, long under)' if spike else ''} "
        f"(Workbook: {format_duration_ms(int(workbook) // 1000 * 1000)})"
    )
    return e, _group(name, series, tests, scrape)


def burst_ended_group(
    plan: ServicePlan, members: Sequence[tuple[SLOPlan, Tier]]
) -> tuple[int, dict[str, Any]] | None:
    """(evaluation interval, case) for tiers with the same windows: every SLO burns at twice its
    threshold, then drops to 5 % below it; once the short window holds only the low share
    (its ratio is exactly 95 % of the threshold) the long window is still over, and the tier
    must stay silent. A lowered short-window threshold fires here. None when the shares do not
    fit or the long window would not be over."""
    tier = members[0][1]
    e = detection_interval_ms(tier)
    burst = _shares_mix(members, [min(Fraction(1), t.threshold * 2) for _, t in members])
    low = _shares_mix(members, [t.threshold * (1 - MARGIN) for _, t in members])
    if burst is None or low is None:
        return None
    # Long enough for the short window and its 5m rates to hold only the low phase.
    switch = -(-(tier.short_window_ms + slo.RATE_WINDOW_MS + e) // e) * e
    at = 2 * switch
    for s, t in members:
        shares = [(0, slo_bad_ratio(s, burst)[0]), (switch, slo_bad_ratio(s, low)[0])]
        if slo.profile_window_ratio(shares, at, t.long_window_ms, e) <= t.threshold:
            return None
    scrape = INTERVAL_MS if e == INTERVAL_MS else SLOW_SCRAPE_MS
    series = _onset_series(plan, burst, low, switch // scrape, at // scrape + 2, scrape)
    expected = burns_for_phases(plan, [(0, burst), (switch, low)], at, e)
    name = (
        f"{', '.join(s.name for s, _ in members)} "
        f"{naming.window(tier.long_window_ms)}/{naming.window(tier.short_window_ms)}: "
        f"a burst that ended (2x the threshold for {format_duration_ms(switch)}, then 5% below) "
        "stays silent: long window over, short window under"
    )
    return e, _group(name, series, [_at(at, naming.ALERT_ERROR_BUDGET_BURN, expected)], scrape)


def detection_groups(plan: ServicePlan) -> dict[int, list[dict[str, Any]]]:
    """Detection-time and burst-ended cases of every tier, by evaluation interval (ms). Tiers with the same
    windows share one case when they can (fewer promtool steps); otherwise one case each."""
    by_windows: dict[tuple[int, int], list[tuple[SLOPlan, Tier]]] = {}
    for s in plan.slos:
        if s.histogram is not None and s.histogram.native:
            continue
        for tier in s.tiers:
            by_windows.setdefault((tier.long_window_ms, tier.short_window_ms), []).append((s, tier))
    out: dict[int, list[dict[str, Any]]] = {}
    for _, members in sorted(by_windows.items()):
        for build in (detection_group, burst_ended_group):
            shared = build(plan, members)
            cases = [shared] if shared else [build(plan, [m]) for m in members]
            for case in cases:
                if case is not None:
                    out.setdefault(case[0], []).append(case[1])
    return out


def _bad_class(s: SLOPlan) -> Klass:
    """A request the SLI counts as bad: a failure, or one just above the latency threshold."""
    if s.histogram is None:
        return Klass(0, True)
    return _slow(s.histogram, s.threshold_seconds or 0.0, above=True)


def _family_case(
    plan: ServicePlan,
    name: str,
    series: Series,
    alert: str,
    expected: list[dict[str, Any]],
    at_ms: int,
) -> dict[str, Any]:
    return _group(name, series.render(_steps(at_ms)), [_at(at_ms, alert, expected)])


def _rule(plan: ServicePlan, alert: str, severity: str | None = None) -> Rule:
    return next(
        r
        for r in _alert_rules(plan)
        if r["alert"] == alert and (severity is None or r["labels"][naming.SEVERITY] == severity)
    )


def _after_for(plan: ServicePlan, key: str) -> int:
    return CHECK_MS + plan.alerts[key].for_ms


def family_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """A firing and a quiet case for every non-SLO alert family the plan enables."""
    base = [Klass(BASE_PER_MIN)]
    groups: list[dict[str, Any]] = []
    alerts = plan.alerts
    svc = {naming.SERVICE: plan.name}

    def case(
        key: str, alert: str, fire: Series, quiet: Series, expected: list[dict[str, Any]]
    ) -> None:
        at = _after_for(plan, key)
        groups.append(_family_case(plan, f"{alert} fires", fire, alert, expected, at))
        groups.append(_family_case(plan, f"{alert} stays quiet", quiet, alert, [], at))

    if "latency_p99" in alerts:
        a = alerts["latency_p99"]
        h = plan.histograms[a.params["indicator"]]
        if not h.native:
            top = h.buckets[-1] * h.seconds_per_unit  # in +Inf: p99 reports the top bound
            fire = healthy(plan, [Klass(BASE_PER_MIN, False, ((h.key, top * 2),))])
            labels = {
                **_agg(plan, h.matchers),
                **svc,
                naming.INDICATOR: h.indicator,
                naming.QUANTILE: "0.99",
            }
            expected = [_expect(_rule(plan, naming.ALERT_LATENCY_P99), labels, top)]
            quiet = healthy(plan, base)
            if 0.99 * h.buckets[0] * h.seconds_per_unit <= a.params["threshold_seconds"]:
                case("latency_p99", naming.ALERT_LATENCY_P99, fire, quiet, expected)
    if "slow_requests" in alerts:
        a = alerts["slow_requests"]
        h = plan.histograms[a.params["indicator"]]
        if not h.native:
            slow = _slow(h, a.params["threshold_seconds"], above=True)
            max_ratio = Fraction(str(a.params["max_ratio"]))
            high, low = (max_ratio + 1) / 2, max_ratio / 2
            labels = {
                **_agg(plan, h.matchers),
                **svc,
                naming.INDICATOR: h.indicator,
                "threshold": _rule(plan, naming.ALERT_SLOW_REQUESTS)["labels"].get("threshold")
                or _slow_threshold(plan),
            }
            expected = [_expect(_rule(plan, naming.ALERT_SLOW_REQUESTS), labels, float(high))]
            case(
                "slow_requests",
                naming.ALERT_SLOW_REQUESTS,
                healthy(plan, _mix(BASE_PER_MIN, high, slow)),
                healthy(plan, _mix(BASE_PER_MIN, low, slow)),
                expected,
            )
    if "error_ratio" in alerts:
        max_ratio = Fraction(str(alerts["error_ratio"].params["max_ratio"]))
        high, low = (max_ratio + 1) / 2, max_ratio / 2
        labels = {**_agg(plan, plan.requests.matchers), **svc}
        expected = [_expect(_rule(plan, naming.ALERT_ERROR_RATIO), labels, float(high))]
        case(
            "error_ratio",
            naming.ALERT_ERROR_RATIO,
            healthy(plan, _mix(BASE_PER_MIN, high, Klass(0, True))),
            healthy(plan, _mix(BASE_PER_MIN, low, Klass(0, True))),
            expected,
        )
    for key, gauge, alert, extra in (
        ("queue_depth", plan.queue_depth, naming.ALERT_QUEUE_DEPTH, {}),
        ("kv_cache", plan.kv_cache_usage, naming.ALERT_KV_CACHE, {"pod": _pod(plan)}),
    ):
        if key not in alerts or gauge is None:
            continue
        limit = float(alerts[key].params["max"])
        value = limit * 2 + 1 if key == "queue_depth" else (limit + 1) / 2
        fire = healthy(plan, base)
        raw = value / gauge.scale
        if gauge.denominator is not None:
            # A ratio of two gauges (Triton's used / max KV-cache blocks): max = 1000.
            raw *= 1000
            fire.gauge(gauge.name, _labels(plan, gauge.denominator, **extra), "1000+0x60")
        fire.gauge(gauge.name, _labels(plan, gauge.matchers, **extra), f"{go_float(raw)}+0x60")
        labels = {**_agg(plan, gauge.matchers), **svc, **extra}
        case(key, alert, fire, healthy(plan, base), [_expect(_rule(plan, alert), labels, value)])
    pod = _labels(plan, plan.pod_matchers)
    pod_out = {k: pod[k] for k in POD_LABELS if k in pod}
    limit = _limit(plan)
    if "memory_headroom" in alerts:
        min_free = Fraction(str(alerts["memory_headroom"].params["min_free"]))
        used = int(limit * (1 - min_free / 2))
        fire = healthy(plan, base)
        fire.gauge(naming.CADVISOR_WORKING_SET, pod, f"{used}+0x60")
        expected = [
            _expect(_rule(plan, naming.ALERT_MEMORY_HEADROOM), {**pod_out, **svc}, used / limit)
        ]
        case("memory_headroom", naming.ALERT_MEMORY_HEADROOM, fire, healthy(plan, base), expected)
    if "memory_exhaustion" in alerts:
        horizon_s = alerts["memory_exhaustion"].params["horizon_ms"] / 1000
        per_min = limit * 60 // int(horizon_s)  # reaches the limit within one horizon
        fire = healthy(plan, base)
        fire.gauge(naming.CADVISOR_WORKING_SET, pod, f"{limit // 2}+{per_min}x120")
        at = (
            CHECK_MS
            + alerts["memory_exhaustion"].for_ms
            + alerts["memory_exhaustion"].params["lookback_ms"]
        )
        rule = _rule(plan, naming.ALERT_MEMORY_EXHAUSTION)
        groups.append(
            _family_case(
                plan,
                f"{rule['alert']} fires",
                fire,
                rule["alert"],
                [_expect(rule, pod_out, None)],
                at,
            )
        )
        groups.append(
            _family_case(
                plan, f"{rule['alert']} stays quiet", healthy(plan, base), rule["alert"], [], at
            )
        )
    if "oom_killed" in alerts:
        fire = healthy(plan, base)
        fire.gauge(naming.KSM_RESTARTS, pod, "0x10 1x50")
        fire.gauge(naming.KSM_LAST_TERMINATED, {**pod, "reason": "OOMKilled"}, "1x60")
        quiet = healthy(plan, base)
        quiet.gauge(naming.KSM_LAST_TERMINATED, {**pod, "reason": "OOMKilled"}, "1x60")
        rule = _rule(plan, naming.ALERT_OOM_KILLED)
        case("oom_killed", rule["alert"], fire, quiet, [_expect(rule, pod_out, None)])
    if "target_down" in alerts:
        up = _labels(plan, plan.matchers, instance=INSTANCE)
        keys = {m.label: up[m.label] for m in plan.matchers}
        critical = _rule(plan, naming.ALERT_TARGET_DOWN, alerts["target_down"].severity)
        warning = next(
            r
            for r in _alert_rules(plan)
            if r["alert"] == naming.ALERT_TARGET_DOWN
            and r is not critical
            and r["expr"] != critical["expr"]
        )
        at = _after_for(plan, "target_down")
        all_down = healthy(plan, base)
        all_down.gauge("up", up, "0+0x60")
        groups.append(
            _family_case(
                plan,
                "ModelTargetDown: every target down pages",
                all_down,
                naming.ALERT_TARGET_DOWN,
                [_expect(critical, keys, None)],
                at,
            )
        )
        absent = healthy(plan, base)
        absent.gauges = {
            k: v for k, v in absent.gauges.items() if not (k[0] == "up" and dict(k[1]) == up)
        }
        groups.append(
            _family_case(
                plan,
                "ModelTargetDown: no target at all pages",
                absent,
                naming.ALERT_TARGET_DOWN,
                [_expect(critical, keys, None)],
                at,
            )
        )
        one_down = healthy(plan, base)
        other = {**up, "instance": "10.0.0.2:8000"}
        one_down.gauge("up", other, "0+0x60")
        groups.append(
            _family_case(
                plan,
                "ModelTargetDown: one target of two down tickets",
                one_down,
                naming.ALERT_TARGET_DOWN,
                [_expect(warning, other, None)],
                at,
            )
        )
        groups.append(
            _family_case(
                plan,
                "ModelTargetDown: targets up stay quiet",
                healthy(plan, base),
                naming.ALERT_TARGET_DOWN,
                [],
                at,
            )
        )
    if plan.gpu_exporter:
        gpu = _labels(plan, plan.gpu_matchers)
        gpu_out = {k: gpu[k] for k in GPU_LABELS if k in gpu} | {"uuid": UUID}
        total = 80 * 2**30
        if "gpu_memory_headroom" in alerts:
            min_free = Fraction(str(alerts["gpu_memory_headroom"].params["min_free"]))
            free = int(total * min_free / 2)
            fire = healthy(plan, base)
            fire.gauge(naming.GPU_MEMORY_FREE, {**gpu, "uuid": UUID}, f"{free}+0x60")
            rule = _rule(plan, naming.ALERT_GPU_MEMORY_HEADROOM)
            case(
                "gpu_memory_headroom",
                rule["alert"],
                fire,
                healthy(plan, base),
                [_expect(rule, gpu_out, free / total)],
            )
        if "gpu_temperature" in alerts:
            hot = float(alerts["gpu_temperature"].params["max"]) + 5
            fire = healthy(plan, base)
            fire.gauge(naming.GPU_TEMPERATURE, {**gpu, "uuid": UUID}, f"{go_float(hot)}+0x60")
            rule = _rule(plan, naming.ALERT_GPU_TEMPERATURE)
            case(
                "gpu_temperature",
                rule["alert"],
                fire,
                healthy(plan, base),
                [_expect(rule, gpu_out, hot)],
            )
        if "gpu_xid_errors" in alerts:
            fire = healthy(plan, base)
            fire.gauge(naming.GPU_XID_ERRORS, {**gpu, "uuid": UUID, "xid": "79"}, "0x10 1x50")
            rule = _rule(plan, naming.ALERT_GPU_XID)
            case(
                "gpu_xid_errors",
                rule["alert"],
                fire,
                healthy(plan, base),
                [_expect(rule, gpu_out | {"xid": "79"}, None)],
            )
        if "gpu_exporter_down" in alerts:
            fire = healthy(plan, base)
            fire.gauge(naming.GPU_EXPORTER_UP, gpu, "0+0x60")
            rule = _rule(plan, naming.ALERT_GPU_EXPORTER_DOWN)
            out: dict[str, str] = {k: gpu[k] for k in ("namespace", "pod") if k in gpu}
            case(
                "gpu_exporter_down",
                rule["alert"],
                fire,
                healthy(plan, base),
                [_expect(rule, out, None)],
            )
    return groups


def _slow_threshold(plan: ServicePlan) -> str:
    return decimal_str(plan.alerts["slow_requests"].params["threshold_seconds"])


def zero_traffic_group(plan: ServicePlan) -> dict[str, Any]:
    """Counters that never move (and no native-histogram series): every alert stays quiet."""
    at = CHECK_MS + max([a.for_ms for a in plan.alerts.values()] + [0])
    names = sorted({r["alert"] for r in _alert_rules(plan)})
    series = healthy(plan, [Klass(0)]).render(_steps(at))
    return _group("zero traffic raises no alert", series, [_at(at, n, []) for n in names])


def native_note(plan: ServicePlan) -> list[str]:
    """Names of SLOs whose burn cases promtool 2.42 cannot express (native histograms)."""
    return [s.name for s in plan.slos if s.histogram is not None and s.histogram.native]


def rule_test_files(plan: ServicePlan) -> dict[str, dict[str, Any]]:
    """The promtool test documents for ``plan`` by repository path: the main file (1m) and one
    per coarser evaluation interval of the detection cases."""
    detection = detection_groups(plan)
    rules_file = naming.rules_file(plan.name).split("/")[-1]
    out = {
        naming.rule_tests_file(plan.name): {
            "rule_files": [rules_file],
            "evaluation_interval": format_duration_ms(INTERVAL_MS),
            "tests": [
                zero_traffic_group(plan),
                *slo_groups(plan),
                *detection.pop(INTERVAL_MS, []),
                *family_groups(plan),
            ],
        }
    }
    for e, groups in sorted(detection.items()):
        out[naming.rule_tests_file(plan.name, format_duration_ms(e))] = {
            "rule_files": [rules_file],
            "evaluation_interval": format_duration_ms(e),
            "tests": groups,
        }
    return out


def service_rule_tests(plan: ServicePlan, groups: list[Group] | None = None) -> dict[str, str]:
    """``rules/<service>.test.yaml`` (and ``rules/<service>.slow-<interval>.test.yaml``) of one
    plan, cases that can share an input block merged (:mod:`generator.builders.test_merge`).
    ``groups``: the plan's rule groups when already built.

    Raises:
        ObsgenError: an error matcher with no printable example value.
    """
    header = generated_header(plan.source)
    skipped = native_note(plan)
    if skipped:
        header += (
            "\nNative-histogram SLOs "
            + ", ".join(skipped)
            + ": promtool 2.42 test series cannot express native histograms,\n"
            "so only the zero-traffic case covers them; their burn cases are not generated."
        )
    try:
        files = rule_test_files(plan)
    except ValueError as err:  # an error matcher with no printable example value
        raise ObsgenError(
            [Diagnostic(plan.source, "spec.metrics", f"cannot generate promtool tests: {err}")]
        ) from None
    alert_reads = reads(rule_groups(plan) if groups is None else groups)
    for doc in files.values():
        doc["tests"] = merge_cases(doc["tests"], alert_reads)
    return {path: dump_yaml(doc, header=header) for path, doc in files.items()}


def rule_tests_outputs(plans: Sequence[ServicePlan]) -> dict[str, str]:
    """``rules/<service>.test.yaml`` (and ``rules/<service>.slow-<interval>.test.yaml``) per plan."""
    out = {}
    for p in plans:
        out.update(service_rule_tests(p))
    return out
