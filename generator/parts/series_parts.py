"""Parts every synthetic-series module of the promtool cases shares, importing none of them.

Example labels a plan's matchers select (:func:`labels_of`; regex values from
:func:`generator.regexes.example`), the example pod, model target and NVML sidecar, the example
GPU's ``uuid``, promtool value text of per-minute samples (:func:`values_text`) and dropping
series (:func:`without`). :mod:`generator.parts.promtool_series` (whole services) and
:mod:`generator.parts.gpu_series` (GPU readings per source) build on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from generator import regexes
from generator.parts.pods import example_pods
from generator.promql import Matcher, go_float

if TYPE_CHECKING:
    from generator.parts.promtool_series import Series
    from generator.plan import ServicePlan

UUID = "GPU-00000000-0000-0000-0000-000000000000"
"""The example GPU's ``uuid``."""
INSTANCE = "10.0.0.1:8000"
"""The model target's ``instance``."""

ERROR_EXAMPLES = ("500", "503", "5xx", "error", "failed", "failure", "true", "1", "abort")
OK_EXAMPLES = ("200", "ok", "2xx", "success", "false", "0", "stop", "length")
# Values for other regex matchers a preset uses (HTTP handlers, request types).
OTHER_EXAMPLES = ("/v1/chat/completions", "/v1/completions", "active", "context", "generation")


def example_value(m: Matcher, candidates: Sequence[str]) -> str:
    """A label value that satisfies matcher ``m`` (an equality value, or a regex example:
    :func:`generator.regexes.example`, matched with RE2 as Prometheus does).

    Raises:
        ValueError: no printable example found (``obsgen check`` refuses such regexes).
    """
    if m.op == "=":
        return m.value
    return regexes.example(m.value, candidates)


def example_pod(plan: ServicePlan) -> str:
    """The pod of the synthetic series: named as Kubernetes names the workload's pods (a long
    deployment name is cut short in it), attributed through owner series, never by name."""
    return example_pods(plan)[0][0]


def labels_of(plan: ServicePlan, matchers: Sequence[Matcher], **extra: str) -> dict[str, str]:
    """Labels of a synthetic series that ``matchers`` select, with the aggregation labels set."""
    labels = {label: f"test-{label}" for label in plan.agg_labels}
    for m in matchers:
        if m.op in ("=", "=~"):
            labels[m.label] = example_value(m, (*ERROR_EXAMPLES, *OK_EXAMPLES, *OTHER_EXAMPLES))
    labels.update(extra)
    return labels


def up_labels(plan: ServicePlan) -> dict[str, str]:
    """The model target's ``up`` labels: the selector's, an instance and (as Kubernetes
    service discovery adds it) the pod."""
    return labels_of(plan, plan.matchers, instance=INSTANCE, pod=example_pod(plan))


def sidecar_labels(plan: ServicePlan) -> dict[str, str]:
    """Labels of the NVML sidecar's series (its PodMonitor's job, container and the pod)."""
    return labels_of(plan, plan.gpu_matchers, pod=example_pod(plan))


Minutes = Sequence[float | None]
"""One sample per test step (minute); None: no sample (stale after a sample)."""


def values_text(values: Minutes) -> str:
    """promtool values of ``values``: a None right after a sample is ``stale``, else ``_``."""
    out, previous = [], None
    for v in values:
        out.append(go_float(v) if v is not None else "stale" if previous is not None else "_")
        previous = v
    return " ".join(out)


def without(s: Series, name: str, where: Callable[[dict[str, str]], bool] = lambda _: True) -> None:
    """Drop the gauges and counters named ``name`` whose labels satisfy ``where``."""
    s.gauges = {k: v for k, v in s.gauges.items() if not (k[0] == name and where(dict(k[1])))}
    s.counters = {k: v for k, v in s.counters.items() if not (k[0] == name and where(dict(k[1])))}
