"""The spec's ``prometheus``, ``metrics`` and ``failure`` sections: where the rules run, which
series they read and what a failed request is.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    field_validator,
)

from generator import naming, regexes, targets
from generator.spec_types import (
    MAX_BUCKETS,
    DnsLabel,
    DurationMs,
    GapMs,
    LabelName,
    MetricMatchers,
    MetricName,
    MetricPrefix,
    RegexMatchers,
    StrictModel,
    _pattern,
)

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
