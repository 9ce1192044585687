"""What the install paths accept (issue 21): unique dashboards per namespace and per repository,
sizes checked against the path actually used, and an overlay that fits on top of the chart.

* Case 3, two teams, one name: ``chat`` in ``team-a`` and in ``team-b``, each rendered by its
  own repository, into one Grafana.
* Case 4, ``kubectl apply`` size: a vLLM spec with ``groupBy: [model_name]`` and many SLOs.
* Case 5, the overlay over kube-prometheus-stack's default values (tests/data/kube-prometheus-
  stack): no key twice in one mapping, no setting a user may have narrowed.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator import naming
from generator.builders import (
    alertmanager,
    chart_names,
    install_limits,
    operator_selection,
    overlay,
)
from generator.builders.dashboard import dashboard_outputs
from generator.errors import Diagnostic, Level, ObsgenError
from generator.plan import ServicePlan, resolve
from generator.project_config import InstallConfig, load_project_config
from generator.receivers import EMPTY, ReceiversConfig, parse_receivers
from generator.render import find_specs, load_plans, rules_outputs
from generator.spec import MAX_SLOS, parse_spec, parse_yaml
from tests.alertmanager_server import find_alertmanager
from tests.data_dir import data_path
from tests.e2e.e2e_prometheus import free_port
from tests.factories import good_spec

ROOT = Path(__file__).resolve().parents[1]
GRAFANA_UID = re.compile(r"^[a-zA-Z0-9_-]{1,40}$")  # Grafana's util.IsValidShortUID, ≤ 40


def _plan(data: dict[str, Any], source: str) -> ServicePlan:
    return resolve(parse_spec(data, source), source)


def _chat(namespace: str) -> ServicePlan:
    data = good_spec()
    data["metadata"]["name"] = "chat"
    data["spec"]["selector"]["namespace"] = namespace
    data["spec"]["deployment"]["name"] = "chat"
    return _plan(data, "specs/chat.yaml")


def _render(
    plans: list[ServicePlan],
    via: str = "configmaps",
    warn: Callable[[Diagnostic], None] | None = None,
    fleet_name: str | None = None,
) -> dict[str, str]:
    """What the install paths carry: rule files, dashboards, the overlays (no promtool tests,
    which these checks do not read and which take most of a render's time)."""
    outputs = {**rules_outputs(plans), **dashboard_outputs(plans, fleet_name)}
    outputs.update(overlay.overlay_outputs(plans, outputs, via, warn))
    return outputs


# --- case 3: two teams, one name -------------------------------------------------------------


@pytest.fixture(scope="module")
def two_teams() -> dict[str, dict[str, str]]:
    """Two repositories, each with one service ``chat``, rendered both ways."""
    return {
        f"{ns}/{via}": _render([_chat(ns)], via)
        for ns in ("team-a", "team-b")
        for via in ("configmaps", "values")
    }


def _dashboards_in_grafana(outputs: dict[str, str], via: str) -> dict[str, str]:
    """{file name in Grafana's provisioning folder: dashboard uid} as installed by ``via``."""
    found = {}
    if via == "configmaps":
        for path, text in outputs.items():
            if path.startswith("manifests/"):
                doc = yaml.safe_load(text)
                if doc["kind"] == "ConfigMap":
                    for file, body in doc["data"].items():
                        found[file] = json.loads(body)["uid"]
    else:
        values = yaml.safe_load(outputs[naming.ALL_SERVICES_VALUES])
        for key, entry in values["grafana"]["dashboards"][naming.DASHBOARD_PROVIDER].items():
            found[f"{key}.json"] = json.loads(entry["json"])["uid"]
    return found


@pytest.mark.parametrize("via", ["configmaps", "values"])
def test_two_teams_with_one_service_name_get_distinct_dashboards(
    two_teams: dict[str, dict[str, str]], via: str
) -> None:
    a, b = two_teams[f"team-a/{via}"], two_teams[f"team-b/{via}"]
    in_a, in_b = _dashboards_in_grafana(a, via), _dashboards_in_grafana(b, via)
    assert len(in_a) == len(in_b) == 2  # chat and the fleet overview
    assert not set(in_a) & set(in_b), "a sidecar file name is shared: one overwrites the other"
    assert not set(in_a.values()) & set(in_b.values()), "a dashboard uid is shared"
    for uid in (*in_a.values(), *in_b.values()):
        assert GRAFANA_UID.match(uid), uid
    titles_a = {json.loads(t)["title"] for p, t in a.items() if p.startswith("dashboards/")}
    titles_b = {json.loads(t)["title"] for p, t in b.items() if p.startswith("dashboards/")}
    assert not titles_a & titles_b, "Grafana refuses two dashboards of one title in a folder"


def test_the_fleet_overviews_of_two_repositories_do_not_collide(
    two_teams: dict[str, dict[str, str]],
) -> None:
    fleets = [
        yaml.safe_load(two_teams[f"{ns}/configmaps"]["manifests/fleet-overview.yaml"])
        for ns in ("team-a", "team-b")
    ]
    # both go into Grafana's namespace: their ConfigMap names must differ too
    assert fleets[0]["metadata"]["name"] != fleets[1]["metadata"]["name"]
    assert set(fleets[0]["data"]) != set(fleets[1]["data"])


def test_alerts_link_to_the_dashboard_of_their_own_namespace(
    two_teams: dict[str, dict[str, str]],
) -> None:
    for ns in ("team-a", "team-b"):
        outputs = two_teams[f"{ns}/configmaps"]
        uid = json.loads(outputs[naming.dashboard_file("chat")])["uid"]
        assert f"/d/{uid}/chat" in outputs[naming.rules_file("chat")]


def test_a_configured_fleet_name_is_the_fleet_identity() -> None:
    plans = [_chat("team-a")]
    default = json.loads(_render(plans)[naming.fleet_dashboard_file()])
    named = json.loads(_render(plans, fleet_name="ml-platform")[naming.fleet_dashboard_file()])
    assert named["uid"] == naming.fleet_dashboard_uid("ml-platform") != default["uid"]
    assert named["title"].endswith("(ml-platform)")


def test_uids_are_deterministic() -> None:
    assert naming.dashboard_uid("chat", "team-a") == naming.dashboard_uid("chat", "team-a")
    assert naming.dashboard_uid("chat", "team-a") != naming.dashboard_uid("chat", None)


DNS_LABEL = st.from_regex(r"\A[a-z]([a-z0-9-]{0,61}[a-z0-9])?\Z")


@settings(max_examples=100, deadline=None)
@given(service=DNS_LABEL, namespaces=st.tuples(DNS_LABEL, DNS_LABEL), cluster=st.none() | DNS_LABEL)
def test_uids_are_valid_and_unique_per_namespace_and_cluster(
    service: str, namespaces: tuple[str, str], cluster: str | None
) -> None:
    first = naming.dashboard_uid(service, namespaces[0], cluster)
    second = naming.dashboard_uid(service, namespaces[1], cluster)
    assert GRAFANA_UID.match(first) and GRAFANA_UID.match(second)
    assert (first == second) == (namespaces[0] == namespaces[1])
    assert first != naming.dashboard_uid(service, namespaces[0], (cluster or "") + "x")
    assert GRAFANA_UID.match(naming.fleet_dashboard_uid(f"{namespaces[0]}+{service}", cluster))


# --- case 4: sizes against the path actually used --------------------------------------------


def _many_slos(count: int) -> ServicePlan:
    """The committed vLLM spec with ``groupBy: [model_name]`` and ``count`` latency SLOs."""
    data = yaml.safe_load((ROOT / "specs" / "llama3-70b-vllm.yaml").read_text("utf-8"))
    data["metadata"]["name"] = "vllm-models"
    data["spec"]["groupBy"] = ["model_name"]
    e2e_ms = [1000, 2500, 5000, 10000, 15000, 20000, 30000, 40000, 60000]
    ttft_ms = [100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000]
    slos: list[dict[str, Any]] = [{"name": "availability", "objective": 99.9, "window": "30d"}]
    for i in range(count):
        indicator, bounds = ("e2e", e2e_ms) if i % 2 == 0 else ("ttft", ttft_ms)
        slos.append(
            {
                "name": f"latency-{indicator}-{i}",
                "indicator": indicator,
                "threshold": f"{bounds[i % len(bounds)]}ms",
                "objective": 99,
                "window": "30d",
            }
        )
    # A spec holds at most MAX_SLOS SLOs (docs/limits.md): resolve them in parts of that size
    # and join the parts' SLOs into one plan, which is what a dashboard this large needs.
    parts = []
    for first in range(0, len(slos), MAX_SLOS):
        data["spec"]["slos"] = slos[first : first + MAX_SLOS]
        parts.append(_plan(data, "specs/vllm-models.yaml"))
    return dataclasses.replace(parts[0], slos=tuple(s for part in parts for s in part.slos))


# Latency SLOs that make the vLLM dashboard about the 236 KB: over what client-side
# `kubectl apply` can store, under a ConfigMap's 1 MiB (each SLO adds about 11.6 KB of panels).
MANY_SLOS = 21  # a dashboard of 243 KB (one line per panel): its client-side apply 275 KB


@pytest.fixture(scope="module")
def many_slos() -> tuple[dict[str, str], list[Diagnostic]]:
    warnings: list[Diagnostic] = []
    outputs = _render([_many_slos(MANY_SLOS)], warn=warnings.append)
    return outputs, warnings


def test_a_dashboard_too_large_for_client_side_apply_is_flagged(
    many_slos: tuple[dict[str, str], list[Diagnostic]],
) -> None:
    outputs, warnings = many_slos
    path = naming.manifest_file("vllm-models", "dashboard")
    configmap = yaml.safe_load(outputs[path])
    dashboard_bytes = len(outputs[naming.dashboard_file("vllm-models")].encode())
    assert 200_000 < dashboard_bytes < install_limits.ANNOTATIONS_LIMIT  # the 236 KB
    assert install_limits.configmap_data_bytes(configmap) < install_limits.CONFIGMAP_DATA_LIMIT
    assert install_limits.client_side_apply_bytes(configmap) > install_limits.ANNOTATIONS_LIMIT
    flagged = [w for w in warnings if w.file == path]
    assert len(flagged) == 1 and flagged[0].level is Level.WARNING
    assert "kubectl apply --server-side" in flagged[0].message
    assert "# Use: kubectl apply --server-side -f " + path in outputs[path]


def test_the_committed_specs_fit_client_side_apply_and_stay_silent() -> None:
    warnings: list[Diagnostic] = []
    outputs = _render(load_plans(find_specs([], ROOT), ROOT), warn=warnings.append)
    assert warnings == []
    for path, text in outputs.items():
        if path.startswith("manifests/"):
            assert "--server-side" not in text, path


def test_go_json_bytes_counts_what_kubectl_stores() -> None:
    # encoding/json: compact, "<>&" as \u003c…, non-ASCII as UTF-8, U+2028 escaped, newline
    assert install_limits.go_json_bytes({"a": "x"}) == len('{"a":"x"}') + 1
    assert (
        install_limits.go_json_bytes({"q": "a<b&c>d"})
        == len('{"q":"a\\u003cb\\u0026c\\u003ed"}') + 1
    )
    assert install_limits.go_json_bytes({"t": "—"}) == len('{"t":""}') + 3 + 1
    assert install_limits.go_json_bytes({"t": "\u2028"}) == len('{"t":"\\u2028"}') + 1
    assert install_limits.go_json_bytes({"n": 'a"\n'}) == len('{"n":"a\\"\\n"}') + 1


def test_dashboards_too_large_for_the_grafana_charts_configmap_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # --dashboards-via values: the Grafana chart writes every dashboard of the provider into one
    # ConfigMap. Lower the limit instead of rendering megabytes.
    plans = load_plans(find_specs([], ROOT), ROOT)
    monkeypatch.setattr(install_limits, "CONFIGMAP_DATA_LIMIT", 200_000)
    with pytest.raises(ObsgenError) as err:
        _render(plans, "values")
    paths = {(d.file, d.path) for d in err.value.diagnostics}
    assert (naming.ALL_SERVICES_VALUES, "grafana.dashboards.obsgen") in paths
    assert "dashboardsVia: configmaps" in str(err.value)


def test_an_overlay_large_for_a_helm_release_secret_is_flagged(
    many_slos: tuple[dict[str, str], list[Diagnostic]], monkeypatch: pytest.MonkeyPatch
) -> None:
    outputs, warnings = many_slos
    assert not [w for w in warnings if w.file.startswith("helm/")]
    values = yaml.safe_load(outputs[naming.ALL_SERVICES_VALUES])
    share = install_limits.helm_release_share(values)
    assert 0 < share < install_limits.HELM_OVERLAY_BUDGET
    monkeypatch.setattr(install_limits, "HELM_OVERLAY_BUDGET", share - 1)
    flagged: list[Diagnostic] = []
    plan = _many_slos(MANY_SLOS)
    overlay.overlay_outputs([plan], outputs, "configmaps", flagged.append)
    assert {w.file for w in flagged if "Helm release Secret" in w.message} == {
        naming.ALL_SERVICES_VALUES,
        naming.values_file("vllm-models"),
    }


# --- case 5: the overlay on top of the chart's default values --------------------------------


def _chart_file(name: str) -> str:
    return data_path("kube-prometheus-stack", name).read_text(encoding="utf-8")


def _grafana_chart_file(name: str) -> str:
    return data_path("grafana-chart", name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def chart_values() -> dict[str, Any]:
    """kube-prometheus-stack's defaults, ``grafana`` being the Grafana chart's defaults with
    the parent's ``grafana:`` values over them (as Helm gives a dependency its values)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # 200 KB: the C parser
    values = yaml.load(_chart_file("values.yaml"), Loader=loader)
    grafana = yaml.load(_grafana_chart_file("values.yaml"), Loader=loader)
    assert isinstance(values, dict) and isinstance(grafana, dict)
    values["grafana"] = _helm_merge(grafana, values["grafana"])
    return values


def _chart_label_lines(values: dict[str, Any]) -> list[str]:
    """The label lines the chart writes before an entry's ``additionalLabels``: ``app`` and the
    ``kube-prometheus-stack.labels`` helper (templates/_helpers.tpl), values as placeholders."""
    helpers = _chart_file("_helpers.tpl")
    block = helpers.split('{{- define "kube-prometheus-stack.labels" }}', 1)[1]
    block = block.split("{{- end }}\n{{- end }}", 1)[0]
    lines = ["app: kube-prometheus-stack"]
    for line in block.strip("\n").splitlines():
        if line.startswith("{{"):
            continue  # the commonLabels conditional; its body is added below
        key = line.split(":", 1)[0]
        lines.append(f"{key}: placeholder")
    common = values.get("commonLabels") or {}
    lines.extend(yaml.safe_dump(common, sort_keys=False).splitlines() if common else [])
    return lines


def _rendered_labels(values: dict[str, Any], additional: dict[str, str]) -> str:
    """The ``labels:`` mapping as the templates write it: chart lines, then ``toYaml`` of
    ``additionalLabels`` (both templates do exactly this; asserted below)."""
    lines = _chart_label_lines(values)
    if additional:
        lines.extend(yaml.safe_dump(additional, sort_keys=False).splitlines())
    return "\n".join(lines) + "\n"


def test_the_templates_write_labels_the_way_this_test_rebuilds_them() -> None:
    rules = _chart_file("additionalPrometheusRules.yaml")
    monitors = _chart_file("podmonitors.yaml")
    for text in (rules, monitors):
        labels = text.split("labels:", 1)[1].split("spec:", 1)[0]
        assert 'app: {{ template "kube-prometheus-stack.name" $ }}' in labels
        assert 'include "kube-prometheus-stack.labels" $' in labels
        assert "toYaml" in labels and "additionalLabels" in labels


def _overlays() -> dict[str, dict[str, Any]]:
    plans = load_plans(find_specs([], ROOT), ROOT)
    dashboards = dashboard_outputs(plans)
    found = {}
    for via in ("configmaps", "values"):
        for path, text in overlay.overlay_outputs(plans, dashboards, via).items():
            if path.startswith("helm/values-"):
                found[f"{path} ({via})"] = yaml.safe_load(text)
    return found


@pytest.fixture(scope="module")
def overlays() -> dict[str, dict[str, Any]]:
    return _overlays()


def _duplicate_label_problems(values: dict[str, Any], overlay_values: dict[str, Any]) -> list[str]:
    entries = [
        *overlay_values.get("additionalPrometheusRulesMap", {}).values(),
        *overlay_values.get("prometheus", {}).get("additionalPodMonitors", []),
    ]
    problems = []
    for entry in entries:
        text = _rendered_labels(values, entry.get("additionalLabels", {}))
        try:
            parse_yaml(text, "labels")
        except ObsgenError as err:
            problems.append(str(err))
    return problems


def test_the_overlay_repeats_no_label_the_chart_sets(
    chart_values: dict[str, Any], overlays: dict[str, dict[str, Any]]
) -> None:
    assert len(overlays) >= 4
    for where, values in overlays.items():
        assert _duplicate_label_problems(chart_values, values) == [], where


def test_the_old_overlay_labels_would_be_duplicate_keys(chart_values: dict[str, Any]) -> None:
    # Issue 21, case 5, as it was: additionalLabels with the chart's own instance/part-of keys.
    old = {
        "additionalPrometheusRulesMap": {
            "obsgen-chat": {
                "additionalLabels": {
                    "app.kubernetes.io/instance": "chat",
                    "app.kubernetes.io/part-of": "obsgen",
                },
                "groups": [],
            }
        }
    }
    (problem,) = _duplicate_label_problems(chart_values, old)
    assert "duplicate key 'app.kubernetes.io/instance'" in problem


def _leaves(node: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    if isinstance(node, dict) and node:
        return [leaf for key, value in node.items() for leaf in _leaves(value, (*path, key))]
    return [(path, node)]


def _chart_default(values: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = values
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def overridden_settings(chart: dict[str, Any], overlay_values: dict[str, Any]) -> list[str]:
    """Settings of the chart that the overlay, as the last ``-f``, would replace.

    Helm merges maps key by key and replaces anything else. A leaf the overlay sets replaces
    the user's value wherever the chart has a setting there: a scalar or a non-empty list or
    map. Extension points (absent, null, ``[]``, ``{}``) are the overlay's to fill; an empty
    list replaces the user's list, which docs/install.md states.
    """
    found = []
    for path, _ in _leaves(overlay_values):
        for depth in range(1, len(path) + 1):
            default = _chart_default(chart, path[:depth])
            if default in (None, [], {}):
                break
            if not isinstance(default, dict):
                found.append(f"{'.'.join(path[:depth])} (chart default {default!r})")
                break
    return found


def test_the_overlay_overrides_no_chart_setting(
    chart_values: dict[str, Any], overlays: dict[str, dict[str, Any]]
) -> None:
    for where, values in overlays.items():
        assert overridden_settings(chart_values, values) == [], where


def test_the_old_sidecar_settings_would_override_the_users(chart_values: dict[str, Any]) -> None:
    old = {
        "grafana": {
            "sidecar": {
                "dashboards": {
                    "enabled": True,
                    "label": "grafana_dashboard",
                    "labelValue": "1",
                    "searchNamespace": "ALL",
                    "folderAnnotation": "grafana_folder",
                }
            }
        }
    }
    assert [s.split(" ")[0] for s in overridden_settings(chart_values, old)] == [
        "grafana.sidecar.dashboards.enabled",
        "grafana.sidecar.dashboards.label",
        "grafana.sidecar.dashboards.labelValue",
        "grafana.sidecar.dashboards.searchNamespace",
    ]


def test_the_old_folder_settings_would_override_the_users(chart_values: dict[str, Any]) -> None:
    old = {
        "grafana": {
            "sidecar": {
                "dashboards": {
                    "folderAnnotation": "grafana_folder",
                    "provider": {"foldersFromFilesStructure": True},
                }
            }
        }
    }
    assert overridden_settings(chart_values, old) == [
        "grafana.sidecar.dashboards.provider.foldersFromFilesStructure (chart default False)"
    ]


def _sidecar_provider_folder(values: dict[str, Any]) -> str | None:
    """The ``folder`` of the provider the Grafana chart renders for the dashboard sidecar
    (``grafana.configDashboardProviderData`` in templates/_config.tpl): None when
    ``provider.foldersFromFilesStructure`` is set, which leaves the folder out."""
    template = _grafana_chart_file("_config.tpl")
    block = template.split('{{- define "grafana.configDashboardProviderData" -}}', 1)[1]
    guard = "{{- if not .Values.sidecar.dashboards.provider.foldersFromFilesStructure }}"
    assert f"{guard}\n      folder: '{{{{ .Values.sidecar.dashboards.provider.folder }}}}'" in block
    provider = values["grafana"]["sidecar"]["dashboards"]["provider"]
    return None if provider.get("foldersFromFilesStructure") else str(provider["folder"])


def test_the_users_dashboard_folder_survives_the_overlay(
    chart_values: dict[str, Any], overlays: dict[str, dict[str, Any]]
) -> None:
    user = {"grafana": {"sidecar": {"dashboards": {"provider": {"folder": "Platform"}}}}}
    mine = _helm_merge(copy.deepcopy(chart_values), user)
    for where, values in overlays.items():
        merged = _helm_merge(copy.deepcopy(mine), values)
        assert _sidecar_provider_folder(merged) == "Platform", where
    old = {
        "grafana": {"sidecar": {"dashboards": {"provider": {"foldersFromFilesStructure": True}}}}
    }
    assert _sidecar_provider_folder(_helm_merge(copy.deepcopy(mine), old)) is None


def test_a_users_narrowed_sidecar_survives_the_overlay(
    chart_values: dict[str, Any], overlays: dict[str, dict[str, Any]]
) -> None:
    user = {"grafana": {"sidecar": {"dashboards": {"searchNamespace": ["monitoring", "team-a"]}}}}
    merged = _helm_merge(
        _helm_merge(copy.deepcopy(chart_values), user),
        overlays[f"{naming.ALL_SERVICES_VALUES} (configmaps)"],
    )
    sidecar = merged["grafana"]["sidecar"]["dashboards"]
    assert sidecar["searchNamespace"] == ["monitoring", "team-a"]
    assert (sidecar["label"], sidecar["labelValue"]) == ("grafana_dashboard", "1")
    assert sidecar["folderAnnotation"] is None  # the chart's, for the user to choose


def _helm_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """Helm's coalescing of two values files: maps merge key by key, the rest is replaced."""
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _helm_merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def test_chart_labels_are_the_helpers_labels(chart_values: dict[str, Any]) -> None:
    keys = {line.split(":", 1)[0] for line in _chart_label_lines(chart_values)}
    assert keys == set(overlay.CHART_LABELS)


# --- Alertmanager forgets before it repeats ----------------------------------------------------


def _receivers(ticket_repeat: str) -> ReceiversConfig:
    return parse_receivers(
        {
            "apiVersion": "obsgen/v1alpha1",
            "kind": "AlertReceivers",
            "timing": {
                "ticket": {
                    "groupWait": "2m",
                    "groupInterval": "30m",
                    "repeatInterval": ticket_repeat,
                }
            },
        }
    )


def _startup_log(config: str, flags: list[str], folder: Path) -> str:
    """What the real Alertmanager logs until it listens (it checks repeat against retention
    while loading the configuration)."""
    binary = find_alertmanager()
    assert binary, "Alertmanager not found (prometheus-alertmanager); run `make alertmanager`"
    folder.mkdir()
    (folder / "am.yml").write_text(config, encoding="utf-8")
    command = [
        binary,
        f"--config.file={folder / 'am.yml'}",
        f"--storage.path={folder / 'data'}",
        f"--web.listen-address=127.0.0.1:{free_port()}",
        "--cluster.listen-address=",
        *flags,
    ]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        lines = []
        try:
            for line in process.stderr:
                lines.append(line)
                if "Listening on" in line or "msg=Listening" in line or "level=error" in line:
                    break
        finally:
            process.terminate()
    return "".join(lines)


def test_a_repeat_longer_than_alertmanagers_retention_warns_and_the_overlay_keeps_it(
    tmp_path: Path,
) -> None:
    plans = [_chat("team-a")]
    receivers = _receivers("7d")
    (warning,) = alertmanager.retention_warnings(receivers)
    assert (warning.file, warning.path) == (
        "alertmanager/receivers.yaml",
        "timing.ticket.repeatInterval",
    )
    assert "--data.retention=168h" in warning.message and warning.level is Level.WARNING
    spec = alertmanager.values(plans, receivers)["alertmanager"]["alertmanagerSpec"]
    assert spec["retention"] == "168h"  # the operator's GoDuration: no `d`
    config = alertmanager.config_text(plans, receivers)
    forgets = "repeat_interval is greater than the data retention period"
    assert forgets in _startup_log(config, [], tmp_path / "default")
    assert forgets not in _startup_log(
        config, [f"--data.retention={spec['retention']}"], tmp_path / "overlay"
    )


def test_repeats_within_alertmanagers_retention_stay_silent() -> None:
    plans = [_chat("team-a")]
    for receivers in (_receivers("1d"), _receivers("120h"), None):
        assert alertmanager.retention_warnings(receivers) == []
        values = alertmanager.values(plans, receivers or EMPTY)["alertmanager"]
        assert "retention" not in values.get("alertmanagerSpec", {})


# --- names the chart derives -------------------------------------------------------------------


def test_the_name_model_is_the_charts_templates() -> None:
    # Helm is not installed here: the model is checked against the templates' text instead.
    helpers = _chart_file("_helpers.tpl")
    fullname = helpers.split('{{- define "kube-prometheus-stack.fullname" -}}', 1)[1]
    fullname = fullname.split("{{- end -}}\n{{- end -}}\n{{- end -}}", 1)[0]
    assert [line.strip() for line in fullname.strip().splitlines()] == [
        "{{- if .Values.fullnameOverride -}}",
        '{{- .Values.fullnameOverride | trunc 26 | trimSuffix "-" -}}',
        "{{- else -}}",
        "{{- $name := default .Chart.Name .Values.nameOverride -}}",
        "{{- if contains $name .Release.Name -}}",
        '{{- .Release.Name | trunc 26 | trimSuffix "-" -}}',
        "{{- else -}}",
        '{{- printf "%s-%s" .Release.Name $name | trunc 26 | trimSuffix "-" -}}',
    ]
    rules = _chart_file("additionalPrometheusRules.yaml")
    name_line = (
        '  name: {{ printf "%s-%s" (include "kube-prometheus-stack.fullname" $) '
        '$prometheusRuleName | trunc 63 | trimSuffix "-" }}'
    )
    assert name_line in rules.split("additionalPrometheusRulesMap }}", 2)[2]


@pytest.mark.parametrize(
    ("release", "expected"),
    [
        (chart_names.Release("kube-prometheus-stack"), "kube-prometheus-stack"),
        (chart_names.Release("monitoring"), "monitoring-kube-prometheus"),
        (chart_names.Release("prometheus"), "prometheus-kube-prometheus"),
        (chart_names.Release("prod-kube-prometheus-stack-eu"), "prod-kube-prometheus-stack"),
        (chart_names.Release("monitoring", fullname_override="kps"), "kps"),
        (chart_names.Release("kps-prod", name_override="kps"), "kps-prod"),
        (chart_names.Release("abcdefghijklmnopqrstuvwxy-z"), "abcdefghijklmnopqrstuvwxy"),
    ],
)
def test_fullname_follows_the_helper(release: chart_names.Release, expected: str) -> None:
    assert chart_names.fullname(release) == expected


def _services(*names: str) -> list[ServicePlan]:
    plans = []
    for name in names:
        data = good_spec()
        data["metadata"]["name"] = name
        plans.append(_plan(data, f"specs/{name}.yaml"))
    return plans


TWINS = ("mixtral-8x22b-instruct-prodeu1", "mixtral-8x22b-instruct-prodeu2")  # 30 characters


@pytest.mark.parametrize("release", ["monitoring", "prometheus"])
def test_two_services_the_chart_would_give_one_rule_name_are_refused(release: str) -> None:
    assert all(len(name) == 30 for name in TWINS)
    plans = _services(*TWINS)
    with pytest.raises(ObsgenError) as err:
        chart_names.check_chart_names(plans, chart_names.Release(release))
    (problem,) = err.value.diagnostics
    assert "additionalPrometheusRulesMap.obsgen-mixtral-8x22b-instruct-prodeu1" in problem.message
    assert "additionalPrometheusRulesMap.obsgen-mixtral-8x22b-instruct-prodeu2" in problem.message
    assert "fullnameOverride" in problem.message and problem.level is Level.ERROR
    chart_names.check_chart_names(plans, chart_names.Release(release, fullname_override="kps"))


def test_without_a_configured_release_the_common_names_are_warned_about() -> None:
    warnings: list[Diagnostic] = []
    chart_names.check_chart_names(_services(*TWINS), None, warnings.append)
    releases = sorted(re.findall(r"with release '([^']+)'", " ".join(w.message for w in warnings)))
    assert releases == ["monitoring", "prometheus", "prometheus-stack"]
    assert all(w.level is Level.WARNING and "install.release" in w.message for w in warnings)


def test_the_committed_specs_get_distinct_rule_names_under_every_common_release() -> None:
    warnings: list[Diagnostic] = []
    plans = load_plans(find_specs([], ROOT), ROOT)
    chart_names.check_chart_names(plans, None, warnings.append)
    assert warnings == []
    chart_names.check_chart_names(_services(TWINS[0]), chart_names.Release("monitoring"))


def test_the_release_is_read_from_obsgen_yaml(tmp_path: Path) -> None:
    (tmp_path / "obsgen.yaml").write_text(
        "install:\n  release: monitoring\n  fullnameOverride: kps\n", encoding="utf-8"
    )
    install = load_project_config(tmp_path).install
    assert chart_names.configured_release(install) == chart_names.Release("monitoring", "kps")
    assert chart_names.configured_release(load_project_config(tmp_path / "none").install) is None


def test_a_label_value_over_63_characters_is_refused_naming_the_file_and_label() -> None:
    (plan,) = _services("chat")
    assert plan.install is not None
    long_labels = (("app.kubernetes.io/name", "m" * 64),)
    plan = dataclasses.replace(
        plan, install=dataclasses.replace(plan.install, pod_labels=long_labels)
    )
    with pytest.raises(ObsgenError) as err:
        _render([plan])
    found = {(d.file, d.path) for d in err.value.diagnostics}
    assert (
        naming.manifest_file("chat", "podmonitor-model"),
        "spec.selector.matchLabels.app.kubernetes.io/name",
    ) in found
    assert "64 characters" in str(err.value)


@pytest.mark.parametrize(
    ("part", "field"),
    [
        ("prometheusrule", "metadata.labels.obsgen/service"),
        ("podmonitor-model", "metadata.labels.obsgen/service"),
        ("podmonitor-gpu", "metadata.labels.obsgen/service"),
        ("alertmanagerconfig", "metadata.labels.obsgen/service"),
        # the dashboard ConfigMap carries no service label: its name is what grows
        ("dashboard", "metadata.name"),
    ],
)
def test_every_manifest_kind_is_held_to_the_api_servers_limits(
    over_limits: set[tuple[str, str]], part: str, field: str
) -> None:
    assert (naming.manifest_file(LONG_NAME, part), field) in over_limits


LONG_NAME = "m" * 240


@pytest.fixture(scope="module")
def over_limits() -> set[tuple[str, str]]:
    """``(file, field)`` of every error for a service named :data:`LONG_NAME` (the spec refuses
    it; built past that check here): a label value over 63 characters on every object labelled
    with it, a dashboard ConfigMap name (``obsgen-dashboard-<service>``) over 253."""
    (plan,) = _services("chat")
    plan = dataclasses.replace(plan, name=LONG_NAME)
    found: set[tuple[str, str]] = set()
    with pytest.raises(ObsgenError) as err:
        _render([plan])
    found |= {(d.file, d.path) for d in err.value.diagnostics}
    warnings: list[Diagnostic] = []
    with pytest.raises(ObsgenError) as err:
        operator_selection.check_selection([plan], InstallConfig(), ("manifests",), warnings.append)
    found |= {(d.file, d.path) for d in err.value.diagnostics}
    return found
