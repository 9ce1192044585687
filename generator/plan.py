"""Resolve a validated spec into a :class:`ServicePlan`: presets, defaults and checks applied.

This is the only place presets and defaults apply: builders read plans, never specs or presets,
so two builders cannot resolve a default differently. Everything a builder needs is decided
here (metric names, selectors, bucket bounds, burn-rate tiers, alert thresholds); cross-field
checks pydantic cannot express raise :class:`~generator.errors.ObsgenError` naming the field.
The plan types live in ``plan_types``, the defaults in ``plan_defaults``, and the resolution
of metrics, SLOs and alerts in ``plan_metrics``, ``plan_slos`` and ``plan_alerts``.
"""

from __future__ import annotations

from pydantic.alias_generators import to_snake

from generator import autoscaling, models, naming, roles
from generator.errors import Diagnostic, ObsgenError
from generator.plan_alerts import _resolve_alerts
from generator.plan_defaults import (
    _GPU_ALERTS,
    _NOT_HISTOGRAMS,
    _SPEC_PARAM,
    ALERT_DEFAULTS,
    BUDGET_LEVELS,
    DEFAULT_STARTUP_GRACE_MS,
    SIGNAL_MISSING_MIN_SCRAPES,
    WINDOW_FACTOR,
)
from generator.plan_slos import _query_offset, _resolve_slos
from generator.plan_types import (
    ActivatorPlan,
    AlertPlan,
    CounterPlan,
    FailureSourcePlan,
    GaugePlan,
    GoodputTargetPlan,
    HistogramPlan,
    InstallPlan,
    MeanLatencyPlan,
    PrefixCachePlan,
    RequestsPlan,
    ServicePlan,
    SLOPlan,
    _merge,
    _Problems,
)
from generator.presets import (
    Preset,
    PresetError,
    select_preset,
)
from generator.presets.model import metric_names, prefixed
from generator.promql import (
    LEGACY_METRIC_NAME,
    Matcher,
    equals,
    label_name_problem,
    metric_name_problem,
)
from generator.release_bounds import Releases
from generator.signals import SIGNALS, Scope
from generator.signals import histograms as histograms_signal
from generator.signals import requests as requests_signal
from generator.spec import (
    Activator,
    ModelServiceSpec,
)

# Moved to the modules above and still importable from here.
__all__ = [
    "ALERT_DEFAULTS",
    "BUDGET_LEVELS",
    "DEFAULT_STARTUP_GRACE_MS",
    "SIGNAL_MISSING_MIN_SCRAPES",
    "WINDOW_FACTOR",
    "_GPU_ALERTS",
    "_SPEC_PARAM",
    "ActivatorPlan",
    "AlertPlan",
    "CounterPlan",
    "FailureSourcePlan",
    "GaugePlan",
    "GoodputTargetPlan",
    "HistogramPlan",
    "InstallPlan",
    "MeanLatencyPlan",
    "PrefixCachePlan",
    "RequestsPlan",
    "SLOPlan",
    "ServicePlan",
]


def _check_prefixed(preset: Preset, prefix: str, version: str, p: _Problems) -> None:
    """Refuse ``spec.metrics.prefix`` when a preset name it makes is no metric name on the
    spec's Prometheus version (the first such name is quoted)."""
    for name in metric_names(preset):
        why = metric_name_problem(name, version)
        if why is not None:
            p.add(
                "spec.metrics.prefix",
                f"{prefix!r} makes the preset's metric name {name!r}, which {why}",
            )
            return


def _check_activator(given: Activator | None, version: str, p: _Problems) -> None:
    """Refuse an activator metric or selector label the spec's Prometheus cannot store."""
    if given is None:
        return
    path = "spec.scaleToZero.activator"
    why = None if given.metric is None else metric_name_problem(given.metric, version)
    if why is not None:
        p.add(f"{path}.metric", f"{given.metric!r} {why}")
    for label in sorted(given.selector):
        why = label_name_problem(label, version)
        if why is not None:
            p.add(f"{path}.selector", f"label {label!r} {why}")


def _activator(given: Activator | None) -> ActivatorPlan | None:
    """The activator's plan: the source's gauge names (``metric`` replaces them) and the
    selector's matchers."""
    if given is None:
        return None
    names = (given.metric,) if given.metric else naming.ACTIVATOR_METRICS[given.source]
    return ActivatorPlan(given.source, tuple(names), equals(given.selector))


def resolve(spec: ModelServiceSpec, source: str) -> ServicePlan:
    """Resolve ``spec`` (read from ``source``) into a :class:`ServicePlan`.

    Raises:
        ObsgenError: every cross-field problem found, each with file and field path.
    """
    p = _Problems(source)
    body = spec.spec
    try:
        selection = select_preset(body.server, body.server_version, body.server_variant)
    except PresetError as err:
        raise ObsgenError([Diagnostic(source, f"spec.{err.field}", str(err))]) from None
    preset = selection.preset
    if selection.warning is not None:
        p.warn("spec.serverVersion", selection.warning)
    if body.metrics.prefix:
        preset = prefixed(preset, body.metrics.prefix)
        _check_prefixed(preset, body.metrics.prefix, body.prometheus.major, p)
    base = equals(body.selector)
    role = roles.resolve(body.roles)
    why = None if role is None else roles.selector_problem(role, body.selector)
    if why is not None:
        p.add("spec.selector", why)
    why = None if role is None else roles.group_by_problem(role, body.group_by)
    if why is not None:
        p.add("spec.groupBy", why)
    why = (
        None
        if body.models is None
        else models.problem(body.server, preset.model_label, body.group_by)
    )
    if why is not None:
        p.add("spec.models", why)
    metrics = body.metrics
    for key in (*naming.INDICATOR_LABEL, *_NOT_HISTOGRAMS):
        given = getattr(metrics, to_snake(key))
        why = (
            None
            if given is None or given.name is None
            else metric_name_problem(given.name, body.prometheus.major)
        )
        if why is not None:
            p.add(f"spec.metrics.{key}.name", f"{given.name!r} {why}")
        for part, labels in (
            ("selector", given and given.selector),
            ("errorMatchers", given and given.error_matchers),
        ):
            for label in sorted(labels or {}):
                why = label_name_problem(label, body.prometheus.major)
                if why is not None:
                    p.add(f"spec.metrics.{key}.{part}", f"label {label!r} {why}")
    histograms = histograms_signal.resolve_all(body, preset, base, role, p)
    for key in _NOT_HISTOGRAMS:
        override = getattr(metrics, to_snake(key))
        for attr in ("buckets", "unit", "histogram"):
            if override is not None and getattr(override, attr) is not None:
                p.add(
                    f"spec.metrics.{key}.{attr}",
                    f"{attr} applies to latency histograms only "
                    "(requestDuration, timeToFirstToken, interTokenLatency, requestQueueTime, "
                    "timePerOutputToken)",
                )
    _check_activator(body.scale_to_zero.activator, body.prometheus.version, p)
    releases = Releases.of(
        body.server,
        body.server_version,
        body.server_variant,
        # Bounds of the release: the preset's, unless spec.metrics.<key>.buckets replaces them.
        frozenset(
            k
            for k in histograms
            if k in preset.latency
            and getattr(getattr(metrics, to_snake(k)), "buckets", None) is None
        ),
    )
    slos = _resolve_slos(spec, histograms, p, releases)
    alerts = _resolve_alerts(spec, histograms, preset, p, releases)
    requests = requests_signal.resolve(
        preset, metrics, roles.scoped(role, roles.OUTCOME, base), p, body.failure
    )
    for label in sorted({m.label for m in requests.error_matchers} & set(body.group_by)):
        p.add(
            "spec.groupBy",
            f"cannot group by {label!r}: the request error matchers tell failures by it, so "
            "every group would be all failures or none",
        )
    cluster_label = body.prometheus.cluster_label
    if cluster_label is not None and cluster_label in body.group_by:
        p.add(
            "spec.groupBy",
            f"cannot group by {cluster_label!r}: it is spec.prometheus.clusterLabel, which "
            "every aggregation keeps already; remove it from groupBy",
        )
    query_offset_ms = _query_offset(body.prometheus, p)
    if p.items:
        raise ObsgenError(p.items)
    if spec.metadata.runbook_base_url is None:
        p.warn(
            "metadata.runbookBaseUrl",
            "not set: alert runbook_url annotations are relative (docs/runbooks/<service>/<Alert>.md) "
            "and cannot be opened from a page; set it to where docs/runbooks is published, "
            "e.g. https://git.example.com/obs/-/blob/main/docs/runbooks",
        )
    if spec.metadata.grafana_url is None:
        p.warn(
            "metadata.grafanaUrl",
            "not set: alert dashboard_url annotations are relative (/d/<uid>/<service>) and "
            "open nothing from a page or a chat message; set it to your Grafana's address, "
            "e.g. https://grafana.example.com",
        )
    deployment = body.deployment
    namespace = body.selector.get("namespace")
    # No pod-name pattern: pods are attributed to the workload by kube-state-metrics owner
    # series or their scrape targets' labels (generator/parts/pods.py).
    namespaced = (Matcher("namespace", "=", namespace),) if namespace else ()
    container_matchers = (*namespaced, Matcher("container", "=", deployment.container))
    # The sidecar is scraped by obsgen's own PodMonitor, which sets this job label.
    gpu_base = _merge(
        namespaced,
        {
            "container": naming.GPU_EXPORTER_CONTAINER,
            "job": naming.k8s_name(spec.metadata.name, "gpu"),
            **(body.gpu.selector or {}),
        },
    )
    if body.gpu.exporter == "dcgm":
        # dcgm-exporter runs on each node, in its own namespace: its targets' own labels.
        gpu_base = tuple(sorted(equals(dict(body.gpu.dcgm.selector))))
    scope = Scope(preset, metrics, base, roles.scoped(role, roles.DECODE, base))
    signals = {s.key: s.resolve(scope) for s in SIGNALS}
    activator = _activator(body.scale_to_zero.activator)
    read = [
        *(n for h in histograms.values() for n in h.names),
        requests.name,
        *([requests.failure_name] if requests.failure_name else []),
        *(n for s in SIGNALS if signals[s.key] is not None for n in s.reads(signals[s.key])),
        *(n for m in preset.mean_latency.values() for n in (m.sum_name, m.count_name)),
        *(activator.names if activator else ()),
    ]
    plan = ServicePlan(
        name=spec.metadata.name,
        team=spec.metadata.team,
        source=source,
        server=body.server,
        preset=preset,
        matchers=base,
        group_by=tuple(body.group_by),
        cluster_label=cluster_label,
        le_version=body.prometheus.major,
        scrape_interval_ms=body.prometheus.scrape_interval,
        evaluation_interval_ms=body.prometheus.evaluation_interval,
        query_offset_ms=query_offset_ms,
        max_gap_ms=body.prometheus.max_gap,
        histograms=histograms,
        requests=requests,
        **signals,
        model_label=preset.model_label,
        slos=tuple(s for s in slos if s.kind != "goodput"),
        goodput=tuple(s for s in slos if s.kind == "goodput"),
        alerts=alerts,
        gpu_exporter=body.gpu.exporter != "none",
        gpu_visibility=body.gpu.visibility,
        gpu_values_path=body.gpu.values_path,
        gpu_matchers=gpu_base,
        deployment_name=deployment.name,
        workload_kind=deployment.kind,
        container=deployment.container,
        replicas=deployment.replicas.min,
        replicas_max=deployment.replicas.max,
        startup_grace_ms=(
            DEFAULT_STARTUP_GRACE_MS
            if body.scale_to_zero.startup_grace is None
            else body.scale_to_zero.startup_grace
        ),
        activator=activator,
        memory_limit_bytes=deployment.memory_limit,
        container_matchers=tuple(sorted(container_matchers)),
        namespace=namespace,
        runbook_base_url=spec.metadata.runbook_base_url,
        grafana_url=spec.metadata.grafana_url,
        mean_latencies=tuple(
            MeanLatencyPlan(
                key=key,
                indicator=naming.INDICATOR_LABEL[key],
                sum_name=m.sum_name,
                count_name=m.count_name,
                seconds_per_unit=m.seconds_per_unit,
                matchers=roles.scoped(role, roles.HISTOGRAM_OWNER.get(key, roles.OUTCOME), base),
            )
            for key, m in sorted(preset.mean_latency.items())
            if key not in histograms
        ),
        install=InstallPlan(
            release=body.prometheus.release,
            pod_labels=tuple(
                sorted(
                    (deployment.pod_labels or {"app.kubernetes.io/name": deployment.name}).items()
                )
            ),
            metrics_port=deployment.metrics_port,
            metrics_path=deployment.metrics_path,
            exporter_image=body.gpu.image,
            visible_devices=body.gpu.visible_devices,
            gpu_claim=body.gpu.claim,
        ),
        retention_ms=body.prometheus.retention,
        metric_prefix=body.metrics.prefix or "",
        utf8_names=tuple(sorted({n for n in read if not LEGACY_METRIC_NAME.match(n)})),
        warnings=tuple(p.warnings),
        gpu_source=body.gpu.exporter,
        dcgm_honor_labels=body.gpu.dcgm.honor_labels,
        autoscaling=body.autoscaling,
        roles=role,
        models=models.resolve(body.models, preset.model_label),
    )
    found = autoscaling.problems(plan)
    if found:
        raise ObsgenError(found)
    return plan
