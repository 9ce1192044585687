"""Kubernetes objects of one service: PrometheusRule, PodMonitors, dashboard ConfigMap, sidecar.

More: docs/install.md, "Kubernetes objects".
"""

from __future__ import annotations

from typing import Any

from generator import naming
from generator.builders.rulefile import rule_groups
from generator.plan import InstallPlan, ServicePlan
from generator.promql import Matcher
from generator.units import format_duration_ms

Obj = dict[str, Any]

API_MONITORING = "monitoring.coreos.com/v1"


def install(plan: ServicePlan) -> InstallPlan:
    """The plan's install settings (always set by :func:`generator.plan.resolve`).

    Raises:
        ValueError: the plan was built without them (a programming error, not user input).
    """
    if plan.install is None:
        raise ValueError(f"plan {plan.name} has no install settings; build it with resolve()")
    return plan.install


def service_labels(plan: ServicePlan) -> dict[str, str]:
    """The label that names the service on every object obsgen emits, through the chart too
    (``obsgen/service``): kube-prometheus-stack sets every ``app.kubernetes.io/*`` label of
    the objects it renders itself, so the overlay may not repeat any of them."""
    return {naming.SERVICE_OBJECT_LABEL: plan.name}


def common_labels(plan: ServicePlan) -> dict[str, str]:
    """Labels on every plain manifest of ``plan`` (not the ``release`` label: that one selects
    the Prometheus and is added per object)."""
    return {
        "app.kubernetes.io/instance": plan.name,
        "app.kubernetes.io/part-of": naming.PART_OF,
        **service_labels(plan),
    }


def _metadata(plan: ServicePlan, name: str, labels: dict[str, str]) -> Obj:
    meta: Obj = {"name": name}
    if plan.namespace:
        meta["namespace"] = plan.namespace
    meta["labels"] = labels
    return meta


def prometheus_rule(plan: ServicePlan, groups: Any = None) -> Obj:
    """The ``PrometheusRule`` of ``plan``, labelled ``release: <kube-prometheus-stack release>``.

    kube-prometheus-stack's Prometheus selects rules by that label unless its
    ``ruleSelectorNilUsesHelmValues`` is false. ``groups``: the rule groups when already
    built or serialised (a list or :class:`~generator.yamlio.YamlText`), else built here.
    """
    labels = {**common_labels(plan), "release": install(plan).release}
    return {
        "apiVersion": API_MONITORING,
        "kind": "PrometheusRule",
        "metadata": _metadata(plan, naming.k8s_name(plan.stem), labels),
        "spec": {"groups": rule_groups(plan) if groups is None else groups},
    }


def _job_relabeling(matchers: tuple[Matcher, ...]) -> list[Obj]:
    """Set ``job`` to the selector's ``job="…"`` value, so the rules' selectors match the
    targets (prometheus-operator would otherwise name the job ``<namespace>/<podmonitor>``).
    ``$`` is doubled: relabel replacements expand ``$1``-style references."""
    job = next((m.value for m in matchers if m.label == "job" and m.op == "="), None)
    if job is None:
        return []
    return [{"action": "replace", "targetLabel": "job", "replacement": job.replace("$", "$$")}]


def _pod_monitor(plan: ServicePlan, part: str, endpoint: Obj, matchers: tuple[Matcher, ...]) -> Obj:
    settings = install(plan)
    relabel = _job_relabeling(matchers)
    endpoint = {
        **endpoint,
        "interval": format_duration_ms(plan.scrape_interval_ms),
        **({"relabelings": relabel} if relabel else {}),
    }
    namespaces: Obj = {"matchNames": [plan.namespace]} if plan.namespace else {"any": True}
    return {
        "apiVersion": API_MONITORING,
        "kind": "PodMonitor",
        "metadata": _metadata(
            plan,
            naming.k8s_name(plan.stem, part),
            {**common_labels(plan), "release": settings.release},
        ),
        "spec": {
            "namespaceSelector": namespaces,
            "selector": {"matchLabels": dict(settings.pod_labels)},
            "podMetricsEndpoints": [endpoint],
        },
    }


def pod_monitors(plan: ServicePlan) -> list[Obj]:
    """``PodMonitor``s of ``plan``: the model server's metrics port, then (with
    ``gpu.exporter: sidecar``) the NVML sidecar's port.

    With ``spec.roles`` the model's PodMonitor copies the role's pod label onto its targets
    (``podTargetLabels``). Both select the model's pods by ``spec.deployment.podLabels`` in the service namespace
    (``any: true`` when the selector names no namespace); each scrapes only its own port.
    A numeric ``metricsPort`` becomes ``targetPort``, not ``portNumber``: operators before
    v0.79 do not know ``portNumber`` and reject (strict validation) or prune it — and a pruned
    endpoint scrapes every container port of the pod. ``targetPort`` is deprecated upstream but
    declared by every release from v0.65 to the newest, and keeps the same single port.
    """
    settings = install(plan)
    port = settings.metrics_port
    model: Obj = {"port": port} if isinstance(port, str) else {"targetPort": port}
    model["path"] = settings.metrics_path
    monitors = [_pod_monitor(plan, "model", model, plan.matchers)]
    if plan.roles is not None:
        # The role's pod label onto every target (and so every series), sanitised by the
        # operator as generator.roles.series_label writes it: llm-d.ai/role -> llm_d_ai_role.
        monitors[0]["spec"]["podTargetLabels"] = [plan.roles.pod_label]
    if plan.gpu_source == "sidecar":  # dcgm-exporter comes with its own ServiceMonitor
        gpu = {"port": naming.GPU_EXPORTER_PORT_NAME, "path": "/metrics"}
        monitors.append(_pod_monitor(plan, "gpu", gpu, plan.gpu_matchers))
    return monitors


def dashboard_configmap(name: str, file_name: str, json_text: str, namespace: str | None) -> Obj:
    """A ConfigMap the Grafana chart's dashboard sidecar loads (label ``grafana_dashboard: "1"``)
    into the folder named by its ``grafana_folder`` annotation.

    ``json_text`` is the dashboard file's text, unchanged.
    """
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = {
        "app.kubernetes.io/part-of": naming.PART_OF,
        naming.DASHBOARD_LABEL: naming.DASHBOARD_LABEL_VALUE,
    }
    meta["annotations"] = {naming.DASHBOARD_FOLDER_ANNOTATION: naming.DASHBOARD_FOLDER}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta,
        "data": {file_name: json_text},
    }


def _probe(path: str, initial_delay_s: int) -> Obj:
    return {
        "httpGet": {"path": path, "port": naming.GPU_EXPORTER_PORT_NAME},
        "initialDelaySeconds": initial_delay_s,
        "periodSeconds": 10,
        "timeoutSeconds": 2,
        "failureThreshold": 3,
    }


def sidecar_container(plan: ServicePlan) -> Obj:
    """The NVML exporter container for the model's pod (core/v1 ``Container``).

    GPU visibility (``spec.gpu.visibility``):

    * ``shared-claim``: ``resources.claims`` names the pod's DRA resource claim that the model
      container uses, so the sidecar sees exactly the model's devices.
    * ``visible-devices``: ``NVIDIA_VISIBLE_DEVICES`` (``spec.gpu.visibleDevices``) with the
      ``utility`` driver capability only (NVML, no compute libraries).

    Runs as a non-root user with a read-only root filesystem, no privilege escalation and every
    capability dropped. Requests 10m CPU / 48 MiB, limited to 200m / 128 MiB.
    """
    settings = install(plan)
    resources: Obj = {
        "requests": {"cpu": "10m", "memory": "48Mi"},
        "limits": {"cpu": "200m", "memory": "128Mi"},
    }
    container: Obj = {
        "name": naming.GPU_EXPORTER_CONTAINER,
        "image": settings.exporter_image,
        "imagePullPolicy": "IfNotPresent",
        "args": [f"--listen-address=:{naming.GPU_EXPORTER_PORT}", "--log-level=info"],
    }
    if plan.gpu_visibility == "visible-devices":
        container["env"] = [
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": settings.visible_devices},
            {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility"},
        ]
    else:
        resources["claims"] = [{"name": settings.gpu_claim}]
    container.update(
        {
            "ports": [
                {
                    "name": naming.GPU_EXPORTER_PORT_NAME,
                    "containerPort": naming.GPU_EXPORTER_PORT,
                    "protocol": "TCP",
                }
            ],
            "livenessProbe": _probe("/healthz", 5),
            "readinessProbe": _probe("/readyz", 2),
            "resources": resources,
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": 65532,
                "runAsGroup": 65532,
                "readOnlyRootFilesystem": True,
                "allowPrivilegeEscalation": False,
                "privileged": False,
                "capabilities": {"drop": ["ALL"]},
                "seccompProfile": {"type": "RuntimeDefault"},
            },
        }
    )
    return container


def sidecar_values(plan: ServicePlan) -> Obj:
    """Values for the model's own chart: ``[container]`` under ``spec.gpu.valuesPath``
    (dotted: ``a.b`` → ``{a: {b: [...]}}``)."""
    value: Any = [sidecar_container(plan)]
    for part in reversed(plan.gpu_values_path.split(".")):
        value = {part: value}
    result: Obj = value
    return result
