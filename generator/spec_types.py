"""The spec's shared field types: limits, annotated types and the validators that word their errors.

Every section model of :mod:`generator.spec` builds on these and on :class:`StrictModel`.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from generator import kube_names, naming, regexes
from generator.promql import LEGACY_METRIC_NAME, label_name_problem, metric_name_problem
from generator.units import (
    decimal_str,
    format_duration_ms,
    parse_duration_ms,
    parse_memory_bytes,
)

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
        if not regex.fullmatch(value):
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
    if METRIC_NAME.fullmatch(value):
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
        if not LABEL_NAME.fullmatch(key) or key.startswith("__"):
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
        hidden = next((c for c in value if c != " " and not c.isprintable()), None)
        if hidden is not None:  # bidi overrides, zero-width and other invisible characters
            raise ValueError(
                f"label {key}: {_shown(value)} contains the invisible character "
                f"U+{ord(hidden):04X} {unicodedata.name(hidden, '')}".rstrip()
                + ", which shows the value as other than it is in rules, runbooks and dashboards"
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
