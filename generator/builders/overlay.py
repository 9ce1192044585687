"""Install overlays: kube-prometheus-stack values, the model chart's sidecar values, manifests.

:func:`overlay_outputs` runs after every other output builder and reads the dashboards they
rendered (``dashboards/<name>.json``) from the outputs, so this module needs no dashboard
builder of its own. It produces:

* ``helm/values-observability.yaml`` (every service) and ``helm/values-<service>.yaml``:
  values for kube-prometheus-stack, to add with one more ``-f``;
* ``helm/sidecar-<service>.yaml``: values for the model's own chart adding the NVML exporter;
* ``manifests/<service>/*.yaml`` (and ``manifests/<dashboard>.yaml`` for dashboards of no one
  service): the same objects as plain manifests for GitOps.

kube-prometheus-stack passes ``additionalPrometheusRulesMap.*.groups`` through ``toYaml`` only
(never ``tpl``), so alert templates such as ``{{ $labels.pod }}`` reach Prometheus unchanged;
``extraManifests`` is ``tpl``-rendered and would break them, so it is never used. The Grafana
chart likewise copies ``grafana.dashboards.<provider>.<name>.json`` verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator import naming
from generator.builders import kube
from generator.builders.kube import Obj
from generator.builders.rulefile import rule_groups
from generator.errors import Diagnostic, ObsgenError
from generator.plan import ServicePlan
from generator.yamlio import YamlText, dump_yaml, generated_header

# A service's rule groups: built (a list of groups) or already serialised.
Groups = list[Any] | YamlText

DASHBOARDS_VIA = ("configmaps", "values")
# A ConfigMap (the whole object) must stay under 1 MiB; leave room for its metadata.
MAX_DASHBOARD_BYTES = 1_000_000
# Keys of a kube-prometheus-stack `prometheus.additionalPodMonitors` entry its template reads
# (templates/prometheus/podmonitors.yaml); anything else would be dropped silently.
CHART_POD_MONITOR_KEYS = frozenset(
    {
        "name",
        "additionalLabels",
        "jobLabel",
        "namespaceSelector",
        "selector",
        "podMetricsEndpoints",
        "podTargetLabels",
        "sampleLimit",
        "fallbackScrapeProtocol",
        "attachMetadata",
    }
)


@dataclass(frozen=True)
class Dashboard:
    """A rendered dashboard to install.

    Attributes:
        stem: file stem of ``dashboards/<stem>.json`` (a service name, or e.g. fleet-overview).
        json_text: the file's text, unchanged.
        namespace: where its ConfigMap goes (the service namespace; None: kubectl's current).
    """

    stem: str
    json_text: str
    namespace: str | None

    @property
    def key(self) -> str:
        """Name of the dashboard in Grafana's provisioning folder (``obsgen-<stem>``)."""
        return f"obsgen-{self.stem}"

    def configmap(self) -> Obj:
        """The sidecar ConfigMap holding this dashboard."""
        return kube.dashboard_configmap(
            f"obsgen-dashboard-{self.stem}", f"{self.key}.json", self.json_text, self.namespace
        )


def dashboard_too_large(path: str, text: str) -> Diagnostic | None:
    """The problem with dashboard file ``path`` when ``text`` does not fit a ConfigMap."""
    size = len(text.encode("utf-8"))
    if size <= MAX_DASHBOARD_BYTES:
        return None
    return Diagnostic(
        path,
        "",
        f"{size} bytes is over the {MAX_DASHBOARD_BYTES}-byte limit of a ConfigMap; "
        "split the dashboard",
    )


def find_dashboards(
    plans: Sequence[ServicePlan], outputs: Mapping[str, str]
) -> tuple[dict[str, Dashboard], list[Dashboard]]:
    """Dashboards among ``outputs``: ``({service: dashboard}, [dashboards of no one service])``.

    Raises:
        ObsgenError: a dashboard too large for a ConfigMap.
    """
    by_name = {p.name: p for p in plans}
    per_service: dict[str, Dashboard] = {}
    shared: list[Dashboard] = []
    problems = []
    for path in sorted(outputs):
        folder, _, file = path.partition("/")
        if folder != "dashboards" or "/" in file or not file.endswith(".json"):
            continue
        stem = file.removesuffix(".json")
        text = outputs[path]
        problem = dashboard_too_large(path, text)
        if problem is not None:
            problems.append(problem)
            continue
        plan = by_name.get(stem)
        if plan is None:
            shared.append(Dashboard(stem, text, None))
        else:
            per_service[stem] = Dashboard(stem, text, plan.namespace)
    if problems:
        raise ObsgenError(problems, exit_code=1)
    return per_service, shared


def rules_entry(plan: ServicePlan, groups: Groups | None = None) -> Obj:
    """``additionalPrometheusRulesMap.<obsgen-service>``: labels and the rule file's groups
    (``groups``, when already built or serialised, else built here)."""
    return {
        "additionalLabels": kube.common_labels(plan),
        "groups": rule_groups(plan) if groups is None else groups,
    }


def pod_monitor_entry(monitor: Obj) -> Obj:
    """A ``prometheus.additionalPodMonitors`` entry from a PodMonitor object.

    The chart puts the entry in its own namespace and adds its ``release`` label itself, so
    both are left out; the spec keys are copied unchanged.
    """
    labels = {k: v for k, v in monitor["metadata"]["labels"].items() if k != "release"}
    return {"name": monitor["metadata"]["name"], "additionalLabels": labels, **monitor["spec"]}


def grafana_values(dashboards: Sequence[Dashboard], via: str) -> Obj:
    """``grafana:`` values installing ``dashboards``.

    ``configmaps``: configure the chart's dashboard sidecar to load labelled ConfigMaps from
    every namespace into the folder their annotation names (the ConfigMaps are in
    ``manifests/``). ``values``: the dashboards themselves under ``grafana.dashboards`` with a
    file provider of their own (``obsgen-dashboardproviders.yaml``, so a provider list the
    user already has is not replaced).
    """
    if not dashboards:
        return {}
    if via == "configmaps":
        return {
            "sidecar": {
                "dashboards": {
                    "enabled": True,
                    "label": naming.DASHBOARD_LABEL,
                    "labelValue": naming.DASHBOARD_LABEL_VALUE,
                    "searchNamespace": "ALL",
                    "folderAnnotation": naming.DASHBOARD_FOLDER_ANNOTATION,
                    "provider": {"foldersFromFilesStructure": True},
                }
            }
        }
    provider = naming.DASHBOARD_PROVIDER
    return {
        "dashboardProviders": {
            f"{provider}-dashboardproviders.yaml": {
                "apiVersion": 1,
                "providers": [
                    {
                        "name": provider,
                        "orgId": 1,
                        "folder": naming.DASHBOARD_FOLDER,
                        "type": "file",
                        "disableDeletion": False,
                        "editable": False,
                        "allowUiUpdates": False,
                        "options": {"path": f"/var/lib/grafana/dashboards/{provider}"},
                    }
                ],
            }
        },
        "dashboards": {provider: {d.key: {"json": d.json_text} for d in dashboards}},
    }


def kps_values(
    plans: Sequence[ServicePlan],
    dashboards: Sequence[Dashboard],
    via: str,
    groups: Mapping[str, Groups] | None = None,
) -> Obj:
    """kube-prometheus-stack values for ``plans``: rules, PodMonitors and ``dashboards``.

    ``groups``: each service's rule groups by service name, when already built (else built).
    """
    groups = groups or {}
    values: Obj = {
        "additionalPrometheusRulesMap": {
            naming.k8s_name(p.name): rules_entry(p, groups.get(p.name)) for p in plans
        },
        "prometheus": {
            "additionalPodMonitors": [
                pod_monitor_entry(m) for p in plans for m in kube.pod_monitors(p)
            ]
        },
    }
    grafana = grafana_values(dashboards, via)
    if grafana:
        values["grafana"] = grafana
    return values


def _header(sources: Sequence[str], usage: str) -> str:
    return f"{generated_header(', '.join(sources))}\n{usage}"


KPS_USAGE = (
    "Use: helm upgrade --install <release> prometheus-community/kube-prometheus-stack "
    "-f <your values> -f {file}"
)
SIDECAR_USAGE = (
    "Use: helm upgrade --install <model release> <model chart> -f <your values> -f {file}"
)


def _check_names(plans: Sequence[ServicePlan]) -> None:
    reserved = naming.ALL_SERVICES_VALUES
    clash = [p for p in plans if naming.values_file(p.name) == reserved]
    if clash:
        raise ObsgenError(
            Diagnostic(
                p.source,
                "metadata.name",
                f"{p.name!r} is reserved: {reserved} holds the values of every service",
            )
            for p in clash
        )


def service_overlay(
    plan: ServicePlan,
    dashboard: Dashboard | None,
    dashboards_via: str = "configmaps",
    groups: Groups | None = None,
) -> dict[str, str]:
    """The ``helm/`` and ``manifests/`` files of one service (:func:`naming.owned_by` it).

    ``dashboard``: its own dashboard, if any; ``groups``: its rule groups when already built
    or serialised (:class:`~generator.yamlio.YamlText`), else built here.
    """
    groups = rule_groups(plan) if groups is None else groups
    own = [dashboard] if dashboard is not None else []
    files: dict[str, str] = {}
    header = generated_header(plan.source)
    path = naming.values_file(plan.name)
    files[path] = dump_yaml(
        kps_values([plan], own, dashboards_via, {plan.name: groups}),
        header=_header([plan.source], KPS_USAGE.format(file=path)),
    )
    if plan.gpu_exporter:
        path = naming.sidecar_values_file(plan.name)
        files[path] = dump_yaml(
            kube.sidecar_values(plan),
            header=_header([plan.source], SIDECAR_USAGE.format(file=path)),
        )
    files[naming.manifest_file(plan.name, "prometheusrule")] = dump_yaml(
        kube.prometheus_rule(plan, groups), header=header
    )
    for monitor in kube.pod_monitors(plan):
        part = monitor["metadata"]["name"].removeprefix(naming.k8s_name(plan.name) + "-")
        files[naming.manifest_file(plan.name, f"podmonitor-{part}")] = dump_yaml(
            monitor, header=header
        )
    for own_dashboard in own:
        files[naming.manifest_file(plan.name, "dashboard")] = dump_yaml(
            own_dashboard.configmap(), header=header
        )
    return files


def fleet_overlay(
    plans: Sequence[ServicePlan],
    per_service: Mapping[str, Dashboard],
    shared: Sequence[Dashboard],
    dashboards_via: str = "configmaps",
    groups: Mapping[str, Groups] | None = None,
) -> dict[str, str]:
    """The files of every service together: :data:`naming.ALL_SERVICES_VALUES` and the
    manifests of ``shared`` dashboards (those of no one service, e.g. the fleet overview).

    ``per_service``: each service's dashboard by name; ``groups``: rule groups by name.
    """
    files: dict[str, str] = {}
    sources = sorted(p.source for p in plans)
    for dashboard in shared:
        files[f"manifests/{dashboard.stem}.yaml"] = dump_yaml(
            dashboard.configmap(), header=generated_header(", ".join(sources))
        )
    path = naming.ALL_SERVICES_VALUES
    everything = [*(per_service[p.name] for p in plans if p.name in per_service), *shared]
    files[path] = dump_yaml(
        kps_values(plans, everything, dashboards_via, groups),
        header=_header(sources, KPS_USAGE.format(file=path)),
    )
    return files


def check_overlay(plans: Sequence[ServicePlan], dashboards_via: str) -> None:
    """Refuse an unknown ``dashboards_via`` and a service named like the all-services file.

    Raises:
        ValueError: an unknown ``dashboards_via``.
        ObsgenError: a service named like :data:`naming.ALL_SERVICES_VALUES`.
    """
    if dashboards_via not in DASHBOARDS_VIA:
        raise ValueError(f"dashboards_via must be one of {DASHBOARDS_VIA}, got {dashboards_via!r}")
    _check_names(plans)


def overlay_outputs(
    plans: Sequence[ServicePlan], outputs: Mapping[str, str], dashboards_via: str = "configmaps"
) -> dict[str, str]:
    """Every ``helm/`` and ``manifests/`` file for ``plans``, given the other builders' outputs.

    Args:
        plans: all services, sorted by name.
        outputs: the files already rendered (dashboards are taken from here when present).
        dashboards_via: ``configmaps`` (default) or ``values``; see :func:`grafana_values`.

    Raises:
        ValueError: an unknown ``dashboards_via``.
        ObsgenError: a service named like the all-services file, or an oversized dashboard.
    """
    check_overlay(plans, dashboards_via)
    if not plans:
        return {}
    per_service, shared = find_dashboards(plans, outputs)
    files: dict[str, str] = {}
    for plan in plans:
        files.update(service_overlay(plan, per_service.get(plan.name), dashboards_via))
    files.update(fleet_overlay(plans, per_service, shared, dashboards_via))
    return dict(sorted(files.items()))
