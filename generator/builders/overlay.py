"""Install overlays: kube-prometheus-stack values, the model chart's sidecar values, manifests.

What it writes, and why alert templates survive each path: docs/install.md, "Install
overlays".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator import kube_names, naming
from generator.builders import hpa, install_limits, kube, scaled_object
from generator.builders.kube import Obj
from generator.builders.rulefile import rule_groups
from generator.errors import Diagnostic, Level, ObsgenError
from generator.plan import ServicePlan
from generator.text import shell_word
from generator.yamlio import YamlText, dump_yaml, generated_header

# A service's rule groups: built (a list of groups) or already serialised.
Groups = list[Any] | YamlText

DASHBOARDS_VIA = ("configmaps", "values")
# Labels kube-prometheus-stack puts on every object it renders ("kube-prometheus-stack.labels"
# in templates/_helpers.tpl, plus `app`); an overlay entry repeating one would write the key
# twice into one mapping, which Flux and `kustomize --enable-helm` reject.
CHART_LABELS = frozenset(
    {
        "app",
        "app.kubernetes.io/managed-by",
        "app.kubernetes.io/instance",
        "app.kubernetes.io/version",
        "app.kubernetes.io/part-of",
        "chart",
        "release",
        "heritage",
    }
)
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
        namespace: where its ConfigMap goes (the service namespace; None: kubectl's current,
            for the fleet overview the Grafana namespace).
        uid: the dashboard's Grafana uid, read from ``json_text``.
    """

    stem: str
    json_text: str
    namespace: str | None
    uid: str

    @property
    def key(self) -> str:
        """Name of the dashboard in Grafana's provisioning folder, without ``.json``: its uid,
        so two repositories' dashboards (two ``chat`` services, two fleet overviews) never
        overwrite each other's file."""
        return self.uid

    @property
    def configmap_name(self) -> str:
        """``obsgen-dashboard-<service>`` in the service's namespace; a dashboard of no
        namespace (the fleet overview) is named after its uid, unique in the namespace it
        shares with other repositories' dashboards."""
        if self.namespace:
            return f"obsgen-dashboard-{self.stem}"
        return f"obsgen-dashboard-{self.uid.removeprefix('obsgen-')}"

    def configmap(self) -> Obj:
        """The sidecar ConfigMap holding this dashboard."""
        return kube.dashboard_configmap(
            self.configmap_name,
            naming.dashboard_sidecar_file(self.uid),
            self.json_text,
            self.namespace,
        )


def _as_data(value: object) -> object:
    """JSON's ``default`` hook for size estimates: rule groups serialised once
    (:class:`~generator.yamlio.YamlText`) as their lists."""
    if isinstance(value, YamlText):
        return value.data
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _uid(path: str, text: str) -> str:
    try:
        uid = json.loads(text).get("uid")
    except (ValueError, AttributeError):
        uid = None
    if not isinstance(uid, str) or not uid:
        raise ValueError(f"{path} has no dashboard uid")
    return uid


def find_dashboards(
    plans: Sequence[ServicePlan], outputs: Mapping[str, str]
) -> tuple[dict[str, Dashboard], list[Dashboard]]:
    """Dashboards among ``outputs``: ``({service: dashboard}, [dashboards of no one service])``.

    Raises:
        ValueError: a dashboard without a uid (a builder bug).
    """
    by_name = {p.stem: p for p in plans}
    per_service: dict[str, Dashboard] = {}
    shared: list[Dashboard] = []
    for path in sorted(outputs):
        folder, _, file = path.partition("/")
        if folder != "dashboards" or "/" in file or not file.endswith(".json"):
            continue
        stem = file.removesuffix(".json")
        text = outputs[path]
        plan = by_name.get(stem)
        if plan is None:
            shared.append(Dashboard(stem, text, None, _uid(path, text)))
        else:
            per_service[stem] = Dashboard(stem, text, plan.namespace, _uid(path, text))
    return per_service, shared


def rules_entry(plan: ServicePlan, groups: Groups | None = None) -> Obj:
    """``additionalPrometheusRulesMap.<obsgen-service>``: the service label (no label the chart
    sets itself, :data:`CHART_LABELS`) and the rule file's groups (``groups``, when already
    built or serialised, else built here)."""
    return {
        "additionalLabels": kube.service_labels(plan),
        "groups": rule_groups(plan) if groups is None else groups,
    }


def pod_monitor_entry(monitor: Obj) -> Obj:
    """A ``prometheus.additionalPodMonitors`` entry from a PodMonitor object.

    The chart puts the entry in its own namespace and sets :data:`CHART_LABELS` itself, so
    those are left out; the spec keys are copied unchanged.
    """
    labels = {
        k: v
        for k, v in monitor["metadata"]["labels"].items()
        if k not in CHART_LABELS and not k.startswith("app.kubernetes.io/")
    }
    return {"name": monitor["metadata"]["name"], "additionalLabels": labels, **monitor["spec"]}


def grafana_values(dashboards: Sequence[Dashboard], via: str) -> Obj:
    """``grafana:`` values installing ``dashboards``.

    ``configmaps``: nothing. kube-prometheus-stack's dashboard sidecar already loads the
    ConfigMaps (in ``manifests/``) with the chart's defaults (``grafana_dashboard: "1"``, all
    namespaces) or the user's narrower choice, and every other sidecar setting would change
    what the chart does with the user's own dashboards: ``provider.foldersFromFilesStructure``
    makes the Grafana chart drop ``provider.folder`` (templates/_config.tpl), moving them to
    General, and a ``folderAnnotation`` replaces the user's. The ConfigMaps carry the
    ``grafana_folder`` annotation, so a sidecar configured for folders files them into
    theirs (docs/install.md). ``values``: the dashboards themselves under
    ``grafana.dashboards`` with a file provider of their own (``obsgen-dashboardproviders.yaml``,
    so a provider list the user already has is not replaced), which puts them in their folder.
    """
    if not dashboards or via == "configmaps":
        return {}
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
            naming.k8s_name(p.stem): rules_entry(p, groups.get(p.stem)) for p in plans
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
    # KEDA ScaledObjects (spec.autoscaling), in the chart's extraManifests map: keyed by
    # object, so the values files of several services merge (templates/extra-objects.yaml).
    extra = {
        f"{naming.k8s_name(p.stem)}-{kind}": obj
        for p in plans
        for kind, obj in (("scaledobject", scaled_object.scaled_object(p)), ("hpa", hpa.hpa(p)))
        if obj is not None
    }
    if extra:
        values["extraManifests"] = extra
    return values


def _header(sources: Sequence[str], usage: str) -> str:
    return f"{generated_header(', '.join(sources))}\n{usage}"


KPS_USAGE = (
    "Use: helm upgrade --install <release> prometheus-community/kube-prometheus-stack "
    "-f <your values> -f {file}"
)
ADAPTER_USAGE = (
    "Use: helm upgrade --install <release> prometheus-community/prometheus-adapter "
    "-f <your values> -f {file}"
)
SIDECAR_USAGE = (
    "Use: helm upgrade --install <model release> <model chart> -f <your values> -f {file}"
)


def _check_names(plans: Sequence[ServicePlan]) -> None:
    reserved = naming.ALL_SERVICES_VALUES
    clash = [p for p in plans if naming.values_file(p.stem) == reserved]
    if clash:
        raise ObsgenError(
            Diagnostic(
                p.source,
                "metadata.name",
                f"{p.name!r} is reserved: {reserved} holds the values of every service",
            )
            for p in clash
        )


KUBECTL_USAGE = "Use: kubectl apply{namespace} -f {file}"
KUBECTL_LARGE_USAGE = (
    "Use: kubectl apply --server-side{namespace} -f {file}  (too large for client-side "
    "kubectl apply: see docs/install.md, Sizes)"
)


def name_problems(path: str, obj: Obj) -> list[Diagnostic]:
    """The API server's rules for an object's names (:mod:`generator.kube_names`):
    ``metadata.name`` a DNS-1123 subdomain, ``metadata.namespace`` and every
    ``spec.namespaceSelector.matchNames`` entry a DNS-1123 label, every key and value of
    ``metadata.labels`` and ``spec.selector.matchLabels`` a label key and label value.

    The spec refuses each value these come from; this holds the objects to the same rules
    whatever reaches them (a name obsgen derives, a plan built without a spec)."""
    problems = []

    def refuse(where: str, value: object, why: str, expected: str) -> None:
        text = str(value)
        problems.append(
            Diagnostic(
                path,
                where,
                f"{text[:80]!r} ({len(text)} characters) is refused by the API server ({why}); "
                f"expected {expected}; change the spec value it comes from (metadata.name, "
                "spec.selector.namespace, spec.deployment.name or podLabels)",
            )
        )

    meta = obj["metadata"]
    name = str(meta["name"])
    if why := kube_names.dns1123_subdomain(name):
        refuse("metadata.name", name, why, kube_names.SUBDOMAIN_EXPECTED)
    namespace = meta.get("namespace")
    if namespace is not None and (why := kube_names.dns1123_label(str(namespace))):
        refuse("metadata.namespace", namespace, why, kube_names.LABEL_EXPECTED)
    spec = obj.get("spec") or {}
    matched = (spec.get("namespaceSelector") or {}).get("matchNames") or []
    for index, entry in enumerate(matched):
        if why := kube_names.dns1123_label(str(entry)):
            where = f"spec.namespaceSelector.matchNames[{index}]"
            refuse(where, entry, why, kube_names.LABEL_EXPECTED)
    selector = spec.get("selector") or {}
    for where, labels in (
        ("metadata.labels", meta.get("labels") or {}),
        ("spec.selector.matchLabels", selector.get("matchLabels") or {}),
    ):
        for key, value in labels.items():
            if why := kube_names.label_key(str(key)):
                refuse(f"{where}.{key}", key, why, kube_names.LABEL_KEY_EXPECTED)
            if why := kube_names.label_value(str(value)):
                refuse(f"{where}.{key}", value, why, kube_names.LABEL_VALUE_EXPECTED)
    return problems


def _manifest(
    path: str, obj: Obj, sources: Sequence[str], warn: Callable[[Diagnostic], None]
) -> tuple[str, list[Diagnostic]]:
    """A plain manifest file for ``obj``, checked against the API server's limits.

    Returns the file text and the errors found (a ConfigMap over 1 MiB); an object that only
    client-side ``kubectl apply`` cannot take is a warning, and its header names the command
    that works.
    """
    problems = name_problems(path, obj)
    usage = KUBECTL_USAGE
    if obj["kind"] == "ConfigMap":
        size = install_limits.configmap_data_bytes(obj)
        if size > install_limits.CONFIGMAP_DATA_LIMIT:
            problems.append(
                Diagnostic(
                    path,
                    "data",
                    f"{size:,} bytes of dashboard JSON; a ConfigMap holds at most "
                    f"{install_limits.CONFIGMAP_DATA_LIMIT:,}: split the dashboard (fewer "
                    "SLOs or groupBy labels per service)",
                )
            )
    applied = install_limits.client_side_apply_bytes(obj, _as_data)
    if applied > install_limits.ANNOTATIONS_LIMIT:
        usage = KUBECTL_LARGE_USAGE
        warn(
            Diagnostic(
                path,
                "",
                f"client-side `kubectl apply` would store {applied:,} bytes of annotations "
                f"(limit {install_limits.ANNOTATIONS_LIMIT:,}) and be rejected; use "
                f"`kubectl apply --server-side -f {shell_word(path)}` (or `kubectl create` / `kubectl "
                "replace`)",
                Level.WARNING,
            )
        )
    # A dashboard of no service (the fleet overview) goes where Grafana's sidecar looks.
    default = "<grafana namespace>" if obj["kind"] == "ConfigMap" else "<namespace>"
    namespace = "" if obj["metadata"].get("namespace") else f" -n {default}"
    command = usage.format(file=shell_word(path), namespace=namespace)
    header = f"{generated_header(', '.join(sources))}\n{command}"
    return dump_yaml(obj, header=header), problems


def _check_values(
    path: str,
    values: Obj,
    dashboards: Sequence[Dashboard],
    via: str,
    warn: Callable[[Diagnostic], None],
) -> list[Diagnostic]:
    """Errors and warnings for one kube-prometheus-stack values file: the Grafana chart's
    dashboards ConfigMap (``values``: all dashboards of the provider in one) and the overlay's
    share of the Helm release Secret."""
    problems = []
    if via == "values" and dashboards:
        size = sum(len(d.json_text.rstrip("\n").encode("utf-8")) for d in dashboards)
        if size > install_limits.CONFIGMAP_DATA_LIMIT:
            problems.append(
                Diagnostic(
                    path,
                    f"grafana.dashboards.{naming.DASHBOARD_PROVIDER}",
                    f"{size:,} bytes of dashboards; the Grafana chart puts them in one "
                    f"ConfigMap, which holds at most {install_limits.CONFIGMAP_DATA_LIMIT:,}: "
                    "render with dashboardsVia: configmaps (one ConfigMap per dashboard)",
                )
            )
    budget = install_limits.HELM_OVERLAY_BUDGET
    share = install_limits.helm_release_share(values, _as_data, above=budget)
    if share > budget:
        warn(
            Diagnostic(
                path,
                "",
                f"adds about {share:,} bytes or more to every Helm release Secret (limit "
                f"{install_limits.HELM_RELEASE_LIMIT:,} for chart, values and manifest "
                f"together; obsgen's budget {install_limits.HELM_OVERLAY_BUDGET:,}); install "
                "the rules and dashboards from manifests/ instead (docs/install.md, Sizes)",
                Level.WARNING,
            )
        )
    return problems


def _service_files(
    plan: ServicePlan,
    dashboard: Dashboard | None,
    dashboards_via: str,
    groups: Groups | None,
    warn: Callable[[Diagnostic], None],
    problems: list[Diagnostic],
) -> dict[str, str]:
    groups = rule_groups(plan) if groups is None else groups
    own = [dashboard] if dashboard is not None else []
    files: dict[str, str] = {}
    path = naming.values_file(plan.stem)
    values = kps_values([plan], own, dashboards_via, {plan.stem: groups})
    problems.extend(_check_values(path, values, own, dashboards_via, warn))
    files[path] = dump_yaml(
        values, header=_header([plan.source], KPS_USAGE.format(file=shell_word(path)))
    )
    if plan.gpu_source == "sidecar":
        path = naming.sidecar_values_file(plan.stem)
        files[path] = dump_yaml(
            kube.sidecar_values(plan),
            header=_header([plan.source], SIDECAR_USAGE.format(file=shell_word(path))),
        )

    def manifest(path: str, obj: Obj) -> None:
        files[path], found = _manifest(path, obj, [plan.source], warn)
        problems.extend(found)

    manifest(naming.manifest_file(plan.stem, "prometheusrule"), kube.prometheus_rule(plan, groups))
    for monitor in kube.pod_monitors(plan):
        part = monitor["metadata"]["name"].removeprefix(naming.k8s_name(plan.stem) + "-")
        manifest(naming.manifest_file(plan.stem, f"podmonitor-{part}"), monitor)
    for own_dashboard in own:
        manifest(naming.manifest_file(plan.stem, "dashboard"), own_dashboard.configmap())
    scaler = scaled_object.scaled_object(plan)
    if scaler is not None:
        manifest(naming.manifest_file(plan.stem, "scaledobject"), scaler)
    autoscaler = hpa.hpa(plan)
    if autoscaler is not None:
        manifest(naming.manifest_file(plan.stem, "hpa"), autoscaler)
        _adapter_file(files, hpa.adapter_values_file(plan.stem), [plan], [plan.source])
    return files


def _adapter_file(
    files: dict[str, str], path: str, plans: Sequence[ServicePlan], sources: Sequence[str]
) -> None:
    """prometheus-adapter chart values for the HPAs of ``plans`` at ``path`` (none: no file)."""
    values = hpa.adapter_values(plans)
    if values is not None:
        files[path] = dump_yaml(
            values, header=_header(sources, ADAPTER_USAGE.format(file=shell_word(path)))
        )


def _fleet_files(
    plans: Sequence[ServicePlan],
    per_service: Mapping[str, Dashboard],
    shared: Sequence[Dashboard],
    dashboards_via: str,
    groups: Mapping[str, Groups] | None,
    warn: Callable[[Diagnostic], None],
    problems: list[Diagnostic],
) -> dict[str, str]:
    files: dict[str, str] = {}
    sources = sorted(p.source for p in plans)
    for dashboard in shared:
        path = f"manifests/{dashboard.stem}.yaml"
        files[path], found = _manifest(path, dashboard.configmap(), sources, warn)
        problems.extend(found)
    _adapter_file(files, hpa.FLEET_ADAPTER_VALUES, plans, sources)
    path = naming.ALL_SERVICES_VALUES
    everything = [*(per_service[p.stem] for p in plans if p.stem in per_service), *shared]
    values = kps_values(plans, everything, dashboards_via, groups)
    problems.extend(_check_values(path, values, everything, dashboards_via, warn))
    files[path] = dump_yaml(
        values, header=_header(sources, KPS_USAGE.format(file=shell_word(path)))
    )
    return files


def _ignore(_: Diagnostic) -> None:
    return None


def service_overlay(
    plan: ServicePlan,
    dashboard: Dashboard | None,
    dashboards_via: str = "configmaps",
    groups: Groups | None = None,
    warn: Callable[[Diagnostic], None] | None = None,
) -> dict[str, str]:
    """The ``helm/`` and ``manifests/`` files of one service (:func:`naming.owned_by` it).

    ``dashboard``: its own dashboard, if any; ``groups``: its rule groups when already built
    or serialised (:class:`~generator.yamlio.YamlText`), else built here; ``warn``: size
    warnings, as in :func:`overlay_outputs`.

    Raises:
        ObsgenError: its dashboard is too large for the ConfigMap that would carry it (exit 1).
    """
    problems: list[Diagnostic] = []
    files = _service_files(plan, dashboard, dashboards_via, groups, warn or _ignore, problems)
    if problems:
        raise ObsgenError(problems, exit_code=1)
    return files


def fleet_overlay(
    plans: Sequence[ServicePlan],
    per_service: Mapping[str, Dashboard],
    shared: Sequence[Dashboard],
    dashboards_via: str = "configmaps",
    groups: Mapping[str, Groups] | None = None,
    warn: Callable[[Diagnostic], None] | None = None,
) -> dict[str, str]:
    """The files of every service together: :data:`naming.ALL_SERVICES_VALUES` and the
    manifests of ``shared`` dashboards (those of no one service, e.g. the fleet overview).

    ``per_service``: each service's dashboard by name; ``groups``: rule groups by name;
    ``warn``: size warnings, as in :func:`overlay_outputs`.

    Raises:
        ObsgenError: the dashboards are too large for the ConfigMap that would carry them
            (exit 1).
    """
    problems: list[Diagnostic] = []
    files = _fleet_files(
        plans, per_service, shared, dashboards_via, groups, warn or _ignore, problems
    )
    if problems:
        raise ObsgenError(problems, exit_code=1)
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
    plans: Sequence[ServicePlan],
    outputs: Mapping[str, str],
    dashboards_via: str = "configmaps",
    warn: Callable[[Diagnostic], None] | None = None,
) -> dict[str, str]:
    """Every ``helm/`` and ``manifests/`` file for ``plans``, given the other builders' outputs.

    Args:
        plans: all services, sorted by name.
        outputs: the files already rendered (dashboards are taken from here when present).
        dashboards_via: ``configmaps`` (default) or ``values``; see :func:`grafana_values`.
        warn: receives size warnings (:mod:`generator.builders.install_limits`): an object
            only server-side apply can take, an overlay large for a Helm release Secret.

    Raises:
        ValueError: an unknown ``dashboards_via``.
        ObsgenError: a service named like the all-services file (exit 2), or a dashboard
            too large for the ConfigMap that would carry it (exit 1).
    """
    check_overlay(plans, dashboards_via)
    if not plans:
        return {}
    warn = warn or _ignore
    per_service, shared = find_dashboards(plans, outputs)
    files: dict[str, str] = {}
    problems: list[Diagnostic] = []
    for plan in plans:
        files.update(
            _service_files(plan, per_service.get(plan.stem), dashboards_via, None, warn, problems)
        )
    files.update(_fleet_files(plans, per_service, shared, dashboards_via, None, warn, problems))
    if problems:
        raise ObsgenError(problems, exit_code=1)
    return dict(sorted(files.items()))
