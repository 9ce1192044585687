"""Which of obsgen's objects kube-prometheus-stack's Prometheus and Alertmanager select.

The chart writes the operator's selectors from its values (templates/prometheus/prometheus.yaml,
templates/alertmanager/alertmanager.yaml); the operator loads the PrometheusRules, PodMonitors
and AlertmanagerConfigs whose labels, and whose namespace's labels, match them, and (matcher
strategy ``OnNamespace``, its default) adds ``namespace=<ns>`` to each AlertmanagerConfig's top
route. :func:`check_selection` models what obsgen.yaml's ``install`` declares, the chart's
defaults otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from generator import naming
from generator.builders import alertmanager, kube, overlay
from generator.builders.alertmanager_routing import alert_labels
from generator.builders.chart_names import CHART_NAME
from generator.errors import Diagnostic, Level, ObsgenError
from generator.plan import ServicePlan
from generator.project_config import CONFIG_FILE, InstallConfig, LabelSelector
from generator.receivers import EMPTY

# Set by the API server on every namespace (Kubernetes 1.21+): the one namespace label obsgen
# knows without asking the cluster.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
PROMETHEUS_SPEC = "install.prometheus.prometheusSpec"
ALERTMANAGER_SPEC = "install.alertmanager.alertmanagerSpec"


@dataclass(frozen=True)
class Requirement:
    """One condition of a label selector (Kubernetes' ``LabelSelector`` semantics).

    Attributes:
        path: where it is written in the selector (``matchLabels.team``,
            ``matchExpressions[0]``).
        key: the label it reads.
        operator: ``In``, ``NotIn``, ``Exists`` or ``DoesNotExist`` (``matchLabels``: ``In``).
        values: the values ``In``/``NotIn`` compare with.
        text: the condition as a person writes it (``team=ml``, ``tier In [a, b]``).
    """

    path: str
    key: str
    operator: str
    values: tuple[str, ...]
    text: str

    def met(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy it (``NotIn`` holds for a label that is absent)."""
        value = labels.get(self.key)
        if self.operator == "In":
            return value is not None and value in self.values
        if self.operator == "NotIn":
            return value is None or value not in self.values
        return (value is not None) == (self.operator == "Exists")


def requirements(selector: LabelSelector) -> list[Requirement]:
    """The conditions of ``selector``; an empty selector has none and selects every object."""
    found = [
        Requirement(f"matchLabels.{k}", k, "In", (v,), f"{k}={v}")
        for k, v in sorted(selector.match_labels.items())
    ]
    for i, e in enumerate(selector.match_expressions):
        shown = f" [{', '.join(e.values)}]" if e.values else ""
        found.append(
            Requirement(
                f"matchExpressions[{i}]",
                e.key,
                e.operator,
                e.values,
                f"{e.key} {e.operator}{shown}",
            )
        )
    return found


def _written(selector: LabelSelector | None) -> bool:
    """True when the chart's ``{{- if .Values…Selector }}`` holds: a non-empty mapping."""
    return selector is not None and bool(selector.model_fields_set)


def _release_selector(release: str) -> LabelSelector:
    return LabelSelector.model_validate({"matchLabels": {"release": release}})


def rule_selector(install: InstallConfig, release: str) -> LabelSelector | None:
    """``ruleSelector`` as templates/prometheus/prometheus.yaml writes it: the one in the
    values; else, with ``ruleSelectorNilUsesHelmValues``, ``release: <release>``; else ``{}``
    (every rule) for ``{}`` and nothing for ``null``, which the operator reads as selecting no
    PrometheusRule (returned as None)."""
    spec = install.prometheus.prometheus_spec
    if _written(spec.rule_selector):
        return spec.rule_selector
    if spec.rule_selector_nil_uses_helm_values:
        return _release_selector(release)
    return None if spec.rule_selector is None else LabelSelector()


def pod_monitor_selector(install: InstallConfig, release: str) -> LabelSelector:
    """``podMonitorSelector`` as the same template writes it (``{}`` when neither is set)."""
    spec = install.prometheus.prometheus_spec
    if _written(spec.pod_monitor_selector) and spec.pod_monitor_selector is not None:
        return spec.pod_monitor_selector
    if spec.pod_monitor_selector_nil_uses_helm_values:
        return _release_selector(release)
    return LabelSelector()


def _or_every(selector: LabelSelector | None) -> LabelSelector:
    """A namespace selector the template writes as itself, or as ``{}`` when unset."""
    return selector if _written(selector) and selector is not None else LabelSelector()


def chart_labels(install: InstallConfig, release: str) -> dict[str, str]:
    """The labels kube-prometheus-stack puts on what it renders (``app`` and the
    ``kube-prometheus-stack.labels`` helper of templates/_helpers.tpl), but ``chart`` and
    ``app.kubernetes.io/version``, whose values name the chart version."""
    name = (install.name_override or CHART_NAME)[:63]
    return {
        "app": name,
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/instance": release,
        "app.kubernetes.io/part-of": name,
        "release": release,
        "heritage": "Helm",
    }


@dataclass(frozen=True)
class Selected:
    """An object obsgen writes and the selectors that must pick it.

    Attributes:
        file / path: where its labels are written (an output file and the field in it).
        kind: its kind, for messages.
        labels: its labels once installed.
        namespace: its namespace once installed (None: not known).
        selector / selector_key: the object selector (None: selects nothing) and its key.
        namespace_selector / namespace_key: the namespace selector (None: only the
            selecting server's own namespace) and its key.
        source: the spec it comes from.
        chart: True for an entry of the chart's values (labelled by the chart).
    """

    file: str
    path: str
    kind: str
    labels: Mapping[str, str]
    namespace: str | None
    selector: LabelSelector | None
    selector_key: str
    namespace_selector: LabelSelector | None
    namespace_key: str
    source: str
    chart: bool = False


def label_fix(obj: Selected, unmet: Sequence[Requirement]) -> str:
    """What to change so that ``obj`` carries what ``unmet`` asks for."""
    wanted = {r.key: r.values[0] for r in unmet if r.operator == "In" and len(r.values) == 1}
    if obj.chart:
        return (
            f"the chart labels it release={obj.labels.get('release')} and with its "
            "commonLabels: set install.release to the release you install, or set the label "
            f"under commonLabels in your chart values and in install.commonLabels ({CONFIG_FILE})"
            ", or select on a label it has"
        )
    if set(wanted) == {r.key for r in unmet} == {"release"}:
        return f"set spec.prometheus.release: {wanted['release']} in {obj.source}"
    return (
        "select on a label obsgen writes (release from spec.prometheus.release, "
        "app.kubernetes.io/part-of=obsgen, obsgen/service) or add the label on install "
        "(kustomize `labels:`)"
    )


def selected_objects(
    plan: ServicePlan, install: InstallConfig, outputs: Sequence[str]
) -> Iterator[Selected]:
    """Every object of ``plan`` the operator must select, for the install paths in
    ``outputs`` (render.outputs): manifests/ and the Helm values' entries."""
    spec = install.prometheus.prometheus_spec
    am = install.alertmanager.alertmanager_spec
    own = plan.install.release if plan.install is not None else CHART_NAME
    release = install.release or own
    rules_key, monitors_key = (
        f"{PROMETHEUS_SPEC}.ruleSelector",
        f"{PROMETHEUS_SPEC}.podMonitorSelector",
    )
    rules_ns = f"{PROMETHEUS_SPEC}.ruleNamespaceSelector"
    monitors_ns = f"{PROMETHEUS_SPEC}.podMonitorNamespaceSelector"
    rules, monitors = rule_selector(install, release), pod_monitor_selector(install, release)
    if "manifests" in outputs:
        rule = kube.prometheus_rule(plan, [])
        yield Selected(
            naming.manifest_file(plan.stem, "prometheusrule"), "metadata.labels",
            "PrometheusRule", rule["metadata"]["labels"], plan.namespace, rules, rules_key,
            _or_every(spec.rule_namespace_selector), rules_ns, plan.source,
        )  # fmt: skip
        for monitor in kube.pod_monitors(plan):
            part = monitor["metadata"]["name"].removeprefix(naming.k8s_name(plan.stem) + "-")
            yield Selected(
                naming.manifest_file(plan.stem, f"podmonitor-{part}"), "metadata.labels",
                "PodMonitor", monitor["metadata"]["labels"], plan.namespace, monitors,
                monitors_key, _or_every(spec.pod_monitor_namespace_selector), monitors_ns,
                plan.source,
            )  # fmt: skip
    if "manifests" in outputs and plan.namespace:
        config = alertmanager.alertmanager_config(plan, EMPTY)
        yield Selected(
            naming.manifest_file(plan.stem, "alertmanagerconfig"), "metadata.labels",
            "AlertmanagerConfig", config["metadata"]["labels"], plan.namespace,
            _or_every(am.alertmanager_config_selector),
            f"{ALERTMANAGER_SPEC}.alertmanagerConfigSelector",
            am.alertmanager_config_namespace_selector,
            f"{ALERTMANAGER_SPEC}.alertmanagerConfigNamespaceSelector", plan.source,
        )  # fmt: skip
    chart_files = [
        f
        for kind, f in (
            ("helm", naming.ALL_SERVICES_VALUES),
            ("helm-per-service", naming.values_file(plan.stem)),
        )
        if kind in outputs
    ]
    if not chart_files:
        return
    base = {**chart_labels(install, release), **install.common_labels}
    key = naming.k8s_name(plan.stem)
    entry = overlay.rules_entry(plan, [])
    yield Selected(
        chart_files[0], f"additionalPrometheusRulesMap.{key}.additionalLabels", "PrometheusRule",
        {**base, **entry["additionalLabels"]}, install.namespace, rules, rules_key,
        _or_every(spec.rule_namespace_selector), rules_ns, plan.source, True,
    )  # fmt: skip
    for monitor in kube.pod_monitors(plan):
        added = overlay.pod_monitor_entry(monitor)["additionalLabels"]
        yield Selected(
            chart_files[0],
            f"prometheus.additionalPodMonitors[name={monitor['metadata']['name']}].additionalLabels",
            "PodMonitor", {**base, **added}, install.namespace, monitors, monitors_key,
            _or_every(spec.pod_monitor_namespace_selector), monitors_ns, plan.source, True,
        )  # fmt: skip


def _object_problems(obj: Selected) -> list[Diagnostic]:
    if obj.selector is None:
        return [
            Diagnostic(
                CONFIG_FILE,
                obj.selector_key,
                f"null with ruleSelectorNilUsesHelmValues: false: the chart writes no "
                f"selector and the operator loads no {obj.kind} at all ({obj.file} included); "
                "write {} (every object) or a selector",
            )
        ]
    templated = [r for r in requirements(obj.selector) if any("{{" in v for v in r.values)]
    if templated:
        return [
            Diagnostic(
                CONFIG_FILE,
                f"{obj.selector_key}.{r.path}",
                f"{r.text} is a Helm template (the chart expands it with tpl; obsgen does not): "
                "write the value it renders to, e.g. the release name",
            )
            for r in templated
        ]
    unmet = [r for r in requirements(obj.selector) if not r.met(obj.labels)]
    if not unmet:
        return []
    needs = ", ".join(f"{r.text} ({obj.selector_key}.{r.path})" for r in unmet)
    return [
        Diagnostic(
            obj.file,
            obj.path,
            f"the operator would not load this {obj.kind}: its selector needs {needs}, and its "
            f"labels are {dict(sorted(obj.labels.items()))}; {label_fix(obj, unmet)}",
        )
    ]


def _label_command(namespace: str, r: Requirement) -> str:
    if r.operator == "In" and len(r.values) == 1:
        return f": kubectl label namespace {namespace} {r.key}={r.values[0]}"
    return ""


def _namespace_problems(obj: Selected, install: InstallConfig) -> list[Diagnostic]:
    if obj.namespace is None:
        return []
    where = f"{obj.file} ({obj.kind} in namespace {obj.namespace!r})"
    if obj.namespace_selector is None:
        if install.namespace is None:
            return [
                Diagnostic(
                    CONFIG_FILE,
                    obj.namespace_key,
                    f"null: the operator reads only its own namespace; {where} is selected "
                    "only if that is the release's. Set install.namespace, or write {} (every "
                    "namespace) or a selector",
                    Level.WARNING,
                )
            ]
        if install.namespace == obj.namespace:
            return []
        return [
            Diagnostic(
                CONFIG_FILE,
                obj.namespace_key,
                f"null: the operator reads only the release's namespace "
                f"{install.namespace!r}, so {where} is never loaded; write {{}} (every "
                "namespace) or a selector that matches it",
            )
        ]
    known = {NAMESPACE_NAME_LABEL: obj.namespace}
    found = []
    for r in requirements(obj.namespace_selector):
        key = f"{obj.namespace_key}.{r.path}"
        if r.key == NAMESPACE_NAME_LABEL:
            if not r.met(known):
                found.append(
                    Diagnostic(
                        CONFIG_FILE,
                        key,
                        f"{r.text} does not select namespace {obj.namespace!r}: {where} is "
                        "never loaded; add the namespace to the selector",
                    )
                )
            continue
        found.append(
            Diagnostic(
                CONFIG_FILE,
                key,
                f"{where} is loaded only if namespace {obj.namespace!r} satisfies {r.text} "
                f"(obsgen cannot see namespace labels){_label_command(obj.namespace, r)}",
                Level.WARNING,
            )
        )
    return found


def strategy_problems(
    plan: ServicePlan, install: InstallConfig, labels: Sequence[Mapping[str, str]]
) -> list[Diagnostic]:
    """Problems of the AlertmanagerConfig's scope under ``alertmanagerConfigMatcherStrategy``:
    with a namespace matcher (``OnNamespace``; ``…ExceptForAlertmanagerNamespace`` outside the
    release namespace) an alert among ``labels`` (each alert's fixed labels) without
    ``namespace=<ns>`` reaches none of its receivers (error); without one, its ``service``
    matcher also takes the alerts of a service of the same name in every other namespace
    (warning)."""
    if not plan.namespace:
        return []
    strategy = install.alertmanager.alertmanager_spec.alertmanager_config_matcher_strategy.type
    key = f"{ALERTMANAGER_SPEC}.alertmanagerConfigMatcherStrategy.type"
    path = naming.manifest_file(plan.stem, "alertmanagerconfig")
    scoped = strategy == "OnNamespace" or (
        strategy == "OnNamespaceExceptForAlertmanagerNamespace"
        and install.namespace != plan.namespace
    )
    if scoped:
        lost = sorted(
            {ls.get("alertname", "?") for ls in labels if ls.get("namespace") != plan.namespace}
        )
        if not lost:
            return []
        return [
            Diagnostic(
                path,
                "spec.route",
                f"the operator adds namespace={plan.namespace} to this route ({key} "
                f"{strategy}); {', '.join(lost)} carry no such label and would reach no "
                "receiver of it: give the alerts the namespace label (the service's "
                "spec.selector.namespace)",
            )
        ]
    return [
        Diagnostic(
            path,
            "spec.route",
            f"{key} {strategy}: the operator adds no namespace matcher, so this route also "
            f"takes the alerts of any service named {plan.name!r} in other namespaces (another "
            "team's); use OnNamespace",
            Level.WARNING,
        )
    ]


def check_selection(
    plans: Sequence[ServicePlan],
    install: InstallConfig,
    outputs: Sequence[str],
    warn: Callable[[Diagnostic], None],
) -> None:
    """Refuse objects the declared (or default) selectors would not load, what the matcher
    strategy would lose, and an AlertmanagerConfig name or label the API server refuses; warn
    where it depends on what obsgen cannot see (namespace labels).

    Raises:
        ObsgenError: an object no selector would load, or alerts the strategy drops (exit 2).
    """
    errors: list[Diagnostic] = []
    seen: set[tuple[str, str, str]] = set()
    for plan in plans:
        found = [
            *(p for obj in selected_objects(plan, install, outputs) for p in _object_problems(obj)),
            *(
                p
                for obj in selected_objects(plan, install, outputs)
                for p in _namespace_problems(obj, install)
            ),
        ]
        if "manifests" in outputs and plan.namespace:
            found += strategy_problems(plan, install, list(alert_labels(plan)))
            # its name and labels, against the API server's limits like every other manifest
            path = naming.manifest_file(plan.stem, "alertmanagerconfig")
            found += overlay.name_problems(path, alertmanager.alertmanager_config(plan, EMPTY))
        for problem in found:
            if (problem.file, problem.path, problem.message) in seen:
                continue
            seen.add((problem.file, problem.path, problem.message))
            (errors.append if problem.level is Level.ERROR else warn)(problem)
    if errors:
        raise ObsgenError(errors)
