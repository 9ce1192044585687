"""What kube-prometheus-stack's Prometheus and Alertmanager select of obsgen's objects.

The model (generator/builders/operator_selection.py) is checked against the vendored chart's
templates and defaults (tests/data/kube-prometheus-stack: Helm is not run here, so the
templates' text is what is tested), then each selector a user may declare in obsgen.yaml's
``install`` section: an object it would not load is an error naming the file, the field and the
fix; what depends on namespace labels obsgen cannot see is a warning.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import naming
from generator.builders import alertmanager, operator_selection
from generator.builders.alertmanager_routing import alert_labels
from generator.cli import main
from generator.errors import Diagnostic, Level, ObsgenError
from generator.plan import ServicePlan, resolve
from generator.project_config import InstallConfig, LabelSelector, ProjectConfig
from generator.receivers import EMPTY
from generator.render import find_specs, load_plans
from generator.spec import parse_spec
from tests.data_dir import data_path
from tests.factories import good_spec

ROOT = Path(__file__).resolve().parents[1]
EVERY_PATH = naming.OUTPUT_KINDS
SERVICE = "o1-preview"  # good_spec(): namespace ai-inference, prometheus.release default
MONITORS = [naming.manifest_file(SERVICE, f"podmonitor-{part}") for part in ("gpu", "model")]


def _chart_file(name: str) -> str:
    return data_path("kube-prometheus-stack", name).read_text(encoding="utf-8")


def _plan(release: str | None = None, namespace: str = "ai-inference") -> ServicePlan:
    data = good_spec()
    data["spec"]["selector"]["namespace"] = namespace
    if release is not None:
        data["spec"].setdefault("prometheus", {})["release"] = release
    return resolve(parse_spec(data, "specs/o1-preview.yaml"), "specs/o1-preview.yaml")


def _install(data: dict[str, Any]) -> InstallConfig:
    return ProjectConfig.model_validate({"install": data}).install


def _check(
    plans: list[ServicePlan], install: InstallConfig, outputs: tuple[str, ...] = EVERY_PATH
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """``(errors, warnings)`` of :func:`operator_selection.check_selection`."""
    warnings: list[Diagnostic] = []
    try:
        operator_selection.check_selection(plans, install, outputs, warnings.append)
    except ObsgenError as err:
        return list(err.diagnostics), warnings
    return [], warnings


def _spec(selector_key: str, value: Any, **more: Any) -> InstallConfig:
    return _install({"prometheus": {"prometheusSpec": {selector_key: value, **more}}})


def _am(**values: Any) -> InstallConfig:
    return _install({"alertmanager": {"alertmanagerSpec": values}})


# --- the model is the chart's ------------------------------------------------------------------


def test_the_selector_model_is_the_charts_templates() -> None:
    prometheus = _chart_file("prometheus.yaml")
    assert (
        "{{- if .Values.prometheus.prometheusSpec.ruleSelector }}\n"
        "  ruleSelector:\n"
        "{{ tpl (toYaml .Values.prometheus.prometheusSpec.ruleSelector | indent 4) . }}\n"
        "{{- else if .Values.prometheus.prometheusSpec.ruleSelectorNilUsesHelmValues }}\n"
        "  ruleSelector:\n"
        "    matchLabels:\n"
        "      release: {{ $.Release.Name | quote }}\n"
        '{{ else if not (kindIs "invalid" .Values.prometheus.prometheusSpec.ruleSelector) }}\n'
        "  ruleSelector: {}\n"
        "{{- end }}\n"
    ) in prometheus
    assert (
        "{{- if .Values.prometheus.prometheusSpec.ruleNamespaceSelector }}\n"
        "  ruleNamespaceSelector:\n"
        "{{ tpl (toYaml .Values.prometheus.prometheusSpec.ruleNamespaceSelector | indent 4) . }}\n"
        "{{ else }}\n"
        "  ruleNamespaceSelector: {}\n"
    ) in prometheus
    assert (
        "{{ else if .Values.prometheus.prometheusSpec.podMonitorSelectorNilUsesHelmValues  }}\n"
        "  podMonitorSelector:\n"
        "    matchLabels:\n"
        "      release: {{ $.Release.Name | quote }}\n"
        "{{ else }}\n"
        "  podMonitorSelector: {}\n"
    ) in prometheus
    manager = _chart_file("alertmanager.yaml")
    assert (
        "{{- if .Values.alertmanager.alertmanagerSpec.alertmanagerConfigSelector }}\n"
        "  alertmanagerConfigSelector:\n"
        "{{ tpl (toYaml .Values.alertmanager.alertmanagerSpec.alertmanagerConfigSelector "
        "| indent 4) . }}\n"
        "{{ else }}\n"
        "  alertmanagerConfigSelector: {}\n"
    ) in manager
    # a null namespace selector is written `null`: the operator then reads its own namespace
    assert (
        "  alertmanagerConfigNamespaceSelector:\n"
        "{{ tpl (toYaml .Values.alertmanager.alertmanagerSpec.alertmanagerConfigNamespaceSelector"
        ' | indent 4 | default "null") .  }}\n'
    ) in manager
    assert "alertmanagerConfigMatcherStrategy:\n{{ toYaml" in manager


def test_the_defaults_are_the_charts_default_values() -> None:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    values = yaml.load(_chart_file("values.yaml"), Loader=loader)
    prometheus = values["prometheus"]["prometheusSpec"]
    manager = values["alertmanager"]["alertmanagerSpec"]
    chart = _install(
        {
            "prometheus": {
                "prometheusSpec": {
                    k: prometheus[k]
                    for k in (
                        "ruleSelectorNilUsesHelmValues",
                        "ruleSelector",
                        "ruleNamespaceSelector",
                        "podMonitorSelectorNilUsesHelmValues",
                        "podMonitorSelector",
                        "podMonitorNamespaceSelector",
                    )
                }
            },
            "alertmanager": {
                "alertmanagerSpec": {
                    k: manager[k]
                    for k in (
                        "alertmanagerConfigSelector",
                        "alertmanagerConfigNamespaceSelector",
                        "alertmanagerConfigMatcherStrategy",
                    )
                }
            },
        }
    )
    assert chart == InstallConfig()


def test_the_chart_labels_are_the_helpers() -> None:
    helpers = _chart_file("_helpers.tpl")
    block = helpers.split('{{- define "kube-prometheus-stack.labels" }}', 1)[1].split("{{- if", 1)[
        0
    ]
    keys = {line.split(":", 1)[0] for line in block.strip().splitlines()}
    modelled = set(operator_selection.chart_labels(InstallConfig(), "monitoring"))
    # chart and app.kubernetes.io/version carry the chart version, which no selector can know
    assert keys - modelled == {"chart", "app.kubernetes.io/version"}
    assert modelled - keys == {"app"}
    assert "release: {{ $.Release.Name | quote }}" in block


@pytest.mark.parametrize(
    ("expression", "labels", "met"),
    [
        ({"key": "tier", "operator": "In", "values": ["a", "b"]}, {"tier": "b"}, True),
        ({"key": "tier", "operator": "In", "values": ["a"]}, {}, False),
        ({"key": "tier", "operator": "NotIn", "values": ["a"]}, {}, True),  # absent: holds
        ({"key": "tier", "operator": "NotIn", "values": ["a"]}, {"tier": "a"}, False),
        ({"key": "tier", "operator": "Exists"}, {"tier": ""}, True),
        ({"key": "tier", "operator": "DoesNotExist"}, {"tier": "a"}, False),
    ],
)
def test_selector_requirements_follow_kubernetes(
    expression: dict[str, Any], labels: dict[str, str], met: bool
) -> None:
    selector = LabelSelector.model_validate({"matchExpressions": [expression]})
    (requirement,) = operator_selection.requirements(selector)
    assert requirement.met(labels) is met


# --- the defaults, and the committed specs -----------------------------------------------------


def test_the_committed_specs_are_selected_by_the_charts_defaults_silently() -> None:
    plans = load_plans(find_specs([], ROOT), ROOT)
    assert _check(plans, InstallConfig()) == ([], [])


# --- ruleSelector / podMonitorSelector ---------------------------------------------------------


def test_a_release_other_than_the_specs_leaves_the_manifests_unselected() -> None:
    # obsgen.yaml names the release `monitoring`; the spec keeps the default release label.
    errors, _ = _check([_plan()], _install({"release": "monitoring"}))
    by_file = {d.file: d for d in errors}
    assert set(by_file) == {
        naming.manifest_file(SERVICE, "prometheusrule"),
        naming.manifest_file(SERVICE, "podmonitor-gpu"),
        naming.manifest_file(SERVICE, "podmonitor-model"),
    }
    rule = by_file[naming.manifest_file(SERVICE, "prometheusrule")]
    assert rule.path == "metadata.labels" and rule.level is Level.ERROR
    assert "release=monitoring (install.prometheus.prometheusSpec.ruleSelector" in rule.message
    assert "set spec.prometheus.release: monitoring in specs/o1-preview.yaml" in rule.message
    # the chart labels its own entries with the release it installs: those are selected
    assert not [d for d in errors if d.file.startswith("helm/")]
    assert _check([_plan(release="monitoring")], _install({"release": "monitoring"})) == ([], [])


def test_a_selector_on_a_label_obsgen_does_not_write_is_refused_on_both_paths() -> None:
    install = _spec("ruleSelector", {"matchLabels": {"prometheus": "main"}})
    errors, _ = _check([_plan()], install)
    assert {(d.file, d.path) for d in errors} == {
        (naming.manifest_file(SERVICE, "prometheusrule"), "metadata.labels"),
        (naming.ALL_SERVICES_VALUES, f"additionalPrometheusRulesMap.obsgen-{SERVICE}.additionalLabels"),
    }  # fmt: skip
    assert all("prometheus=main" in d.message for d in errors)
    chart = next(d for d in errors if d.file == naming.ALL_SERVICES_VALUES)
    assert "commonLabels" in chart.message
    # the chart's commonLabels, declared, label the chart's entries: only the manifest is left
    labelled = _install(
        {
            "commonLabels": {"prometheus": "main"},
            "prometheus": {"prometheusSpec": {"ruleSelector": {"matchLabels": {"prometheus": "main"}}}},
        }
    )  # fmt: skip
    errors, _ = _check([_plan()], labelled)
    assert [d.file for d in errors] == [naming.manifest_file(SERVICE, "prometheusrule")]
    # only the paths render.outputs writes are checked
    assert _check([_plan()], labelled, ("rules", "helm")) == ([], [])


def test_a_selector_obsgens_labels_satisfy_stays_silent() -> None:
    for selector in (
        {"matchLabels": {"app.kubernetes.io/part-of": "obsgen"}},
        {"matchExpressions": [{"key": "release", "operator": "In", "values": ["kube-prometheus-stack"]}]},
        {"matchExpressions": [{"key": "obsgen/service", "operator": "Exists"}]},
    ):  # fmt: skip
        errors, _ = _check([_plan()], _spec("ruleSelector", selector), ("rules", "manifests"))
        assert errors == [], selector


def test_a_null_rule_selector_without_the_helm_default_selects_nothing() -> None:
    install = _spec("ruleSelector", None, ruleSelectorNilUsesHelmValues=False)
    errors, _ = _check([_plan()], install)
    assert {(d.file, d.path) for d in errors} == {
        ("obsgen.yaml", "install.prometheus.prometheusSpec.ruleSelector")
    }
    assert "loads no PrometheusRule" in errors[0].message and "write {}" in errors[0].message
    # {} without the Helm default: every rule, whatever its release label
    every = _install(
        {
            "release": "monitoring",
            "prometheus": {
                "prometheusSpec": {"ruleSelector": {}, "ruleSelectorNilUsesHelmValues": False}
            },
        }
    )
    errors, _ = _check([_plan()], every)
    assert {d.file for d in errors} == set(MONITORS)


def test_a_templated_selector_value_is_refused_with_the_literal_fix() -> None:
    templated = {"matchLabels": {"release": "{{ $.Release.Name }}"}}
    errors, _ = _check([_plan()], _spec("ruleSelector", templated))
    assert {(d.file, d.path) for d in errors} == {
        ("obsgen.yaml", "install.prometheus.prometheusSpec.ruleSelector.matchLabels.release")
    }
    assert "write the value it renders to" in errors[0].message


def test_a_pod_monitor_selector_is_modelled_like_the_rule_selector() -> None:
    install = _spec("podMonitorSelector", {"matchLabels": {"team": "ml"}})
    errors, _ = _check([_plan()], install, ("manifests",))
    assert {d.file for d in errors} == set(MONITORS)
    assert (
        "install.prometheus.prometheusSpec.podMonitorSelector.matchLabels.team" in errors[0].message
    )
    # null without the Helm default: the template writes {}, every PodMonitor
    null = _spec("podMonitorSelector", None, podMonitorSelectorNilUsesHelmValues=False)
    assert _check([_plan()], null) == ([], [])


# --- namespace selectors -----------------------------------------------------------------------


def test_a_rule_namespace_selector_by_name_is_evaluated() -> None:
    by_name = {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}
    errors, _ = _check([_plan()], _spec("ruleNamespaceSelector", by_name), ("rules", "manifests"))
    (error,) = errors
    key = "install.prometheus.prometheusSpec.ruleNamespaceSelector.matchLabels.kubernetes.io/metadata.name"
    assert (error.file, error.path) == ("obsgen.yaml", key)
    assert "'ai-inference'" in error.message and "add the namespace" in error.message
    both = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["monitoring", "ai-inference"]}]}  # fmt: skip
    assert _check([_plan()], _spec("ruleNamespaceSelector", both)) == ([], [])


def test_a_namespace_selector_on_other_labels_warns_with_the_label_command() -> None:
    install = _spec("ruleNamespaceSelector", {"matchLabels": {"monitoring": "enabled"}})
    errors, warnings = _check([_plan()], install, ("rules", "manifests"))
    assert errors == []
    (warning,) = warnings
    assert warning.level is Level.WARNING
    assert "monitoring=enabled" in warning.message
    assert "kubectl label namespace ai-inference monitoring=enabled" in warning.message


def test_a_null_alertmanager_config_namespace_selector_reads_the_releases_namespace() -> None:
    null = {"alertmanagerConfigNamespaceSelector": None}
    key = "install.alertmanager.alertmanagerSpec.alertmanagerConfigNamespaceSelector"
    errors, _ = _check(
        [_plan()], _install({"namespace": "monitoring", "alertmanager": {"alertmanagerSpec": null}})
    )
    assert [(d.file, d.path) for d in errors] == [("obsgen.yaml", key)]
    assert "never loaded" in errors[0].message and "write {}" in errors[0].message
    errors, warnings = _check([_plan()], _am(**null))
    assert errors == [] and [w.path for w in warnings] == [key]
    same = _install({"namespace": "ai-inference", "alertmanager": {"alertmanagerSpec": null}})
    assert _check([_plan()], same) == ([], [])  # fmt: skip


# --- AlertmanagerConfig selection and matcher strategy -----------------------------------------


def test_an_alertmanager_config_selector_by_release_selects_obsgens_config() -> None:
    config = alertmanager.alertmanager_config(_plan(), EMPTY)
    assert config["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    by_release = {"matchLabels": {"release": "monitoring"}}
    errors, _ = _check([_plan()], _am(alertmanagerConfigSelector=by_release), ("manifests",))
    assert [d.file for d in errors] == [naming.manifest_file(SERVICE, "alertmanagerconfig")]
    assert "alertmanagerConfigSelector.matchLabels.release" in errors[0].message
    selected = _check([_plan("monitoring")], _am(alertmanagerConfigSelector=by_release))
    assert selected == ([], [])


def test_on_namespace_needs_the_namespace_label_on_every_alert() -> None:
    plan = _plan()
    labels = list(alert_labels(plan))
    assert labels and all(ls["namespace"] == "ai-inference" for ls in labels)
    assert operator_selection.strategy_problems(plan, InstallConfig(), labels) == []
    lost = [*labels, {"alertname": "Unscoped", "severity": "warning"}]
    (error,) = operator_selection.strategy_problems(plan, InstallConfig(), lost)
    assert (error.file, error.path) == (
        naming.manifest_file(SERVICE, "alertmanagerconfig"),
        "spec.route",
    )
    assert "Unscoped" in error.message and "namespace=ai-inference" in error.message


def test_no_namespace_matcher_warns_that_other_namespaces_alerts_match() -> None:
    none = _am(alertmanagerConfigMatcherStrategy={"type": "None"})
    errors, warnings = _check([_plan()], none)
    assert errors == [] and len(warnings) == 1
    assert "other namespaces" in warnings[0].message and "OnNamespace" in warnings[0].message
    # except for the Alertmanager's namespace: scoped elsewhere, unscoped in its own
    strategy = {
        "alertmanagerConfigMatcherStrategy": {"type": "OnNamespaceExceptForAlertmanagerNamespace"}
    }
    elsewhere = _install(
        {"namespace": "monitoring", "alertmanager": {"alertmanagerSpec": strategy}}
    )
    assert _check([_plan()], elsewhere) == ([], [])
    own = _install({"namespace": "ai-inference", "alertmanager": {"alertmanagerSpec": strategy}})
    assert len(_check([_plan()], own)[1]) == 1  # fmt: skip


def test_an_alertmanager_config_label_over_63_characters_is_refused() -> None:
    plan = dataclasses.replace(_plan(), name="m" * 64)
    errors, _ = _check([plan], InstallConfig(), ("manifests",))
    found = {(d.file, d.path) for d in errors}
    assert (
        naming.manifest_file("m" * 64, "alertmanagerconfig"),
        "metadata.labels.obsgen/service",
    ) in found
    assert any("64 characters" in d.message for d in errors)  # fmt: skip


# --- through `obsgen render` --------------------------------------------------------------------


def test_render_refuses_an_unselected_install_naming_the_file_and_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = tmp_path / "spec-folder"
    specs.mkdir()
    shutil.copy(ROOT / "specs" / "o1-preview.yaml", specs)
    (tmp_path / "obsgen.yaml").write_text(
        "render:\n  install: manifests\n"
        "install:\n  prometheus:\n    prometheusSpec:\n"
        "      ruleSelector: {matchLabels: {prometheus: main}}\n",
        encoding="utf-8",
    )
    code = main(["render", "--skip-promtool", "--out", str(tmp_path), str(specs)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert f"{naming.manifest_file(SERVICE, 'prometheusrule')}: metadata.labels:" in err
    assert "prometheus=main" in err
    assert not (tmp_path / "rules").exists()
