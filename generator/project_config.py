"""The optional project config file ``obsgen.yaml`` at the repository root.

It holds choices that belong to the repository rather than to one service or one command line,
so that every ``obsgen render`` and ``obsgen render --check`` agree. Each top-level section
belongs to the feature that reads it; unknown sections and keys are errors (a misspelt key
must not silently fall back to a default). docs/config.md describes every field, with an
example.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, ValidationError, field_validator, model_validator

from generator.errors import Diagnostic, ObsgenError
from generator.spec import DnsLabel, StrictModel, parse_yaml, validation_diagnostics

CONFIG_FILE = "obsgen.yaml"
# YAML reads sequences as lists; the frozen models hold tuples (strict mode converts nothing).
_AS_TUPLE = BeforeValidator(lambda value: tuple(value) if isinstance(value, list) else value)
DASHBOARDS_VIA = ("configmaps", "values")
OutputKind = Literal[
    "rules",
    "tests",
    "dashboards",
    "helm",
    "helm-per-service",
    "manifests",
    "runbooks",
    "alertmanager",
    "mimir",
]
DEFAULT_OUTPUTS: tuple[OutputKind, ...] = (
    "rules",
    "tests",
    "dashboards",
    "helm",
    "helm-per-service",
    "manifests",
    "runbooks",
    "alertmanager",
)


class RenderConfig(StrictModel):
    """``render``: how ``obsgen render`` installs what it renders.

    Attributes:
        dashboards_via: ``configmaps`` (sidecar ConfigMaps in manifests/) or ``values``
            (inline under ``grafana.dashboards`` of the Helm overlay); docs/install.md.
        fleet_name: a DNS label naming this repository's fleet overview in Grafana (its uid,
            title and ConfigMap). Default: the namespaces of its services; set it when two
            repositories share a namespace or when adding a namespace must not move the
            dashboard.
        outputs: the install paths written (:data:`generator.naming.OUTPUT_KINDS`); default
            :data:`DEFAULT_OUTPUTS` (all but ``mimir``). ``rules`` is required (every other
            path is checked against it); ``dashboards`` too with ``dashboardsVia: values``.
            Files of a path left out are still built and proved, not written (the promtool
            tests, neither written nor run, are not built).
    """

    dashboards_via: Literal["configmaps", "values"] = "configmaps"
    fleet_name: DnsLabel | None = None
    outputs: Annotated[tuple[OutputKind, ...], _AS_TUPLE] = DEFAULT_OUTPUTS

    @field_validator("outputs")
    @classmethod
    def _known_once(cls, value: tuple[OutputKind, ...]) -> tuple[OutputKind, ...]:
        twice = sorted({v for v in value if value.count(v) > 1})
        if twice:
            raise ValueError(f"lists {', '.join(twice)} twice")
        if "rules" not in value:
            raise ValueError(
                "must list rules: the rule files are what every other install path is built "
                "and checked from"
            )
        return value

    @model_validator(mode="after")
    def _dashboards_for_values(self) -> RenderConfig:
        if self.dashboards_via == "values" and "dashboards" not in self.outputs:
            raise ValueError(
                "outputs: must list dashboards with dashboardsVia: values (the values files "
                "are built from the dashboards)"
            )
        return self


class SelectorRequirement(StrictModel):
    """One ``matchExpressions`` entry of a Kubernetes label selector."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: Annotated[tuple[str, ...], _AS_TUPLE] = ()


class LabelSelector(StrictModel):
    """A Kubernetes label selector as the chart's values write it (``{}``: every object)."""

    match_labels: dict[str, str] = Field(default_factory=dict)
    match_expressions: Annotated[tuple[SelectorRequirement, ...], _AS_TUPLE] = ()


class PrometheusSpecConfig(StrictModel):
    """``install.prometheus.prometheusSpec``: the chart values that choose which
    PrometheusRules and PodMonitors its Prometheus loads; defaults are the chart's. A selector
    written ``null`` is kept as None (the templates treat it unlike ``{}``)."""

    rule_selector_nil_uses_helm_values: bool = True
    rule_selector: LabelSelector | None = LabelSelector()
    rule_namespace_selector: LabelSelector | None = LabelSelector()
    pod_monitor_selector_nil_uses_helm_values: bool = True
    pod_monitor_selector: LabelSelector | None = LabelSelector()
    pod_monitor_namespace_selector: LabelSelector | None = LabelSelector()


class PrometheusValues(StrictModel):
    """``install.prometheus``: as the chart's ``prometheus:`` values."""

    prometheus_spec: PrometheusSpecConfig = PrometheusSpecConfig()


class MatcherStrategy(StrictModel):
    """``alertmanagerConfigMatcherStrategy``; the operator's default is ``OnNamespace``."""

    type: Literal["OnNamespace", "OnNamespaceExceptForAlertmanagerNamespace", "None"] = (
        "OnNamespace"
    )


class AlertmanagerSpecConfig(StrictModel):
    """``install.alertmanager.alertmanagerSpec``: the chart values that choose which
    AlertmanagerConfigs its Alertmanager merges and how it scopes them; chart defaults."""

    alertmanager_config_selector: LabelSelector | None = LabelSelector()
    alertmanager_config_namespace_selector: LabelSelector | None = LabelSelector()
    alertmanager_config_matcher_strategy: MatcherStrategy = MatcherStrategy()


class AlertmanagerValues(StrictModel):
    """``install.alertmanager``: as the chart's ``alertmanager:`` values."""

    alertmanager_spec: AlertmanagerSpecConfig = AlertmanagerSpecConfig()


class InstallConfig(StrictModel):
    """``install``: the kube-prometheus-stack release the overlay goes into, for the names
    the chart derives from it (:mod:`generator.builders.chart_names`).

    Attributes:
        release: the Helm release name; unset: the common release names are checked, and a
            collision is a warning instead of an error.
        namespace: the release's namespace (where the chart's PrometheusRules and its
            Alertmanager live); unset: not known, the checks that need it are skipped.
        fullname_override / name_override: the chart's ``fullnameOverride`` /
            ``nameOverride``, when your values set them.
        common_labels: the chart's ``commonLabels``, when your values set them.
        prometheus / alertmanager: the chart values that select obsgen's objects
            (:mod:`generator.builders.operator_selection`), at their chart paths.
    """

    release: DnsLabel | None = None
    namespace: DnsLabel | None = None
    fullname_override: DnsLabel | None = None
    name_override: DnsLabel | None = None
    common_labels: dict[str, str] = Field(default_factory=dict)
    prometheus: PrometheusValues = PrometheusValues()
    alertmanager: AlertmanagerValues = AlertmanagerValues()


class ProjectConfig(StrictModel):
    """The whole ``obsgen.yaml``; every section optional."""

    render: RenderConfig = RenderConfig()
    install: InstallConfig = InstallConfig()


def config_path(root: Path) -> Path:
    """Where the project config of the repository at ``root`` lives."""
    return root / CONFIG_FILE


def load_project_config(root: Path) -> ProjectConfig:
    """Read ``<root>/obsgen.yaml``; defaults when the file does not exist.

    Raises:
        ObsgenError: unreadable, not UTF-8, invalid YAML (duplicate keys included), an unknown
            section or key, or a bad value — one ``obsgen.yaml: field: message`` line each
            (exit code 2).
    """
    path = config_path(root)
    shown = CONFIG_FILE if root.resolve() == Path.cwd().resolve() else str(path)
    if not path.exists():
        return ProjectConfig()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ObsgenError([Diagnostic(shown, "", "not a UTF-8 text file")]) from None
    except OSError as err:
        raise ObsgenError([Diagnostic(shown, "", f"cannot read: {err.strerror or err}")]) from None
    data = parse_yaml(text, shown)
    if data is None:
        return ProjectConfig()
    if not isinstance(data, dict):
        raise ObsgenError([Diagnostic(shown, "", "expected a mapping of sections (render: …)")])
    try:
        return ProjectConfig.model_validate(data)
    except ValidationError as err:
        raise ObsgenError(validation_diagnostics(shown, err, ProjectConfig)) from None


def recorded_text(render: RenderConfig) -> str:
    """A new ``obsgen.yaml`` recording ``render`` (the fields that differ from the defaults)."""
    lines = [
        "# obsgen project settings (docs/config.md). `obsgen render` and `obsgen render --check`",
        "# both read this file, so they render the same way.",
        "render:",
    ]
    if render.dashboards_via != RenderConfig().dashboards_via:
        lines.append(f"  dashboardsVia: {render.dashboards_via}")
    if render.fleet_name is not None:
        lines.append(f"  fleetName: {render.fleet_name}")
    if render.outputs != DEFAULT_OUTPUTS:
        lines.append(f"  outputs: [{', '.join(render.outputs)}]")
    return "\n".join(lines) + "\n"
