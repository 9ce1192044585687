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

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from generator import kube_names
from generator.errors import Diagnostic, ObsgenError
from generator.kube_names import LABEL_KEY_EXPECTED
from generator.spec import (
    DnsLabel,
    DurationMs,
    LabelName,
    StrictModel,
    parse_yaml,
    validation_diagnostics,
)
from generator.spec_types import keyed_error

CONFIG_FILE = "obsgen.yaml"


def _kube_labels(labels: dict[str, str]) -> dict[str, str]:
    """Kubernetes label keys and values (the chart's ``commonLabels``, on every object it
    renders): what the API server would refuse is refused here, at the key."""
    for key, value in labels.items():
        why = kube_names.label_key(key)
        if why is not None:
            raise keyed_error(
                key, f"{key!r} is not a Kubernetes label key ({why}); expected {LABEL_KEY_EXPECTED}"
            )
        why = kube_names.label_value(value)
        if why is not None:
            raise keyed_error(
                key,
                f"{value!r} is not a Kubernetes label value ({why}); expected "
                f"{kube_names.LABEL_VALUE_EXPECTED}",
            )
    return labels


KubeLabels = Annotated[dict[str, str], AfterValidator(_kube_labels)]

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
InstallPath = Literal["rules", "manifests", "helm"]
FULL_OUTPUTS: tuple[OutputKind, ...] = (
    "rules",
    "tests",
    "dashboards",
    "helm",
    "helm-per-service",
    "manifests",
    "runbooks",
    "alertmanager",
)
"""The layout every render wrote before ``render.install`` existed (``render.outputs`` listing
these keeps it): every install path, the same rule text in four of them, and the promtool tests."""
LEAN_OUTPUTS: dict[str, tuple[OutputKind, ...]] = {
    "rules": ("rules", "dashboards", "runbooks", "alertmanager"),
    "manifests": ("manifests", "runbooks", "alertmanager"),
    "helm": ("helm", "dashboards", "runbooks", "alertmanager"),
}
"""What each ``render.install`` writes: one install path of the rules (the rule files, the
PrometheusRule manifests or the kube-prometheus-stack values: each rule's text once), the
dashboards (as JSON, or inside the manifests' ConfigMaps), the runbooks and the Alertmanager
routing. The promtool tests are proof, not output: built and run by every render that proves."""
DEFAULT_INSTALL: InstallPath = "rules"
DEFAULT_OUTPUTS: tuple[OutputKind, ...] = LEAN_OUTPUTS[DEFAULT_INSTALL]
"""The install paths written by a repository whose obsgen.yaml chooses nothing."""
# Install paths that carry the rules themselves: a project writes at least one.
_RULE_PATHS = ("rules", "manifests", "helm", "helm-per-service", "mimir")


class RenderConfig(StrictModel):
    """``render``: how ``obsgen render`` installs what it renders.

    Attributes:
        dashboards_via: ``configmaps`` (sidecar ConfigMaps in manifests/) or ``values``
            (inline under ``grafana.dashboards`` of the Helm overlay); docs/install.md.
        fleet_name: a DNS label naming this repository's fleet overview in Grafana (its uid,
            title and ConfigMap). Default: the namespaces of its services; set it when two
            repositories share a namespace or when adding a namespace must not move the
            dashboard.
        install: the one install path of the rules written (:data:`LEAN_OUTPUTS`); default
            ``rules`` (``helm`` with ``dashboards_via`` ``values``), when ``outputs`` is unset
            too.
        write_tests: also write the promtool tests ``rules/*.test.yaml`` (for a pipeline that
            runs ``promtool test rules`` itself); with ``install`` only.
        outputs: the install paths written, listed one by one
            (:data:`generator.naming.OUTPUT_KINDS`; :data:`FULL_OUTPUTS` is the layout before
            ``install``); instead of ``install``. At least one path carrying the rules.
        Files of a path left out are still built and proved, not written: the rule files are
        built and checked whatever is written (every other path is checked against them), and
        the promtool tests are built and run by every render that proves (with
        ``--skip-promtool`` and the tests not written, they are not built at all).
    """

    dashboards_via: Literal["configmaps", "values"] = "configmaps"
    fleet_name: DnsLabel | None = None
    install: InstallPath | None = None
    write_tests: bool = False
    outputs: Annotated[tuple[OutputKind, ...], _AS_TUPLE] | None = None

    @field_validator("outputs")
    @classmethod
    def _known_once(cls, value: tuple[OutputKind, ...] | None) -> tuple[OutputKind, ...] | None:
        if value is None:
            return value
        twice = sorted({v for v in value if value.count(v) > 1})
        if twice:
            raise ValueError(f"lists {', '.join(twice)} twice")
        if not set(value) & set(_RULE_PATHS):
            raise ValueError(
                "must list an install path of the rules (rules, manifests, helm, "
                "helm-per-service or mimir): nothing would install the alerts"
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> RenderConfig:
        if self.outputs is not None and self.install is not None:
            raise ValueError(
                "install: and outputs: are two ways to say what is written; set one (install: "
                "rules, manifests or helm; outputs: the old list of install paths)"
            )
        if self.outputs is not None and self.write_tests:
            raise ValueError("writeTests: goes with install:; with outputs:, list tests there")
        if "tests" in self.kinds and "rules" not in self.kinds:
            where = f"install: {self.install_path}" if self.outputs is None else "outputs:"
            raise ValueError(
                "the written tests (writeTests, or tests in outputs) name the rule files "
                f"rules/<service>.rules.yaml, which {where} does not write, so `promtool test "
                "rules` could not run them; use install: rules, or list rules with tests in "
                "outputs"
            )
        if self.dashboards_via == "values":
            if self.outputs is None and self.install_path != "helm":
                raise ValueError(
                    "dashboardsVia: values installs the dashboards through the Helm values, "
                    f"which install: {self.install_path} does not write; use install: helm"
                )
            if "dashboards" not in self.kinds:
                raise ValueError(
                    "outputs: must list dashboards with dashboardsVia: values (the values "
                    "files are built from the dashboards)"
                )
        return self

    @property
    def install_path(self) -> str | None:
        """The chosen ``install`` (when neither it nor ``outputs`` is set: ``rules``, or
        ``helm`` with ``dashboardsVia: values``); None with ``outputs``."""
        if self.outputs is not None:
            return None
        if self.install is None and self.dashboards_via == "values":
            return "helm"  # the only install path that carries dashboards in values
        return self.install or DEFAULT_INSTALL

    @property
    def kinds(self) -> tuple[OutputKind, ...]:
        """The install paths written: ``outputs``, or those of ``install`` (and the tests
        with ``write_tests``)."""
        if self.outputs is not None:
            return self.outputs
        lean = LEAN_OUTPUTS[self.install_path or DEFAULT_INSTALL]
        return (*lean, "tests") if self.write_tests else lean


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
    common_labels: KubeLabels = Field(default_factory=dict)
    prometheus: PrometheusValues = PrometheusValues()
    alertmanager: AlertmanagerValues = AlertmanagerValues()


DEFAULT_REPLICA_LABELS: tuple[str, ...] = ("prometheus_replica", "replica")
"""The replica labels of HA pairs: prometheus-operator's external label (``replicaExternalLabelName``
default) and the one Thanos/Mimir examples use."""
TARGET_COPY_LABELS: tuple[str, ...] = ("job", "endpoint", "instance")
"""Labels in which two scrape configurations' copies of one pod's series differ."""


class RulerConfig(StrictModel):
    """``ruler``: what the engine that evaluates the rules already provides (docs/scale-out.md,
    "What the ruler must provide").

    Attributes:
        deduplication: where copies of one series (HA replicas, a target scraped by two scrape
            configurations) become one. ``querier`` (default: the ruler's querier
            deduplicates, e.g. Thanos ``--query.replica-label``; rules unchanged), ``ingest``
            (Mimir's HA tracker, VictoriaMetrics ``-dedup.minScrapeInterval``: rules unchanged)
            or ``rules`` (obsgen's rules collapse the copies themselves:
            :mod:`generator.dedup`).
        replica_labels: the labels that tell HA replicas apart (``rules`` mode collapses them
            and :data:`TARGET_COPY_LABELS`).
        evaluation_delay: the ruler reads remote-written data this late: every rule group gets
            ``query_offset`` (Prometheus 2.53+, Mimir's ruler) unless a spec sets
            ``spec.prometheus.queryOffset`` itself. Whole minutes, 1m to 1h.
    """

    deduplication: Literal["querier", "ingest", "rules"] = "querier"
    replica_labels: Annotated[tuple[LabelName, ...], _AS_TUPLE] = DEFAULT_REPLICA_LABELS
    evaluation_delay: DurationMs | None = None

    @field_validator("replica_labels")
    @classmethod
    def _replica_labels(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("expected at least one label (default: prometheus_replica, replica)")
        twice = sorted({v for v in value if value.count(v) > 1})
        if twice:
            raise ValueError(f"lists {', '.join(twice)} twice")
        taken = sorted(set(value) & {"namespace", "pod", "container", "le", "__name__"})
        if taken:
            raise ValueError(
                f"{', '.join(taken)} name what a series is, not which copy it is; list only "
                "the labels in which HA replicas differ (e.g. prometheus_replica)"
            )
        return value

    @field_validator("evaluation_delay")
    @classmethod
    def _whole_minutes(cls, ms: int | None) -> int | None:
        if ms is not None and (ms <= 0 or ms % 60_000 or ms > 3_600_000):
            raise ValueError(
                "expected whole minutes from 1m to 1h (e.g. 1m, 2m): the generated tests step "
                "every minute"
            )
        return ms

    @property
    def copy_labels(self) -> tuple[str, ...]:
        """The labels ``rules`` mode collapses: the replica labels and the target labels of a
        second scrape configuration, sorted."""
        return tuple(sorted({*self.replica_labels, *TARGET_COPY_LABELS}))


class ProjectConfig(StrictModel):
    """The whole ``obsgen.yaml``; every section optional."""

    render: RenderConfig = RenderConfig()
    install: InstallConfig = InstallConfig()
    ruler: RulerConfig = RulerConfig()


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
    if render.install is not None:
        lines.append(f"  install: {render.install}")
    if render.write_tests:
        lines.append("  writeTests: true")
    if render.outputs is not None:
        lines.append(f"  outputs: [{', '.join(render.outputs)}]")
    return "\n".join(lines) + "\n"
