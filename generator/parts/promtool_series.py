"""Synthetic input series of the generated promtool tests, and the pieces of a test group.

:class:`Series` holds counters (per-step increments) and gauges keyed by (metric, labels);
:func:`traffic` turns request classes (:class:`Klass`) into the plan's request counters and
classic-histogram buckets; :func:`healthy` is a whole healthy service. Labels are examples of
the plan's own matchers (:func:`generator.regexes.example`). :func:`expected_alert` is an
alert as promtool expects it (labels and rendered annotations); :func:`promtool_group` and
:func:`alert_test` are the promtool test-group shapes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from generator import regexes
from generator.parts import native_series
from generator.parts.common import Rule
from generator.parts.go_templates import render_template
from generator.parts.pods import (
    KSM_POD_OWNER,
    KSM_REPLICASET_OWNER,
    example_pods,
    replica_metrics,
)
from generator.parts.series_parts import ERROR_EXAMPLES as _ERROR_EXAMPLES
from generator.parts.series_parts import OK_EXAMPLES as _OK_EXAMPLES
from generator.parts.series_parts import example_pod as example_pod
from generator.parts.series_parts import example_value as _example
from generator.parts.series_parts import labels_of as labels_of
from generator.parts.series_parts import up_labels as up_labels
from generator.promql import Matcher, equals, go_float, prometheus3_le, selector
from generator.units import format_duration_ms

if TYPE_CHECKING:
    from generator.plan import FailureSourcePlan, HistogramPlan, ServicePlan

INTERVAL_MS = 60_000  # series step and evaluation interval of every group
BASE_PER_MIN = 6000  # events per minute of ordinary traffic: large enough for integer ratios
MARGIN = Fraction(5, 100)  # "slightly": 5 % above / below a threshold


# --- series --------------------------------------------------------------------------------


def _printable(value: str) -> bool:
    return value.isprintable() and value.isascii() and "{{" not in value and "$" not in value


def _non_matching(m: Matcher, candidates: Sequence[str]) -> str | None:
    """A label value that ``m`` does not match, or None: leave the label off the series."""
    return regexes.non_matching(m.value, candidates)


def series_text(name: str, labels: Mapping[str, str]) -> str:
    """promtool series notation: the selector of ``name`` with these label values."""
    return selector(name, equals(labels))


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

    def merged(self, other: Series) -> Series:
        """Both sets of series (``other`` wins where a metric and labels are in both)."""
        return Series({**self.counters, **other.counters}, {**self.gauges, **other.gauges})

    def drop(self, name: str) -> None:
        self.gauges = {k: v for k, v in self.gauges.items() if k[0] != name}

    def render(self, steps: int, reset_at: int | None = None) -> list[dict[str, str]]:
        out = []
        for key, per_step in sorted(self.counters.items()):
            inc = go_float(per_step)
            if reset_at is None:
                values = f"0+{inc}x{steps}"
            else:  # the pod restarts: every counter drops to 0 and counts on
                values = f"0+{inc}x{reset_at - 1} 0+{inc}x{steps - reset_at}"
            out.append({"series": _key_text(key), "values": values})
        for key, values in sorted(self.gauges.items()):
            out.append({"series": _key_text(key), "values": values})
        return out


# The series text of each (metric, sorted labels) key, rendered once per process: a service's
# cases render the same series hundreds of times (bounded: cleared past the limit).
_KEY_TEXTS: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}
_KEY_TEXTS_LIMIT = 65536


def _key_text(key: tuple[str, tuple[tuple[str, str], ...]]) -> str:
    text = _KEY_TEXTS.get(key)
    if text is None:
        if len(_KEY_TEXTS) >= _KEY_TEXTS_LIMIT:
            _KEY_TEXTS.clear()
        text = _KEY_TEXTS[key] = series_text(key[0], dict(key[1]))
    return text


OTHER_CLUSTER = "test-cluster-b"
"""The second cluster of the multi-cluster cases (the first is ``test-<clusterLabel>``)."""


def in_cluster(series: Series, label: str, value: str) -> Series:
    """``series`` moved to cluster ``value``: label ``label`` set to it on every series."""

    def moved(
        key: tuple[str, tuple[tuple[str, str], ...]],
    ) -> tuple[str, tuple[tuple[str, str], ...]]:
        name, labels = key
        return name, tuple(sorted({**dict(labels), label: value}.items()))

    return Series(
        {moved(k): v for k, v in series.counters.items()},
        {moved(k): v for k, v in series.gauges.items()},
    )


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
    """Counters for ``classes``: request counters and every histogram of the plan (a native
    one as pseudo-counters: :mod:`generator.parts.native_series`)."""
    s = s or Series()
    req = plan.requests
    shared = _shared_histogram(plan)
    classic = [h for h in plan.histograms.values() if not h.native]
    native = [h for h in plan.histograms.values() if h.native]
    # Per outcome (failed or not): the request counter's key, and per histogram its bucket
    # keys with their bounds (s), then the +Inf and _count keys; added class by class.
    keys: dict[bool, tuple[Any, list[tuple[list[tuple[Any, float]], Any, Any]]]] = {}

    def key(name: str, labels: Mapping[str, str]) -> tuple[str, tuple[tuple[str, str], ...]]:
        return name, tuple(sorted(labels.items()))

    def keys_of(error: bool) -> tuple[Any, list[tuple[list[tuple[Any, float]], Any, Any]]]:
        status = _status_labels(plan, error)
        counter = None
        if shared is None:
            name = req.failure_name if (error and req.failure_name) else req.name
            counter = key(name, labels_of(plan, req.matchers, **status))
        per_histogram = []
        for h in classic:
            labels = labels_of(plan, h.matchers, **(status if h is shared else {}))
            buckets = [
                (
                    key(h.metric + "_bucket", {**labels, "le": _le(b, plan.le_version)}),
                    b * h.seconds_per_unit,
                )
                for b in h.buckets
            ]
            inf = key(h.metric + "_bucket", {**labels, "le": "+Inf"})
            per_histogram.append((buckets, inf, key(h.metric + "_count", labels)))
        return counter, per_histogram

    counters = s.counters
    # Further failure sources (the engine's finish reasons): every request finishes there
    # unfailed (a failed class is one the HTTP status or failure counter already tells).
    finished = [key(src.name, _source_ok_labels(plan, src)) for src in req.sources]
    for k in classes:
        for f in finished:
            counters[f] = counters.get(f, 0.0) + k.per_min
        if k.error not in keys:
            keys[k.error] = keys_of(k.error)
        counter, per_histogram = keys[k.error]
        if counter is not None:
            counters[counter] = counters.get(counter, 0.0) + k.per_min
        for h, (buckets, inf, count) in zip(classic, per_histogram, strict=True):
            d = k.duration(h)
            for bucket, bound in buckets:
                counters[bucket] = counters.get(bucket, 0.0) + (k.per_min if d <= bound else 0)
            counters[inf] = counters.get(inf, 0.0) + k.per_min
            counters[count] = counters.get(count, 0.0) + k.per_min
        for h in native:
            _observe_native(plan, h, k, counters)
    return s


def _source_ok_labels(plan: ServicePlan, src: FailureSourcePlan) -> dict[str, str]:
    """Labels of a failure source's series for a request it finished unfailed (``stop``)."""
    labels: dict[str, str] = {}
    for m in src.error_matchers:
        ok = _non_matching(m, ("stop", "length", *_OK_EXAMPLES))
        if ok is not None:
            labels[m.label] = ok
    return labels_of(plan, src.matchers, **labels)


def _observe_native(
    plan: ServicePlan, h: HistogramPlan, k: Klass, counters: dict[Any, float]
) -> None:
    """Add a minute of class ``k`` to native histogram ``h``'s pseudo-counters: its bucket
    (the first bound not below its duration, in the metric's unit), count and sum."""
    labels = labels_of(plan, h.matchers)
    value = k.duration(h) / h.seconds_per_unit
    index = next((i for i, b in enumerate(h.buckets) if value <= b), len(h.buckets))
    parts = {native_series.bucket_key(i): 0.0 for i in range(len(h.buckets) + 1)}
    parts[native_series.bucket_key(index)] = k.per_min
    parts["count"] = k.per_min
    parts["sum"] = k.per_min * value
    for part, per_min in parts.items():
        marker = native_series.component(part, h.buckets)
        key = (h.metric, tuple(sorted({**labels, native_series.COMPONENT: marker}.items())))
        counters[key] = counters.get(key, 0.0) + per_min


def container_labels(plan: ServicePlan) -> dict[str, str]:
    """Labels of the model container's cAdvisor / kube-state-metrics series."""
    return labels_of(plan, plan.container_matchers, pod=example_pod(plan))


def healthy_replicas(plan: ServicePlan) -> float:
    """Replicas of a healthy service in the cases: the fewest ``spec.deployment.replicas``
    allows, at least 1 (a service that may scale to zero runs a pod while it serves)."""
    return float(max(plan.replicas, 1))


def kube_state(plan: ServicePlan, s: Series, length: int = 60) -> None:
    """kube-state-metrics series of a workload at full strength: the owner chain of its pods
    and desired = available replicas."""
    ns = {k: v for k, v in container_labels(plan).items() if k in plan.keeping("namespace")}
    desired, available, workload = replica_metrics(plan)
    for pod, owner in example_pods(plan):
        kind = "StatefulSet" if plan.workload_kind == "StatefulSet" else "ReplicaSet"
        s.gauge(
            KSM_POD_OWNER,
            {
                **ns,
                "pod": pod,
                "owner_kind": kind,
                "owner_name": owner,
                "owner_is_controller": "true",
            },
            f"1+0x{length}",
        )
        if kind == "ReplicaSet":
            s.gauge(
                KSM_REPLICASET_OWNER,
                {
                    **ns,
                    "replicaset": owner,
                    "owner_kind": "Deployment",
                    "owner_name": plan.deployment_name,
                    "owner_is_controller": "true",
                },
                f"1+0x{length}",
            )
    for metric in (desired, available):
        s.gauge(
            metric,
            {**ns, workload: plan.deployment_name},
            f"{go_float(healthy_replicas(plan))}+0x{length}",
        )


def healthy_free(plan: ServicePlan, alert: str, size: int, parts: int) -> int:
    """Free bytes of a healthy service: ``size - size // parts`` (3/4 of the memory, half the
    GPU's), or halfway between the alert's ``min_free`` share and all of ``size`` when that
    would be under it (a high minFree must not fire on a healthy service)."""
    free = size - size // parts
    min_free = plan.alerts[alert].params["min_free"] if alert in plan.alerts else 0
    if free <= size * min_free:
        free = int(size * (1 + Fraction(str(min_free))) / 2)
    return free


def healthy_celsius(plan: ServicePlan) -> str:
    """A healthy GPU's temperature: 60 °C, or 10 °C under a lower ``gpuTemperature.max``."""
    alert = plan.alerts.get("gpu_temperature")
    limit = float(alert.params["max"]) if alert is not None else 70.0
    return go_float(min(60.0, limit - 10))


def memory_limit(plan: ServicePlan) -> int:
    return plan.memory_limit_bytes or 32 * 2**30


# --- expectations ------------------------------------------------------------------------


def agg_of(plan: ServicePlan, matchers: Sequence[Matcher]) -> dict[str, str]:
    labels = labels_of(plan, matchers)
    return {k: labels[k] for k in plan.agg_labels}


def expected_alert(
    rule: Rule, series_labels: Mapping[str, str], value: float | None
) -> dict[str, Any]:
    labels = {**series_labels, **rule["labels"]}
    full = {**labels, "alertname": rule["alert"]}
    return {
        "exp_labels": dict(sorted(labels.items())),
        "exp_annotations": {
            k: render_template(v, full, value) for k, v in sorted(rule["annotations"].items())
        },
    }


# Bad events a minute added to SLO case traffic whose share equals some tier's threshold
# exactly (a binary fraction: exact in float64). Shares are multiples of one SLO's threshold
# (× 1.05, × 2 …), and another SLO's threshold can be exactly such a multiple
# (6 × (1 − 99.36 %) × 1.05 = 14.4 × (1 − 99.72 %)); at an exact tie Prometheus' float
# rounding decides the alert. The nudge is far below the 5 % margins: ≤ 0.2 % of the
# smallest threshold there is (1e-6) at BASE_PER_MIN × 100 events a minute.
TIE_BREAK = Fraction(1, 1024)


def mixed(per_min: int, ratio: Fraction, bad: Klass, tie_break: bool = False) -> list[Klass]:
    """``per_min`` events a minute, ``ratio`` of them of class ``bad`` (plus
    :data:`TIE_BREAK` bad events with ``tie_break``)."""
    n_bad = ratio * per_min + (TIE_BREAK if tie_break else 0)
    good = Klass(float(per_min - n_bad))
    return [good, Klass(float(n_bad), bad.error, bad.durations)] if n_bad else [good]


def slow_class(h: HistogramPlan, bound_seconds: float, above: bool) -> Klass:
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


def promtool_group(
    name: str,
    series: list[dict[str, str]],
    tests: list[dict[str, Any]],
    interval_ms: int = INTERVAL_MS,
) -> dict[str, Any]:
    """A promtool test group: ``input_series`` stepped every ``interval_ms``, its tests
    (native histograms' pseudo-counters folded: :func:`native_series.fold`)."""
    return {
        "name": name,
        "interval": format_duration_ms(interval_ms),
        "input_series": native_series.fold(series),
        "alert_rule_test": tests,
    }


def alert_test(ms: int, alert: str, expected: list[dict[str, Any]]) -> dict[str, Any]:
    """An ``alert_rule_test``: exactly ``expected`` of ``alert`` fire at ``ms``."""
    return {"eval_time": format_duration_ms(ms), "alertname": alert, "exp_alerts": expected}


def steps_until(until_ms: int) -> int:
    """Steps of series that reach past ``until_ms`` (ms), with a margin of five."""
    return until_ms // INTERVAL_MS + 5


def family_case(
    plan: ServicePlan,
    name: str,
    series: Series,
    alert: str,
    expected: list[dict[str, Any]],
    at_ms: int,
) -> dict[str, Any]:
    """A test group named ``name`` on ``series`` (steps up to ``at_ms``, ms from the first
    sample) asserting that exactly ``expected`` of ``alert`` fire at ``at_ms``."""
    return promtool_group(
        name, series.render(steps_until(at_ms)), [alert_test(at_ms, alert, expected)]
    )


def after_for(plan: ServicePlan, key: str) -> int:
    """When a family's cases are checked (ms): :data:`CHECK_MS` plus the alert's ``for``."""
    return CHECK_MS + plan.alerts[key].for_ms


def fire_and_quiet(
    plan: ServicePlan,
    key: str,
    alert: str,
    fire: Series,
    quiet: Series,
    expected: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """The two cases of alert family ``key``: ``alert`` fires as ``expected`` on ``fire`` and
    stays quiet on ``quiet``, both checked at :func:`after_for`."""
    at = after_for(plan, key)
    return [
        family_case(plan, f"{alert} fires", fire, alert, expected, at),
        family_case(plan, f"{alert} stays quiet", quiet, alert, [], at),
    ]


def busy_per_min(params: Mapping[str, Any]) -> int:
    """Events a minute for a ratio alert's cases: :data:`BASE_PER_MIN`, or enough that its
    5m window holds twice ``min_events`` (a large guard must not silence the firing case)."""
    return max(BASE_PER_MIN, int(params.get("min_events", 0)) * 2 // 5 + 1)
