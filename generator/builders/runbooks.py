"""Runbook pages of every alert in :data:`ALERTS` (docs/contracts.md, Alerts), from jinja2 templates.

Each service has a page per alert it emits, ``docs/runbooks/<service>/<Alert>.md``, where its
``runbook_url`` points (under ``metadata.runbookBaseUrl`` when set): that service's checks
first — queries on its recorded series, kubectl on its pods —, then what the alert means,
causes, where it goes and how to silence it. ``docs/runbooks/<Alert>.md`` is the page of every
service: the meaning and causes once, and one line per service linking to its page, so it stays
readable with 1,000 services (it used to hold every service's checks). Record names come from
:mod:`generator.naming` and label values reach PromQL only through
:func:`generator.promql.selector`, so a template never spells a record name or quotes a value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from generator import naming
from generator.builders import goodput_rules, model_slo_rules
from generator.builders.alertmanager_routing import alert_routes, inhibition_note
from generator.builders.fleet import fleet_cluster_label
from generator.builders.guard_rules import signal_inputs
from generator.families import FAMILIES, gpu
from generator.families.kinds import GOODPUT, GOODPUT_BUDGET, KINDS, MODELS, MODELS_BURN, SLO_BUDGET
from generator.parts.common import identity_matchers
from generator.parts.pods import OWNER_RECORD, replica_metrics
from generator.plan import ServicePlan
from generator.promql import Matcher, by, selector
from generator.text import render

# Every alert obsgen renders (docs/contracts.md, Alerts): alert name → spec key of the alert
# family in ServicePlan.alerts, or how a declared kind's page is rendered (families/kinds.py:
# None per SLO tier, SLO_BUDGET per SLO budget level, …).
ALERTS: dict[str, str | None] = {
    **{k.alert: k.page for k in KINDS},
    **{alert: f.key for f in FAMILIES for alert in f.alerts},
}


def runbook_file(alert: str) -> str:
    """Repository path of an alert's page for every service."""
    return naming.runbook_file(alert)


# What resolve() selects pods by when a spec sets no ``deployment.podLabels``.
DEFAULT_POD_LABEL = "app.kubernetes.io/name"


def pod_selector(labels: Sequence[tuple[str, str]]) -> str:
    """``kubectl -l`` selector of ``(key, value)`` label pairs: ``a=1,b=2`` in the given order.

    Unquoted: a template writes it into a shell snippet as ``[[ svc.pod_selector | sh ]]``
    (:func:`generator.text.shell_word`), as every value it interpolates there, so one word
    whatever the pairs hold (the spec allows only Kubernetes label syntax anyway).
    """
    return ",".join(f"{key}={value}" for key, value in labels)


def _has(plan: ServicePlan, key: str | None) -> bool:
    if key is None:
        return any(s.tiers for s in plan.slos)
    if key == SLO_BUDGET:
        return any(s.budget_levels for s in plan.slos)
    if key == GOODPUT:
        return any(s.tiers for s in plan.goodput)
    if key == GOODPUT_BUDGET:
        return any(s.budget_levels for s in plan.goodput)
    if key == MODELS_BURN:
        return plan.models is not None and any(
            model_slo_rules.burn_alerts(plan, s) for s in plan.slos
        )
    if key == MODELS:
        return plan.models is not None and bool(model_slo_rules.unwatched_rules(plan))
    return key in plan.alerts


def service_context(plan: ServicePlan) -> dict[str, Any]:
    """What a runbook template may say about one service: names and ready-made selectors
    (read-only: built once per plan, every alert's page reads it).

    Keys: ``name``, ``server``, ``namespace``, ``deployment``, ``workload`` (``kubectl``
    resource: ``deployment/<name>`` or ``statefulset/<name>``), ``container``, ``group_by``
    (list), ``model_label``, ``pod_selector`` (``kubectl -l`` value selecting the model's
    pods, the same labels as its PodMonitors), ``signals`` (the guarded inputs: ``signal``,
    ``metric``, ``le``, ``readers``) and ``q``: recorded-series selectors (``requests``,
    ``error_ratio``, ``p99``, ``slow``, ``queue``, ``running``, ``kv``, ``memory_ratio``,
    ``memory_limit``, ``burn``, ``pods``; ``queue``, ``running`` and ``kv`` are None when the
    server has no such signal) plus raw queries (``up``, ``working_set``, ``trend``, ``oom``,
    ``restarts``, ``crash_loop``, ``replicas_desired``, ``replicas_available``, ``gpu_*``). cAdvisor and kube-state-metrics
    queries are kept to the service's pods by the owner record (never a pod-name pattern).
    With a cluster label, ``cluster_label`` and every query picks ``<cluster>`` (the on-call
    puts the alert's cluster there) and ``by_pod`` (the grouping of per-pod queries) keeps it.
    """
    return plan.derive(RUNBOOK_CONTEXT, lambda: _service_context(plan))


RUNBOOK_CONTEXT = "runbook_context"  # the ServicePlan.derive key of service_context


def _service_context(plan: ServicePlan) -> dict[str, Any]:
    g = plan.group_by
    cluster = (
        (Matcher(plan.cluster_label, "=", naming.CLUSTER_PLACEHOLDER),)
        if plan.cluster_label
        else ()
    )
    svc = (*identity_matchers(plan), *cluster)

    def rec(record: str, *extra: Matcher) -> str:
        return selector(record, (*svc, *extra))

    pod_labels = (
        plan.install.pod_labels
        if plan.install is not None
        else ((DEFAULT_POD_LABEL, plan.deployment_name),)
    )
    burn_window = min((t.long_window_ms for s in plan.slos for t in s.tiers), default=3_600_000)
    goodput_window = min(
        (t.long_window_ms for s in plan.goodput for t in s.tiers), default=3_600_000
    )
    desired, available, workload_label = replica_metrics(plan)
    workload = (
        *((Matcher("namespace", "=", plan.namespace),) if plan.namespace else ()),
        Matcher(workload_label, "=", plan.deployment_name),
    )
    return {
        "name": plan.name,
        "stem": plan.stem,  # its page folder (docs/runbooks/<stem>/)
        "server": plan.server,
        "namespace": plan.namespace or "default",
        "deployment": plan.deployment_name,
        "workload": f"{plan.workload_kind.lower()}/{plan.deployment_name}",
        "workload_kind": plan.workload_kind,
        "container": plan.container,
        # spec.roles: the pod label and (role, value) pairs; None for a service of one role.
        "role_pod_label": plan.roles.pod_label if plan.roles else None,
        "roles": [list(r) for r in plan.roles.named] if plan.roles else [],
        "metrics_port": plan.install.metrics_port if plan.install is not None else "metrics",
        "metrics_path": plan.install.metrics_path if plan.install is not None else "/metrics",
        "group_by": list(g),
        "cluster_label": plan.cluster_label,
        "by_pod": by(plan.keeping("pod")).strip(),
        "model_label": plan.model_label,
        "pod_selector": pod_selector(pod_labels),
        "signals": [
            {"signal": i.signal, "metric": i.metric, "le": i.le, "readers": ", ".join(i.readers)}
            for i in signal_inputs(plan)
        ],
        "q": {
            "requests": rec(naming.record(g, naming.REQUESTS, "rate5m")),
            "error_ratio": rec(naming.record(g, naming.REQUEST_ERRORS, "ratio_rate5m")),
            "p99": rec(
                naming.record(g, naming.LATENCY, "quantile_rate5m"),
                Matcher(naming.QUANTILE, "=", "0.99"),
            ),
            "slow": rec(naming.record(g, naming.SLOW_REQUESTS, "ratio_rate5m")),
            "running": rec(naming.record(g, naming.RUNNING_REQUESTS, "sum"))
            if plan.running_requests is not None
            else None,
            "burn": rec(
                naming.record(g, naming.SLO_BURN_RATE, f"ratio_rate{naming.window(burn_window)}")
            ),
            "budget": rec(naming.record(g, naming.SLO_BUDGET_REMAINING, "ratio")),
            "goodput_shares": rec(goodput_rules.violations_record(plan, goodput_window)),
            "goodput_bound": rec(goodput_rules.bound_record(plan, goodput_window)),
            "goodput_budget": rec(goodput_rules.budget_record(plan)),
            "models_error": rec(model_slo_rules.error_record(plan, burn_window)),
            "models_unwatched": rec(model_slo_rules.unwatched_record(plan)),
            "models_requests": model_slo_rules.per_model_query(plan),
            "up": selector("up", (*plan.matchers, *cluster)),
            "pods": rec(OWNER_RECORD),
            "replicas_desired": selector(desired, (*workload, *cluster)),
            "replicas_available": selector(available, (*workload, *cluster)),
            "gpu_device_up": gpu.read(plan, naming.GPU_DEVICE_UP, *cluster),
            "gpu_xid": gpu.read(
                plan,
                naming.GPU_XID_RECENT if gpu.dcgm(plan) else naming.GPU_XID_ERRORS,
                *cluster,
            ),
            "gpu_up": gpu.read(plan, naming.GPU_EXPORTER_UP, *cluster),
            "gpu_clock_events": gpu.read(plan, naming.GPU_CLOCK_EVENT_ACTIVE, *cluster),
            "gpu_power": gpu.read(plan, naming.GPU_POWER_USAGE, *cluster),
            "gpu_unsupported": None
            if gpu.dcgm(plan)
            else selector(naming.GPU_READING_UNSUPPORTED, (*plan.gpu_matchers, *cluster)),
            **{k: v for f in FAMILIES for k, v in f.runbook_queries(plan, rec).items()},
        },
    }


def runbook(
    alert: str,
    plans: Sequence[ServicePlan],
    routes: Mapping[str, list[tuple[str, str, str]]] | None = None,
) -> str:
    """Render ``templates/runbooks/<alert>.md.j2`` for every service: what the alert means, the
    services (sorted) that have it — each linking to its own page —, causes, where it goes.

    The page is rendered even when no service has the alert (every ``runbook_url`` must
    resolve); it then names the spec files of ``plans``, none of which enables it. ``routes``
    (:func:`~generator.builders.alertmanager_routing.alert_routes` of ``plans``, computed when
    None) fill its "Where it goes" section.

    Raises:
        KeyError: ``alert`` is not an alert obsgen renders (:data:`ALERTS`).
        jinja2.TemplateNotFound / UndefinedError: a template is missing or uses an unknown name.
    """
    key = ALERTS[alert]
    services = [service_context(p) for p in sorted(plans, key=lambda p: p.name) if _has(p, key)]
    if routes is None:
        routes = alert_routes(plans)
    return render(
        f"runbooks/{alert}.md.j2",
        alert=alert,
        page=None,
        services=services,
        routes=routes.get(alert, []),
        inhibition=inhibition_note(alert, goodput=any(p.goodput for p in plans)),
        specs=sorted(p.source for p in plans),
        cluster_label=fleet_cluster_label(plans),
        header=f"Generated by obsgen from templates/runbooks/{alert}.md.j2. "
        "Do not edit: change the template and run `make render`.",
    )


def service_runbook(alert: str, plan: ServicePlan, routes: list[tuple[str, str, str]]) -> str:
    """The page of ``alert`` for one service (where its ``runbook_url`` points): that
    service's checks first, where its alerts go and its silence command; what the alert means,
    its causes and fixes, what it holds back and the silencing advice, the same for every
    service, are on the page
    of every service (:func:`runbook`), which it links to: written once, not per service.
    ``routes``: this service's ``(service, severity, receiver)`` rows.

    Raises:
        jinja2.TemplateNotFound / UndefinedError: a template is missing or uses an unknown name.
    """
    context = service_context(plan)
    return render(
        f"runbooks/{alert}.md.j2",
        alert=alert,
        page=context,
        services=[context],
        routes=routes,
        specs=[plan.source],
        cluster_label=plan.cluster_label,
        fleet_link=f"../{alert}.md",
        header=f"Generated by obsgen from {plan.source} and templates/runbooks/{alert}.md.j2. "
        "Do not edit: change them and run `make render`.",
    )


# A link from one runbook page to another alert's (``[ModelContainerOOMKilled](…OOMKilled.md)``).
_PAGE_LINK = re.compile(r"\]\(([A-Za-z0-9]+)\.md\)")


def service_runbook_outputs(plan: ServicePlan) -> dict[str, str]:
    """``docs/runbooks/<service>/<Alert>.md`` for every alert of :data:`ALERTS` the service has.

    A link to another alert's page leads to this service's page of it, or to the page of
    every service when this one does not have that alert.
    """
    routes = alert_routes([plan])
    mine = [alert for alert in ALERTS if alert in routes]

    def link(match: re.Match[str]) -> str:
        target = match.group(1)
        return match.group(0) if target in mine else f"](../{target}.md)"

    return {
        naming.runbook_file(alert, plan.stem): _PAGE_LINK.sub(
            link, service_runbook(alert, plan, routes[alert])
        )
        for alert in mine
    }


def runbook_outputs(plans: Sequence[ServicePlan]) -> dict[str, str]:
    """``docs/runbooks/<Alert>.md`` for every alert in :data:`ALERTS` (all of them, always)."""
    routes = alert_routes(plans)
    return {runbook_file(alert): runbook(alert, plans, routes) for alert in ALERTS}
