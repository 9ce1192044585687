"""The ``ModelService`` spec (``apiVersion: obsgen/v1alpha1``): strict pydantic models and loading.

This module knows nothing about rules or dashboards. :func:`load_spec` reads one YAML file,
checks ``apiVersion``/``kind`` first (so a wrong file gets one clear line), then validates
every field strictly (unknown keys are errors), each problem a :class:`~generator.errors.Diagnostic`
with the field path as written (``spec.alerts.queueDepth.max``). Defaults that depend on the
server preset are decided by :func:`generator.plan.resolve`, not here.

Size: the whole spec format in one place (every section's model and the validators that word
its errors), which ``scripts/spec_reference.py`` turns into docs/spec.md and the JSON schema.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
import unicodedata
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from generator import kube_names, naming, near_keys, regexes, targets
from generator.errors import Diagnostic, ObsgenError, printable
from generator.promql import LEGACY_METRIC_NAME, label_name_problem, metric_name_problem
from generator.units import (
    decimal_str,
    format_duration_ms,
    parse_duration_ms,
    parse_memory_bytes,
)
from generator.versions import check_release
from generator.yamlio import BoundedLoader, InputLimitExceeded, InputLimits, yaml_problem

API_VERSION = "obsgen/v1alpha1"
KIND = "ModelService"

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
METRIC_NAME = LEGACY_METRIC_NAME
# Free text that reaches alert labels, annotations and dashboards: letters of any language,
# but no Go-template, PromQL, Grafana-variable or HTML metacharacters ({ } $ " \\ < > `).
TEAM_TEXT = re.compile(r"^\w[\w .,/()+-]*$")
PLAIN_TEXT = re.compile(r"^\w[\w .,/()+:%-]*$")
TEAM_ALLOWED = "letters (any language), digits, spaces and _ . , / ( ) + -"
PLAIN_ALLOWED = "letters (any language), digits, spaces and _ . , / ( ) + - : %"
# Longest duration accepted: promtool rejects durations that overflow (for: 99999999999d).
MAX_DURATION_MS = 10 * 365 * 86_400_000

# Size bounds of a spec (docs/limits.md). Render time and output size grow with each (SLOs the
# most: every burn-rate test case expects every SLO's alerts), so each is set well above real
# services and well below what makes `obsgen render` take minutes.
MAX_SLOS = 10
MAX_TIERS = 8
MAX_BUCKETS = 100
MAX_GROUP_BY = 8
MAX_MATCHERS = 16
MAX_LABEL_VALUE_CHARS = 1024
MAX_MIN_EVENTS = 1_000_000_000
# An error budget below one in a million cannot be told from zero in the float64 ratios of the
# rules and tests (1 − 99.99999999999999 % is 1e-16, under the float spacing at 1).
MAX_OBJECTIVE = 99.9999
MAX_ALERT_RATIO = 0.999999
MIN_FREE_SHARE = 0.000001
MAX_FOR_MS = 6 * 3_600_000  # alert `for`, trend look-back: generated tests step through them
MAX_SLO_WINDOW_MS = 365 * 86_400_000
# Memory sizes: a model container below 1Mi cannot exist; above 1Pi the byte counts lose
# integer precision in float64.
MIN_MEMORY_BYTES = 1 << 20
MAX_MEMORY_BYTES = 1 << 50

Server = Literal["vllm", "sglang", "trtllm", "tgi", "triton", "openai-http"]
Severity = Literal["critical", "warning", "info"]

# Latency indicators: the spec's metric key and its short alias.
INDICATOR_ALIASES = {
    "requestDuration": "requestDuration",
    "e2e": "requestDuration",
    "timeToFirstToken": "timeToFirstToken",
    "ttft": "timeToFirstToken",
    "interTokenLatency": "interTokenLatency",
    "itl": "interTokenLatency",
    "requestQueueTime": "requestQueueTime",
    "queue": "requestQueueTime",
    "timePerOutputToken": "timePerOutputToken",
    "tpot": "timePerOutputToken",
}


# Longest input value quoted back in a message, and most problems listed per file.
MAX_SHOWN = 80
MAX_DIAGNOSTICS = 50


def _shown(value: Any) -> str:
    """``repr(value)``, cut to :data:`MAX_SHOWN` characters (never echo huge input back)."""
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def _number(value: float) -> str:
    """``value`` as written in a spec: plain decimals, or ``repr`` where those would round
    (99.99999999999999) or run long (1e-300)."""
    text = decimal_str(value)
    return text if float(text) == value and len(text) <= 20 else repr(float(value))


def _duration(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, str):
        raise ValueError("expected a duration string such as 500ms, 30s, 10m or 30d")
    try:
        ms = parse_duration_ms(value)
    except ValueError as err:
        raise ValueError(
            str(err).replace(repr(value), _shown(value)) + _whole_duration_hint(value)
        ) from None
    if ms > MAX_DURATION_MS:
        raise ValueError(
            f"{_shown(value)} is longer than 10y, the longest duration obsgen accepts "
            "(Prometheus rejects durations that overflow)"
        )
    return ms


_FRACTIONAL = re.compile(r"^(\d+\.\d+)(ms|s|m|h|d|w|y)$")


def _whole_duration_hint(value: str) -> str:
    """``"; write 2500ms"`` for ``2.5s``: durations take whole numbers of each unit."""
    match = _FRACTIONAL.match(value)
    if match is None:
        return ""
    ms = Decimal(match.group(1)) * parse_duration_ms("1" + match.group(2))
    if ms != ms.to_integral_value() or ms <= 0:
        return ""
    whole = int(ms)
    return (
        f"; durations take whole numbers: write {whole}ms"
        if match.group(2) == "s"
        else (f"; durations take whole numbers: write {format_duration_ms(whole)}")
    )


def _memory(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError("expected a memory size such as 32Gi or 512Mi")
    try:
        size = parse_memory_bytes(value)
    except ValueError as err:
        raise ValueError(str(err).replace(repr(value), _shown(value))) from None
    if not MIN_MEMORY_BYTES <= size <= MAX_MEMORY_BYTES:
        raise ValueError(f"{_shown(value)} is out of range; expected a memory size from 1Mi to 1Pi")
    return size


def _pattern(regex: re.Pattern[str], what: str) -> Any:
    def check(value: str) -> str:
        if not regex.match(value):
            raise ValueError(f"{_shown(value)} is not {what}")
        return value

    return AfterValidator(check)


def _valid_regex(value: str) -> str:
    why = regexes.problem(value)
    if why is not None:
        raise ValueError(f"{_shown(value)} {why}")
    return value


# In the JSON Schema (docs/spec.schema.json) durations and memory sizes are the text users write.
DurationText = Annotated[
    str, Field(pattern=r"^([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?$")
]
MemoryText = Annotated[str, Field(pattern=r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$")] | int
DurationMs = Annotated[int, BeforeValidator(_duration, json_schema_input_type=DurationText)]


def _within(least_ms: int, most_ms: int, why: str) -> AfterValidator:
    """A duration bound: ``least_ms`` ≤ value ≤ ``most_ms``, refused saying ``why``."""

    def check(value: int) -> int:
        if not least_ms <= value <= most_ms:
            expected = (
                f"{format_duration_ms(least_ms)} to {format_duration_ms(most_ms)}"
                if least_ms
                else f"at most {format_duration_ms(most_ms)}"
            )
            raise ValueError(
                f"{format_duration_ms(value)} is out of range; expected {expected}: {why}"
            )
        return value

    return AfterValidator(check)


def _gap_duration(value: Any) -> int:
    """``spec.prometheus.maxGap``: a duration, or ``0s`` for none."""
    return 0 if value == "0s" else _duration(value)


GapMs = Annotated[int, BeforeValidator(_gap_duration, json_schema_input_type=DurationText)]


# An alert's `for` and a trend's look-back: each generated test runs that long in 1m steps.
AlertFor = Annotated[
    DurationMs,
    _within(
        0, MAX_FOR_MS, "a condition held longer than 6h before notifying is a report, not an alert"
    ),
]
Lookback = Annotated[
    DurationMs,
    _within(60_000, MAX_FOR_MS, "predict_linear fits at least a minute of samples, at most 6h"),
]
Horizon = Annotated[
    DurationMs,
    _within(60_000, MAX_DURATION_MS, "a prediction less than a minute ahead is no warning"),
]
# The window a condition's time is counted in (target down, crash loop, GPU slowdown).
HeldWindow = Annotated[
    DurationMs,
    _within(60_000, MAX_FOR_MS, "the time a condition held is counted over a minute to 6h"),
]
SLOWindow = Annotated[
    DurationMs,
    _within(60_000, MAX_SLO_WINDOW_MS, "the longest SLO window obsgen tests is a year"),
]
MemoryBytes = Annotated[int, BeforeValidator(_memory, json_schema_input_type=MemoryText)]
LabelName = Annotated[str, _pattern(LABEL_NAME, "a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)")]


def _metric_name(value: str) -> str:
    # Whether a name outside the legacy set is usable depends on spec.prometheus.version
    # (Prometheus 3 stores UTF-8 names): checked in plan, naming this field.
    if METRIC_NAME.match(value):
        return value
    why = metric_name_problem(value, "3")
    if why is not None:
        raise ValueError(f"{_shown(value)} {why}")
    return value


MetricName = Annotated[str, AfterValidator(_metric_name)]


def _metric_prefix(value: str) -> str:
    if not value.isprintable():
        raise ValueError(
            f"{_shown(value)} contains a control character; expected a prefix such as ray_"
        )
    return value


# Whether prefix + name is a metric name depends on spec.prometheus.version: checked in plan.
MetricPrefix = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(_metric_prefix)]
DnsLabel = Annotated[
    str,
    Field(max_length=63),
    _pattern(DNS1123_LABEL, "a DNS-1123 label (lowercase letters, digits, '-'; e.g. my-model)"),
]
PlainText = Annotated[str, _pattern(PLAIN_TEXT, f"plain text; allowed: {PLAIN_ALLOWED}")]


def _below_one(value: float) -> float:
    if value >= 1:
        raise ValueError(
            f"{decimal_str(value)} can never be exceeded: the measured ratio is at most 1, so "
            "the alert could never fire; expected 0 ≤ value < 1 (e.g. 0.05)"
        )
    if value > MAX_ALERT_RATIO:
        raise ValueError(
            f"{_number(value)} is within one in a million of 1, which float64 rates cannot "
            f"tell apart from 1; expected at most {decimal_str(MAX_ALERT_RATIO)}"
        )
    return value


def _free_share(value: float) -> float:
    if value <= 0:
        raise ValueError(
            "0 free can never be undercut, so the alert could never fire; "
            f"expected {decimal_str(MIN_FREE_SHARE)} ≤ minFree < 1 (e.g. 0.1)"
        )
    if value >= 1:
        raise ValueError(
            f"{_number(value)}: less than all memory free is always true, so the alert "
            f"would never stop firing; expected {decimal_str(MIN_FREE_SHARE)} ≤ minFree < 1 "
            "(e.g. 0.1)"
        )
    if value < MIN_FREE_SHARE:
        raise ValueError(
            f"{_number(value)} is under one in a million of the memory, which float64 "
            f"ratios cannot tell from 0; expected {decimal_str(MIN_FREE_SHARE)} ≤ minFree < 1"
        )
    return value


# Events a window must hold before an alert may fire.
MinEvents = Annotated[int, Field(ge=0, le=MAX_MIN_EVENTS)]
# A ratio an alert must exceed (< 1), and a free share it must fall below (> 0).
AlertRatio = Annotated[float, Field(ge=0), AfterValidator(_below_one)]
FreeShare = Annotated[float, AfterValidator(_free_share)]
Regex = Annotated[str, AfterValidator(_valid_regex)]


# Labels obsgen writes on its own recorded series and alerts: a matcher on one selects input
# series by a label the output then overwrites.
OWN_LABELS = (
    naming.SERVICE,
    naming.TEAM,
    naming.SEVERITY,
    naming.SLO,
    naming.INDICATOR,
    naming.QUANTILE,
    naming.LONG_WINDOW,
    naming.SHORT_WINDOW,
    naming.BURN_RATE,
    naming.WINDOW,
    naming.SIGNAL,
    naming.METRIC,
    "threshold",
    "alertname",
)
# Labels a service or metric selector cannot fix, and why.
SELECTOR_RESERVED = {
    **{label: "obsgen sets it on its own series and alerts" for label in OWN_LABELS},
    "le": "it is the histogram bucket label; fixing it selects one bucket",
    "instance": "it names one scrape target (and changes with pod IPs); ModelTargetDown counts "
    "targets by it — select the service by job and namespace",
    "pod": "pod names change with every rollout; obsgen selects pods from spec.deployment",
}


def _labels_ok(labels: dict[str, str]) -> dict[str, str]:
    for key in labels:
        if not LABEL_NAME.match(key) or key.startswith("__"):
            raise ValueError(f"{_shown(key)} is not a usable label name")
    return _values_ok(labels)


def _utf8_labels_ok(labels: dict[str, str]) -> dict[str, str]:
    # A label name outside the legacy set needs Prometheus 3: checked in plan, naming the field.
    for key in labels:
        why = label_name_problem(key, "3")
        if why is not None:
            raise ValueError(f"{_shown(key)} {why}")
    return _values_ok(labels)


def _values_ok(labels: dict[str, str]) -> dict[str, str]:
    for key, value in labels.items():
        if len(value) > MAX_LABEL_VALUE_CHARS:
            raise ValueError(
                f"label {key}: a value of {len(value)} characters; expected at most "
                f"{MAX_LABEL_VALUE_CHARS}"
            )
        if value == "":
            raise ValueError(
                f"label {key}: an empty value matches series *without* the label; "
                "give the value the series carry"
            )
        if "$" in value:
            raise ValueError(
                f"label {key}: {_shown(value)} contains '$', which Grafana expands as a "
                "dashboard variable (Prometheus regexes are anchored already: no '$' needed)"
            )
        if "{{" in value or "}}" in value:
            raise ValueError(
                f"label {key}: {_shown(value)} contains '{{{{' or '}}}}', which alert "
                "templates (Go text/template) would expand"
            )
        if any(unicodedata.category(c) == "Cc" for c in value):
            raise ValueError(
                f"label {key}: {_shown(value)} contains a control character (newline, tab, …)"
            )
    return labels


def _selector_labels_ok(labels: dict[str, str]) -> dict[str, str]:
    for key in labels:
        why = SELECTOR_RESERVED.get(key)
        if why is not None:
            raise ValueError(f"cannot select by label {key!r}: {why}")
    return labels


def _own_labels_free(labels: dict[str, str]) -> dict[str, str]:
    for key in labels:
        if key in OWN_LABELS:
            raise ValueError(f"cannot select by label {key!r}: obsgen sets it on its own alerts")
    return labels


LabelMap = Annotated[dict[str, str], Field(max_length=MAX_MATCHERS), AfterValidator(_labels_ok)]
# spec.selector and metrics.*.selector; the GPU selector may name the sidecar's pod/container.
Matchers = Annotated[LabelMap, AfterValidator(_selector_labels_ok)]
# metrics.*.selector: label names may be UTF-8 on Prometheus 3 (quoted in PromQL).
MetricMatchers = Annotated[
    dict[str, str],
    Field(max_length=MAX_MATCHERS),
    AfterValidator(_utf8_labels_ok),
    AfterValidator(_selector_labels_ok),
]
GPUMatchers = Annotated[LabelMap, AfterValidator(_own_labels_free)]

# Kubernetes label values (a label key's name part is one too, but not empty); the full
# rules, with the reason a value breaks them, are generator/kube_names.py's.
K8S_LABEL_NAME = r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)"
K8S_LABEL_VALUE = re.compile(rf"^{K8S_LABEL_NAME}?$")
# An error of one key of a mapping-valued field: reported at ``<field>.<key>``.
KEYED_ERROR = "obsgen_keyed"


def keyed_error(key: str, message: str) -> PydanticCustomError:
    """A validation error of the entry ``key`` of a mapping, so that its diagnostic names
    the field path down to the key (``spec.selector.namespace``)."""
    return PydanticCustomError(KEYED_ERROR, "{message}", {"message": message, "key": key})


def _pod_labels_ok(labels: dict[str, str]) -> dict[str, str]:
    if not labels:
        raise ValueError("expected at least one pod label, e.g. {app.kubernetes.io/name: my-model}")
    for key, value in labels.items():
        why = kube_names.label_key(key)
        if why is not None:
            raise keyed_error(
                key,
                f"{_shown(key)} is not a Kubernetes label key ({why}); expected "
                f"{kube_names.LABEL_KEY_EXPECTED}",
            )
        why = kube_names.label_value(value)
        if why is not None:
            raise keyed_error(
                key,
                f"{_shown(value)} is not a Kubernetes label value ({why}); expected "
                f"{kube_names.LABEL_VALUE_EXPECTED}: it selects the pods in the PodMonitors",
            )
    return labels


def _port_name(value: str) -> str:
    why = kube_names.port_name(value)
    if why is not None:
        raise ValueError(
            f"{_shown(value)} is not a container port name ({why}); expected "
            f"{kube_names.PORT_NAME_EXPECTED}, or a port number"
        )
    return value


PodLabels = Annotated[
    dict[str, str], Field(max_length=MAX_MATCHERS), AfterValidator(_pod_labels_ok)
]
PortName = Annotated[str, AfterValidator(_port_name)]
ContainerImage = Annotated[
    str,
    Field(max_length=255),
    _pattern(re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]*$"), "a container image reference"),
]
RegexMatchers = Annotated[
    dict[str, Regex],
    Field(max_length=MAX_MATCHERS),
    AfterValidator(_utf8_labels_ok),
    AfterValidator(_selector_labels_ok),
]


class StrictModel(BaseModel):
    """Base: camelCase keys, unknown keys rejected, no type coercion, immutable."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=False,
        # .inf/.nan (and 1e400, which YAML reads as inf) would reach PromQL as "inf".
        allow_inf_nan=False,
    )


class Metadata(StrictModel):
    """``metadata``: who owns the service and where its links point."""

    name: DnsLabel
    team: Annotated[
        str, Field(max_length=63), _pattern(TEAM_TEXT, f"a team name; allowed: {TEAM_ALLOWED}")
    ]
    runbook_base_url: (
        Annotated[str, _pattern(re.compile(r"^https?://[^\s\"'<>{}]+$"), "a URL")] | None
    ) = None
    grafana_url: (
        Annotated[str, _pattern(re.compile(r"^https?://[^\s\"'<>{}]+$"), "a URL")] | None
    ) = None


# Labels that cannot name the cluster: obsgen, Prometheus or the selectors give them a meaning.
CLUSTER_LABEL_RESERVED = frozenset(
    {
        "le",
        "quantile",
        "service",
        "slo",
        "indicator",
        "team",
        "severity",
        "alertname",
        "alertstate",
        "long_window",
        "short_window",
        "burn_rate",
        "window",
        "signal",
        "metric",
        naming.EVENTS,
        "namespace",
        "pod",
        "container",
        "job",
        "instance",
        "uuid",
        "xid",
    }
)


class PrometheusSettings(StrictModel):
    """``spec.prometheus``: how the target Prometheus stores and scrapes.

    ``clusterLabel`` names the label that tells clusters apart when one engine evaluates the
    series of many (Thanos, Mimir, VictoriaMetrics; usually an external label of each
    cluster's Prometheus or agent, ``cluster`` in the monitoring mixins). When set, every
    aggregation and join keeps it, alerts carry it and dashboards filter by it; unset (the
    default) renders exactly as before. docs/scale-out.md.
    """

    version: str = "compat"
    scrape_interval: DurationMs = 30_000
    # The SLO rule groups' `interval`: their increments span exactly one evaluation.
    evaluation_interval: DurationMs = 60_000
    retention: DurationMs | None = None
    # kube-prometheus-stack Helm release: its Prometheus selects rules/monitors by `release`.
    release: DnsLabel = "kube-prometheus-stack"
    cluster_label: LabelName | None = None
    # Every rule group's `query_offset`: the ruler reads data this late (remote-written,
    # replayed); Prometheus 2.53+. docs/scale-out.md, "Evaluation delay".
    query_offset: DurationMs | None = None
    # The longest hole in a counter's samples whose events the SLO increments still book when
    # samples resume (last_over_time over it); "0s" turns it off. docs/spec.md, "Gaps".
    max_gap: GapMs = 3_600_000

    @field_validator("query_offset")
    @classmethod
    def _whole_minutes(cls, ms: int | None) -> int | None:
        # The generated tests step every minute; an offset of whole steps shifts every check
        # by exactly itself.
        if ms is not None and (ms <= 0 or ms % 60_000 or ms > 3_600_000):
            raise ValueError(
                "expected whole minutes from 1m to 1h (e.g. 1m, 2m, 5m): the rules' checks "
                "step every minute"
            )
        return ms

    @field_validator("max_gap")
    @classmethod
    def _gap_range(cls, ms: int) -> int:
        if ms and not 300_000 < ms <= 86_400_000:
            raise ValueError(
                "expected a duration over 5m (shorter holes need no bridge: the lookback "
                "covers them) and at most 1d, or 0s for none"
            )
        return ms

    @field_validator("cluster_label")
    @classmethod
    def _free_cluster_label(cls, label: str | None) -> str | None:
        if label is not None and (label in CLUSTER_LABEL_RESERVED or label.startswith("__")):
            raise ValueError(
                f"{label!r} cannot name the cluster: obsgen or Prometheus already gives it a "
                "meaning; use the label your clusters' external labels set, e.g. cluster"
            )
        return label

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        if isinstance(value, float):
            raise ValueError(
                f'write a release line in quotes, e.g. version: "{value}"; YAML reads an '
                "unquoted 3.10 as the number 3.1"
            )
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: str) -> str:
        targets.parse(value)
        return value

    @property
    def major(self) -> str:
        """``"2"``, ``"3"`` or ``"compat"``: how names and ``le`` are written."""
        return targets.parse(self.version)[0]

    @property
    def floor(self) -> tuple[int, int]:
        """The oldest Prometheus release the rules must load on (:func:`targets.parse`)."""
        return targets.parse(self.version)[1]

    @field_validator("evaluation_interval")
    @classmethod
    def _divides_five_minutes(cls, ms: int) -> int:
        # Recorded series go stale after 5m; the 5m error ratio must be whole increments.
        if ms < 1000 or 300_000 % ms:
            raise ValueError(
                "expected a duration of at least 1s that divides 5m (e.g. 15s, 30s, 1m, 5m)"
            )
        return ms


class MetricOverride(StrictModel):
    """One entry of ``spec.metrics``: override a preset's metric name, buckets or selector.

    ``buckets`` are the histogram's upper bounds in seconds, ascending, without ``+Inf``.
    ``unit`` is the time unit the histogram records (latency histograms only); a name ending
    in a unit (``_milliseconds``, ``_ms``, ``_seconds`` …) says it already, and a ``unit``
    that contradicts the name is an error.
    ``selector`` is merged over ``spec.selector`` for this metric only.
    ``errorMatchers`` (request counters) are RE2 regexes matched with ``=~``.
    ``excludeMatchers`` (request and failure counters) mark failures that are not the
    service's, read as ``label!~"regex"``: a series without the label is not excluded
    (docs/spec.md, "What a failure is").
    """

    name: MetricName | None = None
    buckets: (
        Annotated[list[Annotated[float, Field(gt=0)]], Field(max_length=MAX_BUCKETS)] | None
    ) = None
    unit: Literal["seconds", "milliseconds", "microseconds", "nanoseconds"] | None = None
    histogram: Literal["classic", "native", "nhcb", "both"] | None = None
    selector: MetricMatchers | None = None
    error_matchers: RegexMatchers | None = None
    exclude_matchers: RegexMatchers | None = None

    @field_validator("exclude_matchers")
    @classmethod
    def _excludes_something(cls, matchers: dict[str, str] | None) -> dict[str, str] | None:
        for label, pattern in (matchers or {}).items():
            if regexes.fullmatch(pattern, ""):
                raise ValueError(
                    f"{label}!~{pattern!r} also drops series without a {label} label, so a "
                    f"release without {label} would count no failure at all; match the "
                    'excluded values only (e.g. "CANCELED")'
                )
        return matchers

    @field_validator("buckets")
    @classmethod
    def _ascending(cls, buckets: list[float] | None) -> list[float] | None:
        if buckets is not None:
            if not buckets:
                raise ValueError("expected at least one bucket bound")
            if any(b >= a for a, b in zip(buckets[1:], buckets, strict=False)):
                raise ValueError("bucket bounds must be strictly ascending")
        return buckets

    @field_validator("error_matchers")
    @classmethod
    def _not_everything(cls, matchers: dict[str, str] | None) -> dict[str, str] | None:
        if matchers == {}:
            raise ValueError(
                "no matcher marks a request as failed, so availability SLOs and the errorRatio "
                'alert could never fire; expected at least one (e.g. {status: "5.."}), or leave '
                "errorMatchers out to use the preset's"
            )
        for label, pattern in (matchers or {}).items():
            if regexes.fullmatch(pattern, ""):
                raise ValueError(
                    f"{label}=~{pattern!r} also matches requests without a {label} label, so "
                    'every request would count as an error; match failures only (e.g. "5..")'
                )
        return matchers


class Metrics(StrictModel):
    """``spec.metrics``: per-signal overrides; every field optional when the preset fits.

    ``failures`` names a separate failure counter: ``requests`` then counts the requests that
    succeeded, the total is their sum (as TGI's ``tgi_request_success`` and
    ``tgi_request_failure``); both are read with ``requests``' selector.

    ``prefix`` is prepended to every metric name the preset supplies (after the release picks
    the entry), for servers re-exported under a prefix (Ray Serve: ``ray_``); names given in
    ``<signal>.name`` are taken as written, and Kubernetes, cAdvisor, kube-state-metrics and
    GPU exporter series are never prefixed.
    """

    prefix: MetricPrefix | None = None
    request_duration: MetricOverride | None = None
    time_to_first_token: MetricOverride | None = None
    inter_token_latency: MetricOverride | None = None
    request_queue_time: MetricOverride | None = None
    time_per_output_token: MetricOverride | None = None
    requests: MetricOverride | None = None
    failures: MetricOverride | None = None
    queue_depth: MetricOverride | None = None
    running_requests: MetricOverride | None = None
    kv_cache_usage: MetricOverride | None = None
    prompt_tokens: MetricOverride | None = None
    generation_tokens: MetricOverride | None = None
    preemptions: MetricOverride | None = None


class BurnRateTier(StrictModel):
    """One multi-window burn-rate alert tier (SRE Workbook ch. 5, table 5-8).

    ``budget`` is the share (0–1) of the SLO window's error budget this tier lets burn in
    ``longWindow`` before it fires.
    """

    budget: Annotated[float, Field(gt=0, le=1)]
    long_window: DurationMs
    short_window: DurationMs
    severity: Severity


def _budget_levels(levels: list[float] | None) -> list[float] | None:
    if levels is not None:
        if any(not 0 < x < 1 for x in levels):
            raise ValueError("expected shares of the budget left, each above 0 and below 1")
        if any(b >= a for a, b in itertools.pairwise(levels)):
            raise ValueError("expected levels in strictly descending order, e.g. [0.5, 0.25]")
    return levels


class SLOAlerting(StrictModel):
    """``spec.slos[].alerting``: burn-rate tiers, the minimum-events guard and the
    remaining-budget levels (``budgetLeft``, shares of the budget left over the SLO window at
    which ``ErrorBudgetLow`` tickets, descending; default 0.5 and 0.25; ``[]`` for none).
    ``keepFiringFor`` keeps a firing burn-rate alert firing that long after its condition
    clears (Prometheus 2.42+), so a burn near the threshold does not resolve and re-page."""

    enabled: bool = True
    budget_left: Annotated[
        list[float] | None, Field(max_length=4), AfterValidator(_budget_levels)
    ] = None
    tiers: Annotated[list[BurnRateTier], Field(max_length=MAX_TIERS)] | None = None
    min_events: MinEvents | None = None
    keep_firing_for: AlertFor | None = None


# Goodput targets: the per-request latency histograms a goodput SLO may combine. Every share in
# the union bound must be a share of *requests*; interTokenLatency counts token gaps (one
# observation per generated token), so its share bounds nothing about requests.
GOODPUT_SIGNALS = ("requestDuration", "timeToFirstToken", "requestQueueTime", "timePerOutputToken")
MIN_GOODPUT_TARGETS, MAX_GOODPUT_TARGETS = 2, 4


class GoodputTarget(StrictModel):
    """``spec.slos[].targets[]``: one latency target a good request must meet: ``signal``
    (a per-request latency histogram: ``ttft``, ``tpot``, ``e2e``, ``queue`` or their long
    names) no slower than ``threshold`` (a bucket bound of it, as a duration)."""

    signal: str
    threshold: DurationMs

    @field_validator("signal")
    @classmethod
    def _per_request(cls, value: str) -> str:
        key = INDICATOR_ALIASES.get(value)
        if key == "interTokenLatency":
            raise ValueError(
                f"{value!r} counts token gaps, not requests: a goodput bound needs the share "
                "of requests over each target; use tpot (timePerOutputToken, the per-request "
                "mean; declare spec.metrics.timePerOutputToken where the preset has none)"
            )
        if key is None:
            names = ", ".join(k for k, v in INDICATOR_ALIASES.items() if v in GOODPUT_SIGNALS)
            raise ValueError(
                f"{value!r} is not a per-request latency signal; expected one of {names}"
            )
        return value


class SLO(StrictModel):
    """``spec.slos[]``: one service-level objective.

    Without ``indicator`` it is an availability SLO (good = requests not matching
    ``metrics.requests.errorMatchers``); with ``indicator`` a latency SLO (good = requests
    no slower than ``threshold``, which must be a bucket bound of that histogram); with
    ``targets`` a goodput SLO (good = requests meeting every target; recorded as the union
    bound's lower bound, :mod:`generator.builders.goodput_rules`).
    ``objective`` is in percent, 0 < objective < 100.
    """

    name: Annotated[str, Field(max_length=63), _pattern(DNS1123_LABEL, "a DNS-1123 label")]
    indicator: str | None = None
    threshold: DurationMs | None = None
    targets: (
        Annotated[
            list[GoodputTarget],
            Field(min_length=MIN_GOODPUT_TARGETS, max_length=MAX_GOODPUT_TARGETS),
        ]
        | None
    ) = None
    objective: float
    window: SLOWindow = 30 * 86_400_000
    alerting: SLOAlerting = SLOAlerting()
    description: PlainText | None = None

    @field_validator("objective")
    @classmethod
    def _objective_range(cls, value: float) -> float:
        if not 0 < value < 100:
            raise ValueError(
                f"{decimal_str(value)} is out of range; expected a percentage with 0 < objective < 100 (e.g. 99.9)"
            )
        if value > MAX_OBJECTIVE:
            raise ValueError(
                f"{_number(value)} leaves an error budget under one in a million, which "
                "float64 ratios cannot tell from zero; expected at most "
                f"{decimal_str(MAX_OBJECTIVE)}"
            )
        return value

    @field_validator("indicator")
    @classmethod
    def _known_indicator(cls, value: str | None) -> str | None:
        if value is not None and value not in INDICATOR_ALIASES:
            raise ValueError(
                f"{value!r} is not a latency indicator; expected one of {', '.join(INDICATOR_ALIASES)}"
            )
        return value

    @model_validator(mode="after")
    def _targets_alone(self) -> SLO:
        if self.targets is None:
            return self
        if self.indicator is not None or self.threshold is not None:
            raise ValueError(
                "targets (a goodput SLO) replaces indicator and threshold; give either "
                "targets or indicator with threshold"
            )
        keys = [INDICATOR_ALIASES[t.signal] for t in self.targets]
        if len(set(keys)) != len(keys):
            raise ValueError("each goodput target needs its own signal (ttft, tpot, e2e, queue)")
        return self

    @model_validator(mode="after")
    def _threshold_iff_indicator(self) -> SLO:
        if self.indicator is not None and self.threshold is None:
            raise ValueError(
                "a latency SLO (with indicator) needs threshold: one of the bucket bounds of "
                "the indicator's histogram, as a duration"
            )
        if self.indicator is None and self.threshold is not None:
            raise ValueError(
                "threshold needs indicator (the latency histogram), e.g. indicator: requestDuration"
            )
        return self


class AlertBase(StrictModel):
    """Common alert switches: ``enabled``, ``for`` and ``severity``."""

    enabled: bool = True
    for_: Annotated[AlertFor | None, Field(alias="for")] = None
    severity: Severity | None = None


class EfficiencyRegressionAlert(AlertBase):
    """``alerts.efficiencyRegression`` (off unless set): a ticket when energy per 1,000 output
    tokens (``measure: energy``) or GPU-seconds per million output tokens (``gpuSeconds``)
    over the last hour is more than ``maxIncrease`` (ratio, 0.2 = 20 %) above the same hour
    ``baseline`` ago (``1d`` or ``7d``), while both hours averaged at least
    ``minTokensPerSecond`` output tokens a second (docs/spec.md, "Efficiency")."""

    max_increase: Annotated[float, Field(gt=0, le=10)] | None = None
    baseline: Literal["1d", "7d"] | None = None
    min_tokens_per_second: Annotated[float, Field(gt=0)] | None = None
    measure: Literal["energy", "gpuSeconds"] | None = None


class LatencyP99Alert(AlertBase):
    """``alerts.latencyP99``: p99 over 5m above ``threshold``."""

    threshold: DurationMs | None = None
    indicator: str | None = None


class SlowRequestsAlert(AlertBase):
    """``alerts.slowRequests``: share of requests slower than ``threshold`` above ``maxRatio``."""

    threshold: DurationMs | None = None
    max_ratio: AlertRatio | None = None
    indicator: str | None = None
    min_events: MinEvents | None = None


class ErrorRatioAlert(AlertBase):
    """``alerts.errorRatio``: failed requests / all requests above ``maxRatio``."""

    max_ratio: AlertRatio | None = None
    min_events: MinEvents | None = None


class QueueDepthAlert(AlertBase):
    """``alerts.queueDepth``: queued requests (summed over pods) above ``max``."""

    max: Annotated[float, Field(ge=0)] | None = None


class KVCacheAlert(AlertBase):
    """``alerts.kvCache``: KV-cache usage (ratio 0–1) above ``max``."""

    max: AlertRatio | None = None


class PreemptionsAlert(AlertBase):
    """``alerts.preemptions``: requests preempted per second (summed over pods, 5m rate) above
    ``max``."""

    max: Annotated[float, Field(ge=0)] | None = None


class PrefixCacheAlert(AlertBase):
    """``alerts.prefixCache``: the prefix cache's hit ratio (0–1) below ``min`` while requests
    flow."""

    min: AlertRatio | None = None


class SpecDecodeAlert(AlertBase):
    """``alerts.specDecode``: the speculative-decoding acceptance rate (accepted / draft tokens)
    over 1h more than ``maxDrop`` (0–1, relative) below its own average over the last day."""

    max_drop: AlertRatio | None = None


class KVTransferAlert(AlertBase):
    """``alerts.kvTransfer``: disaggregated serving's KV-cache transfers on the decode role:
    failed / all transfers over 5m above ``maxRatio`` (0–1), or the p99 transfer time over 5m
    above ``threshold`` (below 5s, the largest bucket of ``vllm:nixl_xfer_time_seconds``)."""

    max_ratio: AlertRatio | None = None
    threshold: DurationMs | None = None

    @field_validator("threshold")
    @classmethod
    def _below_top_bucket(cls, value: int | None) -> int | None:
        if value is not None and not 0 < value < 5000:
            raise ValueError(
                f"{decimal_str(value / 1000)}s is not between 0 and 5s: 5s is the largest "
                "bucket bound of vllm:nixl_xfer_time_seconds (v0.11.1 … v0.14.0), so a p99 "
                "never reads more and the alert could never fire"
            )
        return value


class MemoryHeadroomAlert(AlertBase):
    """``alerts.memoryHeadroom``: working set leaves less than ``minFree`` (0–1) of the limit."""

    min_free: FreeShare | None = None


class MemoryExhaustionAlert(AlertBase):
    """``alerts.memoryExhaustion``: working-set trend reaches the limit within ``horizon``."""

    horizon: Horizon | None = None
    lookback: Lookback | None = None


class GPUMemoryHeadroomAlert(AlertBase):
    """``alerts.gpuMemoryHeadroom``: GPU memory free / total below ``minFree``."""

    min_free: FreeShare | None = None


class WindowedAlert(AlertBase):
    """An alert on the time a condition held within ``window``: it fires once the condition
    held ``for`` in total within the last ``window`` (default 3 × ``for``), however often it
    was interrupted, so a flapping condition cannot reset it."""

    window: HeldWindow | None = None


class CrashLoopAlert(AlertBase):
    """``alerts.crashLoop``: the model container restarted ``minRestarts`` times within
    ``window``, or was seen waiting in ``CrashLoopBackOff`` there."""

    window: HeldWindow | None = None
    min_restarts: Annotated[int, Field(ge=1, le=1000)] | None = None


class GPUErrorRateAlert(AlertBase):
    """``alerts.gpuNvLinkErrors`` / ``alerts.gpuPcieReplays``: a GPU's link errors per minute
    (10m rate) above ``max``."""

    max: Annotated[float, Field(ge=0, le=1e9)] | None = None


class GPUTemperatureAlert(AlertBase):
    """``alerts.gpuTemperature``: GPU temperature above ``max`` degrees Celsius."""

    max: Annotated[float, Field(gt=0, le=150)] | None = None


# Inputs the guards (``ModelSignalMissing``) can watch: the ``signal`` label values. The
# server's metrics are named by their ``spec.metrics`` key; the rest by what they are.
Signal = Literal[
    "requests",
    "requestErrors",
    "failureSources",
    "requestDuration",
    "timeToFirstToken",
    "interTokenLatency",
    "requestQueueTime",
    "timePerOutputToken",
    "queueDepth",
    "kvCacheUsage",
    "preemptions",
    "prefixCache",
    "pods",
    "memoryWorkingSet",
    "memoryLimit",
    "containerRestarts",
    "oomEvents",
    "desiredReplicas",
    "gpuExporter",
    "gpuDevices",
    "gpuMemory",
    "gpuTemperature",
    "gpuClockEvents",
    "gpuXid",
    "gpuEcc",
    "gpuRowRemap",
    "gpuNvLink",
    "gpuPcieReplays",
    "gpuRetiredPages",
]
SIGNALS: tuple[str, ...] = get_args(Signal)


class SignalMissingAlert(AlertBase):
    """``alerts.signalMissing``: input guards. ``ModelSignalMissing`` fires when the service's
    targets are up but a series an enabled alert or SLO reads has been absent for ``for``
    (default 15m, at least 4 × ``spec.prometheus.scrapeInterval``). ``ignore`` lists signals
    not to guard (a series you know is absent on purpose)."""

    ignore: list[Signal] | None = None

    @field_validator("ignore")
    @classmethod
    def _unique(cls, ignore: list[str] | None) -> list[str] | None:
        if ignore is not None and len(set(ignore)) != len(ignore):
            raise ValueError("a signal is listed twice; list each once")
        return ignore


class Alerts(StrictModel):
    """``spec.alerts``: each entry optional (preset default) or ``enabled: false``."""

    latency_p99: LatencyP99Alert | None = None
    slow_requests: SlowRequestsAlert | None = None
    error_ratio: ErrorRatioAlert | None = None
    queue_depth: QueueDepthAlert | None = None
    kv_cache: KVCacheAlert | None = None
    preemptions: PreemptionsAlert | None = None
    prefix_cache: PrefixCacheAlert | None = None
    spec_decode: SpecDecodeAlert | None = None
    lora_pool: AlertBase | None = None
    kv_transfer: KVTransferAlert | None = None
    memory_headroom: MemoryHeadroomAlert | None = None
    memory_exhaustion: MemoryExhaustionAlert | None = None
    oom_killed: AlertBase | None = None
    crash_loop: CrashLoopAlert | None = None
    target_down: WindowedAlert | None = None
    gpu_memory_headroom: GPUMemoryHeadroomAlert | None = None
    gpu_temperature: GPUTemperatureAlert | None = None
    gpu_xid_errors: AlertBase | None = None
    gpu_exporter_down: AlertBase | None = None
    gpu_device_lost: AlertBase | None = None
    gpu_hardware_slowdown: WindowedAlert | None = None
    gpu_ecc_errors: AlertBase | None = None
    gpu_row_remap_failure: AlertBase | None = None
    gpu_row_remap_pending: AlertBase | None = None
    gpu_uncorrectable_remaps: AlertBase | None = None
    gpu_pages_retired: AlertBase | None = None
    gpu_page_retirement_pending: AlertBase | None = None
    efficiency_regression: EfficiencyRegressionAlert | None = None
    gpu_nv_link_errors: GPUErrorRateAlert | None = None
    gpu_pcie_replays: GPUErrorRateAlert | None = None
    gpu_xid_reboot: AlertBase | None = None
    gpu_xid_reset: AlertBase | None = None
    gpu_xid_application: AlertBase | None = None
    replicas_unavailable: WindowedAlert | None = None
    cold_start: AlertBase | None = None
    signal_missing: SignalMissingAlert | None = None


class DCGMExporter(StrictModel):
    """``spec.gpu.dcgm`` (``exporter: dcgm``): how Prometheus scrapes NVIDIA dcgm-exporter.

    ``selector``: labels of its targets (default the GPU Operator's ``job``); ``honorLabels``:
    the ServiceMonitor's ``honorLabels`` (false by default in dcgm-exporter's chart and the GPU
    Operator: the model pod's ``pod``/``namespace``/``container`` are then ``exported_*``)."""

    selector: GPUMatchers = {"job": "nvidia-dcgm-exporter"}
    honor_labels: bool = False


class GPU(StrictModel):
    """``spec.gpu``: where the model's GPU series come from: obsgen's NVML sidecar exporter
    (``sidecar``), NVIDIA dcgm-exporter on each node (``dcgm``), or none."""

    exporter: Literal["none", "sidecar", "dcgm"] = "none"
    dcgm: DCGMExporter = DCGMExporter()
    visibility: Literal["shared-claim", "visible-devices"] = "visible-devices"
    selector: GPUMatchers | None = None
    values_path: Annotated[
        str, _pattern(re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$"), "a dotted values path")
    ] = "extraContainers"
    image: ContainerImage = "nvml-exporter:0.1.0"
    # visible-devices: NVIDIA_VISIBLE_DEVICES of the sidecar ("all", or indexes/UUIDs).
    visible_devices: Annotated[
        str,
        _pattern(
            re.compile(r"^(all|[A-Za-z0-9-]+(,[A-Za-z0-9-]+)*)$"),
            "all, or comma-separated GPU indexes or UUIDs",
        ),
    ] = "all"
    # shared-claim: name of the pod's resourceClaims entry the model container uses.
    claim: DnsLabel = "gpu"


# Kubernetes keeps replicas in an int32; Prometheus' float64 counts it exactly.
ReplicaCount = Annotated[int, Field(ge=0, le=2**31 - 1)]


class ReplicaRange(StrictModel):
    """``spec.deployment.replicas`` as a range: an autoscaler (KEDA, KServe, an HPA) keeps the
    workload between ``min`` and ``max`` replicas; ``min: 0`` scales it to zero. A plain
    count ``n`` reads as ``{min: n, max: n}``."""

    min: ReplicaCount
    max: ReplicaCount

    @model_validator(mode="after")
    def _ordered(self) -> ReplicaRange:
        if self.min > self.max:
            raise keyed_error(
                "max",
                f"{self.max} is below min ({self.min}); expected max ≥ min, e.g. "
                f"{{min: {self.max}, max: {self.min}}}",
            )
        return self


MAX_REPLICAS = 2**31 - 1


def _replica_range(value: Any) -> Any:
    # A plain count is the range of one value, its bounds reported at the count's own path;
    # bool is no count (YAML `true` is not 1).
    if isinstance(value, int) and not isinstance(value, bool):
        if value > MAX_REPLICAS:
            raise PydanticCustomError(
                "less_than_equal",
                "Input should be less than or equal to {le}",
                {"le": MAX_REPLICAS},
            )
        if value < 0:
            raise PydanticCustomError(
                "greater_than_equal", "Input should be greater than or equal to {ge}", {"ge": 0}
            )
        return {"min": value, "max": value}
    if isinstance(value, dict):
        return value
    raise ValueError(
        f"expected a replica count (0 or more) or a range such as {{min: 0, max: 4}} "
        f"(got {_shown(value)})"
    )


Replicas = Annotated[
    ReplicaRange,
    BeforeValidator(_replica_range, json_schema_input_type=ReplicaCount | ReplicaRange),
]


class Deployment(StrictModel):
    """``spec.deployment``: the Kubernetes workload serving the model.

    Pods are attributed to it through kube-state-metrics' owner series (``kind``/``name``),
    or through the labels its PodMonitor attaches, never by their names."""

    name: DnsLabel
    kind: Literal["Deployment", "StatefulSet"] = "Deployment"
    container: DnsLabel
    replicas: Replicas = Field(default=1, validate_default=True)
    memory_limit: MemoryBytes | None = None
    pod_labels: PodLabels | None = None
    metrics_port: PortName | Annotated[int, Field(ge=1, le=65535)] = "metrics"
    metrics_path: Annotated[
        str, _pattern(re.compile(r"^/[A-Za-z0-9._~/-]*$"), "a URL path such as /metrics")
    ] = "/metrics"


# How long a workload starting from zero replicas may go without a pod up before it pages.
StartupGrace = Annotated[
    DurationMs,
    _within(0, MAX_FOR_MS, "a start longer than 6h is an outage, not a cold start"),
]


class Activator(StrictModel):
    """``spec.scaleToZero.activator``: what holds requests outside the model's pods while none
    is ready: KEDA HTTP add-on's interceptor (``keda-http``), Knative's activator, which KServe
    uses (``knative``), or a gateway's gauge of waiting requests (``custom``).

    ``selector``: label matchers of its series that belong to this service (route or revision
    labels); ``metric``: the gauge of requests it holds, required for ``custom`` and replacing
    the source's own names otherwise (docs/spec.md, "Scale to zero")."""

    source: Literal["keda-http", "knative", "custom"]
    selector: MetricMatchers
    metric: MetricName | None = None

    @field_validator("selector")
    @classmethod
    def _non_empty(cls, selector: dict[str, str]) -> dict[str, str]:
        if not selector:
            raise ValueError(
                "expected at least one label matcher naming this service's route or revision, "
                "e.g. {route_namespace: llm, route_name: chat}"
            )
        return selector

    @model_validator(mode="after")
    def _custom_needs_metric(self) -> Activator:
        if self.source == "custom" and self.metric is None:
            raise keyed_error(
                "metric",
                "source custom needs metric: the name of a gauge of the requests it holds "
                "for this service",
            )
        return self


class ScaleToZero(StrictModel):
    """``spec.scaleToZero``: how the service starts from zero replicas. ``startupGrace``: how
    long after kube-state-metrics' desired replicas leave 0 no missing pod pages;
    ``activator``: where requests wait meanwhile (a cold-start panel and alert read it)."""

    startup_grace: StartupGrace | None = None
    activator: Activator | None = None


# KEDA's Prometheus scaler polls at most once a second; a page's `for` must outlast a poll.
PollingInterval = Annotated[
    DurationMs, _within(1_000, 3_600_000, "KEDA polls every second to every hour")
]
CooldownPeriod = Annotated[
    DurationMs, _within(0, 86_400_000, "a scale-to-zero cooldown longer than a day never fires")
]
PerReplica = Annotated[float, Field(gt=0)]


class Autoscaling(StrictModel):
    """``spec.autoscaling``: a KEDA ScaledObject (Prometheus triggers) for the workload of
    ``spec.deployment``, between ``replicas.min`` and ``replicas.max``, on obsgen's own
    recorded series.

    ``serverAddress``: the Prometheus (or Thanos/Mimir query) URL KEDA queries;
    ``queuePerReplica``: waiting requests one replica should hold (``model_queue_depth``);
    ``kvCachePerReplica``: KV-cache usage (0–1) one replica should run at; both are per-replica
    targets (KEDA ``AverageValue``: desired = ceil(total / target)). ``activationThreshold``:
    requests held by ``spec.scaleToZero.activator`` above which KEDA scales from zero;
    ``cluster``: the value of ``spec.prometheus.clusterLabel`` of the cluster KEDA runs in.
    ``autoscaler``: ``keda`` (default) or ``hpa``: an ``autoscaling/v2`` HorizontalPodAutoscaler
    on External metrics served by prometheus-adapter (its ``rules.external`` rendered beside it;
    ``serverAddress`` is then the adapter's Prometheus URL).
    ``check`` compares each target with its alert (docs/spec.md, "Autoscaling")."""

    autoscaler: Literal["keda", "hpa"] = "keda"
    server_address: Annotated[
        str,
        _pattern(re.compile(r"^https?://[^\s\"'<>{}]+$"), "a URL such as http://prometheus:9090"),
    ]
    queue_per_replica: PerReplica | None = None
    kv_cache_per_replica: Annotated[float, Field(gt=0, le=1)] | None = None
    activation_threshold: Annotated[float, Field(ge=0)] = 0
    polling_interval: PollingInterval = 30_000
    cooldown_period: CooldownPeriod = 300_000
    cluster: PlainText | None = None

    @field_validator("polling_interval", "cooldown_period")
    @classmethod
    def _whole_seconds(cls, value: int) -> int:
        if value % 1000:
            raise ValueError(
                f"{format_duration_ms(value)} is not a whole number of seconds; KEDA counts "
                "this in seconds"
            )
        return value

    @model_validator(mode="after")
    def _a_target(self) -> Autoscaling:
        if self.queue_per_replica is None and self.kv_cache_per_replica is None:
            raise ValueError(
                "expected queuePerReplica and/or kvCachePerReplica: the per-replica target "
                "KEDA scales on, e.g. queuePerReplica: 8"
            )
        return self


# groupBy labels that cannot work, and why.
GROUP_BY_RESERVED = {
    **{label: "obsgen sets it on its own series and alerts" for label in OWN_LABELS},
    "le": "it is the histogram bucket label; grouping by it splits every series per bucket",
    "quantile": "it is the summary quantile label; grouping by it mixes quantiles",
    "service": "obsgen sets it on every recorded series",
    "slo": "obsgen sets it on every SLO series",
    naming.EVENTS: "obsgen's SLO event increments use it for bad and total",
    "indicator": "obsgen sets it on every latency series",
    "namespace": "every aggregation keeps it already",
}


def _version_text(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(
            f'write the release in quotes, e.g. serverVersion: "{value}"; YAML reads an '
            "unquoted version as a number (0.10 becomes 0.1)"
        )
    return value


class FailureSource(StrictModel):
    """``spec.failure.sources[]``: one more counter whose series count failed requests
    (``errorMatchers``, required), minus ``excludeMatchers``; read with ``spec.selector``
    and its own ``selector``; only its failures are read (the total stays the request
    counter's)."""

    name: MetricName
    error_matchers: RegexMatchers
    exclude_matchers: RegexMatchers | None = None
    selector: MetricMatchers | None = None

    @field_validator("error_matchers")
    @classmethod
    def _some_failure(cls, matchers: dict[str, str]) -> dict[str, str]:
        return MetricOverride._not_everything(matchers) or {}

    @field_validator("exclude_matchers")
    @classmethod
    def _excludes_something(cls, matchers: dict[str, str] | None) -> dict[str, str] | None:
        return MetricOverride._excludes_something(matchers)


StatusCode = Annotated[str, _pattern(re.compile(r"^[1-5][0-9][0-9]$"), "an HTTP status code")]


class FailureDefinition(StrictModel):
    """``spec.failure``: what a failed request is (docs/spec.md, "What a failure is").

    ``combine``: how the sources add up per evaluation, ``max`` (the larger: a lower bound
    on the true failures) or ``sum`` (an upper bound), capped at the total. ``engine``: read
    the preset's engine failure source beside the request counter (vLLM's finish reasons;
    default true). ``sources``: further failure counters. ``statuses``: the meaning of an
    HTTP status (``failure`` or ``excluded``) over the preset's table (429, 503, 504 failures,
    499 excluded), applied to a ``status``/``code`` error matcher.
    """

    combine: Literal["max", "sum"] = "max"
    engine: bool = True
    sources: Annotated[list[FailureSource], Field(max_length=4)] = []
    statuses: (
        Annotated[dict[StatusCode, Literal["failure", "excluded"]], Field(max_length=32)] | None
    ) = None


class Roles(StrictModel):
    """``spec.roles``: prefill/decode disaggregation (vLLM disaggregated serving, llm-d).

    ``label`` is the pod label that names each pod's role (llm-d's ``llm-d.ai/role``);
    ``seriesLabel`` the label it becomes on the scraped series (default: ``label`` with every
    character outside ``[a-zA-Z0-9_]`` replaced by ``_``, as the Prometheus Operator's
    ``podTargetLabels`` writes it: ``llm_d_ai_role``). ``prefill``, ``decode`` and ``router``
    are the label's values of each role; ``decode`` is required. Which role owns which SLI:
    :mod:`generator.roles`, docs/spec.md "Roles".
    """

    label: Annotated[str, Field(max_length=MAX_SHOWN)] = "llm-d.ai/role"
    series_label: LabelName | None = None
    prefill: Annotated[str, Field(min_length=1, max_length=63)] | None = None
    decode: Annotated[str, Field(min_length=1, max_length=63)]
    router: Annotated[str, Field(min_length=1, max_length=63)] | None = None

    @field_validator("label")
    @classmethod
    def _pod_label_key(cls, value: str) -> str:
        why = kube_names.label_key(value)
        if why is not None:
            raise ValueError(
                f"{_shown(value)} is not a Kubernetes label key ({why}); expected "
                f"{kube_names.LABEL_KEY_EXPECTED}"
            )
        return value

    @model_validator(mode="after")
    def _distinct(self) -> Roles:
        values = [v for v in (self.prefill, self.decode, self.router) if v is not None]
        for v in values:
            why = kube_names.label_value(v)
            if why is not None:
                raise ValueError(
                    f"role value {_shown(v)} is not a Kubernetes label value ({why}); expected "
                    f"{kube_names.LABEL_VALUE_EXPECTED}"
                )
        if len(set(values)) != len(values):
            raise ValueError(
                "prefill, decode and router need distinct values of the role label: two roles "
                "with one value would read the same pods"
            )
        if len(values) < 2:
            raise ValueError(
                "declare prefill or router beside decode: a service of one role is not "
                "disaggregated; leave spec.roles out"
            )
        return self


MAX_MODELS = 20
OTHER_MODELS = "other"  # the model label's value of the rollup of every unnamed model


class Models(StrictModel):
    """``spec.models``: several models or LoRA adapters behind one server (issue 45).

    ``names`` are values of the preset's model label (vLLM ``model_name``, Triton ``model``)
    that get their own SLIs and ``ErrorBudgetBurnByModel`` tiers for every availability and
    latency SLO; every other value rolls up into one ``model_name="other"`` series, so the
    records' cardinality is bounded by ``len(names) + 1``. ``maxUnwatchedShare`` (0–1): the
    share of requests over 1h the rollup may carry before ``ModelTrafficUnwatched`` tickets
    (:mod:`generator.builders.model_slo_rules`; docs/spec.md, "Per-model SLOs").
    """

    names: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_SHOWN)]],
        Field(min_length=1, max_length=MAX_MODELS),
    ]
    max_unwatched_share: AlertRatio = 0.5

    @field_validator("names")
    @classmethod
    def _usable_names(cls, names: list[str]) -> list[str]:
        for name in names:
            _values_ok({"model": name})
        if len(set(names)) != len(names):
            raise ValueError("a model is listed twice; list each once")
        if OTHER_MODELS in names:
            raise ValueError(
                f"{OTHER_MODELS!r} is the rollup of every unnamed model; a served model of "
                "that name cannot get its own SLIs"
            )
        return names


class ServiceSpec(StrictModel):
    """``spec``: the service's server preset, selector, metrics, SLOs and alerts.

    ``serverVersion`` is the release the pods run, as the server publishes it (PEP 440 for
    vLLM/TGI, ``2.49.0`` or an NGC container tag for Triton; see :mod:`generator.versions`);
    ``serverVariant`` the runtime variant (vLLM engine ``v1`` or ``v0``).
    """

    server: Server
    server_version: (
        Annotated[
            str,
            Field(max_length=MAX_SHOWN),
            BeforeValidator(_version_text, json_schema_input_type=str),
        ]
        | None
    ) = None
    server_variant: Literal["v1", "v0"] | None = None
    selector: Matchers
    group_by: Annotated[list[LabelName], Field(max_length=MAX_GROUP_BY)] = []
    prometheus: PrometheusSettings = PrometheusSettings()
    metrics: Metrics = Metrics()
    failure: FailureDefinition = FailureDefinition()
    slos: Annotated[list[SLO], Field(max_length=MAX_SLOS)] = []
    alerts: Alerts = Alerts()
    gpu: GPU = GPU()
    deployment: Deployment
    scale_to_zero: ScaleToZero = ScaleToZero()
    autoscaling: Autoscaling | None = None
    roles: Roles | None = None  # generator.roles
    models: Models | None = None  # generator.builders.model_slo_rules

    @field_validator("server_version")
    @classmethod
    def _known_release(cls, value: str | None, info: ValidationInfo) -> str | None:
        server = info.data.get("server")
        if value is not None and server is not None:
            try:
                check_release(server, value)
            except ValueError as err:
                raise ValueError(f"{_shown(value)} is not a release string: {err}") from None
        return value

    @field_validator("selector")
    @classmethod
    def _non_empty(cls, selector: dict[str, str]) -> dict[str, str]:
        if not selector:
            raise ValueError(
                "expected at least one label matcher, e.g. {namespace: ai-inference, job: my-model}"
            )
        namespace = selector.get("namespace")
        why = None if namespace is None else kube_names.dns1123_label(namespace)
        if namespace is not None and why is not None:
            # It is the namespace of every manifest, PodMonitor selector and kubectl command.
            raise keyed_error(
                "namespace",
                f"{_shown(namespace)} is not a Kubernetes namespace ({why}); expected "
                f"{kube_names.LABEL_EXPECTED}",
            )
        return selector

    @field_validator("group_by")
    @classmethod
    def _usable_group_by(cls, group_by: list[str], info: ValidationInfo) -> list[str]:
        selector = info.data.get("selector") or {}
        seen: set[str] = set()
        for label in group_by:
            why = GROUP_BY_RESERVED.get(label)
            if why is None and label in selector:
                why = "the selector fixes its value, so there is only one group"
            if why is None and label in seen:
                why = "it is listed twice"
            if why is not None:
                raise ValueError(f"cannot group by {label!r}: {why}")
            seen.add(label)
        return group_by

    @field_validator("slos")
    @classmethod
    def _unique_names(cls, slos: list[SLO]) -> list[SLO]:
        seen: set[str] = set()
        for slo in slos:
            if slo.name in seen:
                raise ValueError(f"duplicate SLO name {slo.name!r}; each SLO needs its own name")
            seen.add(slo.name)
        return slos


class ModelServiceSpec(StrictModel):
    """A whole spec file: ``apiVersion``, ``kind``, ``metadata``, ``spec``."""

    api_version: Literal["obsgen/v1alpha1"]
    kind: Literal["ModelService"]
    metadata: Metadata
    spec: ServiceSpec


def _field_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part.startswith(("function-", "constrained-", "literal[")):
            continue
        else:
            part = part if len(part) <= MAX_SHOWN else part[: MAX_SHOWN - 1] + "…"
            path += f".{part}" if path else part
    return path


def _message(error: Any) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown field; check the spelling (keys are camelCase)"
    if kind == "missing":
        return "required field is missing"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected a mapping (key: value pairs) (got {_shown(error.get('input'))})"
    if kind == "list_type":
        return f"expected a list (got {_shown(error.get('input'))})"
    text = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        text = text.removeprefix(prefix)
    if kind.endswith("_type") or kind.startswith(("literal_", "greater", "less", "too_", "finite")):
        text += f" (got {_shown(error.get('input'))})"
    return text


def _model_loc(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """``loc`` without pydantic's validator steps (``function-after[...]``), as the walk of
    :func:`generator.near_keys.known_keys` reads it."""
    return tuple(
        p
        for p in loc
        if not (isinstance(p, str) and p.startswith(("function-", "constrained-", "literal[")))
    )


def validation_diagnostics(
    file: str, err: ValidationError, model: type[BaseModel] | None = None
) -> list[Diagnostic]:
    """Turn a pydantic error into one diagnostic per problem, with the user's field path;
    beyond :data:`MAX_DIAGNOSTICS` one last line counts the rest. With ``model`` (the one
    validated), an unknown key gets the near miss among the keys accepted there
    (:func:`generator.near_keys.suggestion`)."""
    diagnostics = []
    errors = err.errors()
    for error in errors[:MAX_DIAGNOSTICS]:
        loc = tuple(
            p
            for p in error["loc"]
            if not (isinstance(p, str) and "[" in p and p.startswith(("function", "constrained")))
        )
        if error["type"] == KEYED_ERROR:
            loc = (*loc, str(error["ctx"]["key"]))
        message = _message(error)
        if error["type"] == "extra_forbidden":
            message += near_keys.suggestion(model, _model_loc(loc))
        diagnostics.append(Diagnostic(file, _field_path(loc), message))
    if len(errors) > MAX_DIAGNOSTICS:
        more = len(errors) - MAX_DIAGNOSTICS
        diagnostics.append(Diagnostic(file, "", f"… and {more} more problems not listed"))
    return diagnostics


def parse_spec(data: Any, file: str) -> ModelServiceSpec:
    """Validate already-parsed YAML data as a spec.

    Raises:
        ObsgenError: one diagnostic per problem (exit code 2).
    """
    if not isinstance(data, dict):
        raise ObsgenError(
            [Diagnostic(file, "", "expected a YAML mapping with apiVersion, kind, metadata, spec")]
        )
    if data.get("apiVersion") != API_VERSION or data.get("kind") != KIND:
        got = f"apiVersion={_shown(data.get('apiVersion'))}, kind={_shown(data.get('kind'))}"
        raise ObsgenError(
            [
                Diagnostic(
                    file,
                    "",
                    f"not an obsgen spec ({got}); expected apiVersion: {API_VERSION}, kind: {KIND}",
                )
            ]
        )
    try:
        return ModelServiceSpec.model_validate(data)
    except ValidationError as err:
        raise ObsgenError(validation_diagnostics(file, err, ModelServiceSpec)) from None


# Bounds on a spec file as YAML (docs/limits.md): a real spec is a few KB, 6 levels deep.
SPEC_LIMITS = InputLimits()


class SpecLoader(BoundedLoader):
    """The YAML loader of spec files: :class:`~generator.yamlio.BoundedLoader` with
    :data:`SPEC_LIMITS`."""

    limits = SPEC_LIMITS


def parse_yaml(text: str, file: str, loader: type[yaml.SafeLoader] = SpecLoader) -> Any:
    """Parse one YAML document with :class:`SpecLoader` (or ``loader``: a
    :class:`~generator.yamlio.BoundedLoader` or :class:`~generator.yamlio.PureBoundedLoader`
    subclass).

    Raises:
        ObsgenError: invalid YAML (with its line), several documents, duplicate keys, or a
            broken :data:`SPEC_LIMITS` bound (with the field path and line).
    """
    parser: yaml.SafeLoader | None = None
    try:
        parser = loader(text)  # control characters are refused here already
        return parser.get_single_data()
    except yaml.reader.ReaderError as err:
        code = err.character if isinstance(err.character, int) else ord(err.character)
        message = f"invalid YAML: character U+{code:04X} at offset {err.position} is not allowed"
        raise ObsgenError([Diagnostic(file, "", message)]) from None
    except InputLimitExceeded as err:
        raise ObsgenError(
            [Diagnostic(file, err.path, f"{err.message} (line {err.line})")]
        ) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        if getattr(err, "context", None) == "expected a single document in the stream":
            message = "expected one YAML document, found a second one (---); put one spec per file"
        else:
            message = f"invalid YAML: {printable(yaml_problem(err, text))}"
        raise ObsgenError([Diagnostic(file, where, message)]) from None
    finally:
        if parser is not None:
            parser.dispose()


def find_spec_files(paths: Sequence[str], root: Path) -> list[Path]:
    """Spec files named on the command line (files or folders), or ``specs/`` under ``root``.

    A folder contributes its ``*.yaml`` and ``*.yml`` files (not recursive), sorted.

    Raises:
        ObsgenError: a named path does not exist or is neither a regular file nor a folder
            (``/dev/null``, a pipe), or no spec file was found.
    """
    found: list[Path] = []
    for given in paths or [str(root / "specs")]:
        path = Path(given)
        if path.is_dir():
            found.extend(sorted([*path.glob("*.yaml"), *path.glob("*.yml")]))
        elif path.is_file():
            found.append(path)
        elif path.exists():
            raise ObsgenError(
                [Diagnostic(given, "", "not a regular file; expected a YAML spec or a folder")]
            )
        else:
            raise ObsgenError([Diagnostic(given, "", "no such file or directory")])
    if not found:
        raise ObsgenError(
            [
                Diagnostic(
                    ", ".join(paths) or "specs/",
                    "",
                    "no spec files found; expected files named *.yaml or *.yml",
                )
            ]
        )
    return found


def load_spec(path: Path, display: str | None = None) -> ModelServiceSpec:
    """Read and validate one spec file.

    Args:
        path: the YAML file.
        display: the name to report in errors (defaults to ``str(path)``).

    Raises:
        ObsgenError: unreadable, not a regular file, not UTF-8, invalid YAML (with line),
            or invalid spec.
    """
    file = display or str(path)
    limit = SPEC_LIMITS.max_bytes
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat of the open file: the
        # file checked is the file read.
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ObsgenError(
                    [Diagnostic(file, "", "not a regular file; expected a YAML spec")]
                )
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise ObsgenError(
                [Diagnostic(file, "", f"larger than {limit} bytes; expected a spec of a few KB")]
            )
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ObsgenError(
            [Diagnostic(file, "", "not a UTF-8 text file; expected a YAML spec")]
        ) from None
    except OSError as err:
        raise ObsgenError([Diagnostic(file, "", f"cannot read: {err.strerror or err}")]) from None
    return parse_spec(parse_yaml(text, file), file)
