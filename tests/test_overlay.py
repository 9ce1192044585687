"""Install overlays (helm/, manifests/): CRD schemas, identical rule groups, promtool, the
sidecar as a Kubernetes Container, dashboards both ways, YAML round trips.

Every spec in specs/ is rendered in memory, with a stand-in dashboard for each service and a
fleet dashboard, so the dashboard paths are exercised whether or not the dashboard builder is
present. Schemas come from tests/data/schemas: the prometheus-operator CRDs of the newest
release and of v0.65.0, the oldest one obsgen supports; every object validates against both.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from generator import core, naming, promtool
from generator.builders import install_limits, kube, overlay
from generator.core import BuildOptions
from generator.errors import ObsgenError
from generator.plan import ServicePlan, resolve
from generator.promql import Matcher
from generator.render import find_specs, load_plans
from generator.spec import parse_spec
from generator.yamlio import dump_json, dump_yaml
from tests.data_dir import data_path

ROOT = Path(__file__).resolve().parents[1]
# The Go/RE2 pattern of PrometheusRule groups[].partial_response_strategy; Python's re rejects
# its inline flag (see tests/data/schemas/README.md). Same language, Python spelling.
GO_PATTERN = "^(?i)(abort|warn)?$"
PY_PATTERN = "(?i)^(abort|warn)?$"
# The PrometheusRule / PodMonitor kube-prometheus-stack renders from a values entry put the
# objects in the chart's namespace with its release label (templates/prometheus/*.yaml).
CHART_NAMESPACE = "monitoring"
CHART_LABELS = {"app": "kube-prometheus-stack", "release": "kube-prometheus-stack"}


# prometheus-operator releases whose CRDs every generated object must satisfy: the newest
# (tests/data/schemas/) and the oldest supported one (docs/install.md, Supported versions).
OPERATOR_RELEASES = {"newest": (), "v0.65.0": ("v0.65.0",)}


def _schemas_dir(release: str = "newest") -> Path:
    return data_path("schemas", *OPERATOR_RELEASES[release])


def _strict(schema: Any) -> Any:
    """Reject fields the CRD does not declare, as the API server would prune them silently:
    every object schema with ``properties`` gets ``additionalProperties: false``."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if (
            "properties" in out
            and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")
        ):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def _fix_go_pattern(schema: Any) -> int:
    """Replace the one Go-only pattern in place; return how many were replaced."""
    count = 0
    if isinstance(schema, dict):
        if schema.get("pattern") == GO_PATTERN:
            schema["pattern"] = PY_PATTERN
            count += 1
        for value in schema.values():
            count += _fix_go_pattern(value)
    elif isinstance(schema, list):
        for value in schema:
            count += _fix_go_pattern(value)
    return count


@functools.cache  # a validator holds no state; the test modules reuse each one
def _crd_validator(file: str, release: str = "newest") -> jsonschema.protocols.Validator:
    crd = yaml.safe_load((_schemas_dir(release) / file).read_text(encoding="utf-8"))
    schema = copy.deepcopy(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    _fix_go_pattern(schema)
    schema = _strict(schema)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


@pytest.fixture(scope="module", params=list(OPERATOR_RELEASES))
def operator_release(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def rule_validator(operator_release: str) -> jsonschema.protocols.Validator:
    return _crd_validator("monitoring.coreos.com_prometheusrules.yaml", operator_release)


@pytest.fixture(scope="module")
def monitor_validator(operator_release: str) -> jsonschema.protocols.Validator:
    return _crd_validator("monitoring.coreos.com_podmonitors.yaml", operator_release)


def _errors(validator: jsonschema.protocols.Validator, obj: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)
    ]


@pytest.fixture(scope="module")
def plans() -> list[ServicePlan]:
    return load_plans(find_specs([], ROOT), ROOT)


FLEET_UID = naming.fleet_dashboard_uid("stand-in")


def _with_dashboards(plans: list[ServicePlan]) -> dict[str, str]:
    """Stand-in dashboards: one per service and a fleet one, with Grafana templating inside."""
    outputs = {
        naming.dashboard_file(p.name): dump_json(
            {
                "title": p.name,
                "uid": naming.dashboard_uid(p.name, p.namespace),
                "legend": "{{pod}}",
            }
        )
        for p in plans
    }
    outputs["dashboards/fleet-overview.json"] = dump_json({"title": "fleet", "uid": FLEET_UID})
    return outputs


@pytest.fixture(scope="module")
def renders(plans: list[ServicePlan]) -> dict[str, dict[str, str]]:
    """{packaging: outputs}, filled by :func:`rendered`: pytest sets a parametrized module
    fixture up again each time its parameter comes back; the render is done once each."""
    return {}


@pytest.fixture(scope="module", params=["configmaps", "values"])
def rendered(
    request: pytest.FixtureRequest, plans: list[ServicePlan], renders: dict[str, dict[str, str]]
) -> dict[str, str]:
    if request.param not in renders:
        outputs = core.build(plans, BuildOptions(request.param))
        outputs.update(overlay.overlay_outputs(plans, _with_dashboards(plans), request.param))
        renders[request.param] = outputs
    return renders[request.param]


def _docs(outputs: dict[str, str], prefix: str) -> Iterator[tuple[str, Any]]:
    for path in sorted(outputs):
        if path.startswith(prefix) and path.endswith(".yaml"):
            yield path, yaml.safe_load(outputs[path])


def _chart_rule(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """What kube-prometheus-stack renders from an additionalPrometheusRulesMap entry."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": f"kube-prometheus-stack-{name}",
            "namespace": CHART_NAMESPACE,
            "labels": {**CHART_LABELS, **entry.get("additionalLabels", {})},
        },
        "spec": {"groups": entry["groups"]},
    }


def _chart_monitor(entry: dict[str, Any]) -> dict[str, Any]:
    """What kube-prometheus-stack renders from a prometheus.additionalPodMonitors entry."""
    spec = {k: v for k, v in entry.items() if k not in ("name", "additionalLabels")}
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": {
            "name": entry["name"],
            "namespace": CHART_NAMESPACE,
            "labels": {**CHART_LABELS, **entry.get("additionalLabels", {})},
        },
        "spec": spec,
    }


def _values_files(outputs: dict[str, str]) -> list[tuple[str, Any]]:
    return [(p, d) for p, d in _docs(outputs, "helm/values-")]


# --- CRD schemas --------------------------------------------------------------------------


@pytest.mark.parametrize("release", list(OPERATOR_RELEASES))
def test_go_pattern_override_finds_the_one_go_regex(release: str) -> None:
    crd = yaml.safe_load(
        (_schemas_dir(release) / "monitoring.coreos.com_prometheusrules.yaml").read_text("utf-8")
    )
    assert _fix_go_pattern(crd) == 1


def test_every_prometheus_rule_validates_against_the_crd(
    rendered: dict[str, str], rule_validator: jsonschema.protocols.Validator
) -> None:
    objects = [(p, d) for p, d in _docs(rendered, "manifests/") if d["kind"] == "PrometheusRule"]
    for path, values in _values_files(rendered):
        for name, entry in values["additionalPrometheusRulesMap"].items():
            objects.append((f"{path}:{name}", _chart_rule(name, entry)))
    assert len(objects) >= 3
    for where, obj in objects:
        assert _errors(rule_validator, obj) == [], where


def test_every_pod_monitor_validates_against_the_crd(
    rendered: dict[str, str], monitor_validator: jsonschema.protocols.Validator
) -> None:
    objects = [(p, d) for p, d in _docs(rendered, "manifests/") if d["kind"] == "PodMonitor"]
    for path, values in _values_files(rendered):
        for entry in values["prometheus"]["additionalPodMonitors"]:
            assert set(entry) <= overlay.CHART_POD_MONITOR_KEYS, f"{path}: chart drops a key"
            objects.append((f"{path}:{entry['name']}", _chart_monitor(entry)))
    assert len(objects) >= 4
    for where, obj in objects:
        assert _errors(monitor_validator, obj) == [], where


def test_every_core_object_validates_against_kubernetes_schemas(rendered: dict[str, str]) -> None:
    # The rest of what manifests/ holds: the dashboard ConfigMaps (core/v1, strict); the
    # AlertmanagerConfigs are checked against both CRD releases in tests/test_alertmanager.py.
    version = kubernetes_validate.latest_version()
    kinds = {"PrometheusRule", "PodMonitor", "AlertmanagerConfig"}
    core = [(p, d) for p, d in _docs(rendered, "manifests/") if d["kind"] not in kinds]
    assert {d["kind"] for _, d in core} == {"ConfigMap"}
    for _, obj in core:
        kubernetes_validate.validate(obj, version, strict=True)  # raises on a bad object
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate({**core[0][1], "data": {"x.json": 1}}, version, strict=True)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("podMetricsEndpoint", [{"port": "metrics"}], id="a misspelled spec field"),
        pytest.param("namespaceSelector", {"matchNames": "ai-inference"}, id="a string for a list"),
    ],
)
def test_strict_crd_validation_rejects_a_broken_pod_monitor(
    plans: list[ServicePlan],
    monitor_validator: jsonschema.protocols.Validator,
    field: str,
    value: Any,
) -> None:
    monitor = kube.pod_monitors(plans[0])[0]
    monitor["spec"][field] = value
    assert _errors(monitor_validator, monitor) != []


def test_partial_response_strategy_validates_with_the_python_pattern(
    plans: list[ServicePlan], rule_validator: jsonschema.protocols.Validator
) -> None:
    rule = kube.prometheus_rule(plans[0])
    rule["spec"]["groups"][0]["partial_response_strategy"] = "warn"
    assert _errors(rule_validator, rule) == []
    rule["spec"]["groups"][0]["partial_response_strategy"] = "sometimes"
    assert _errors(rule_validator, rule) != []


# --- rule groups: identical to rules/<service>.rules.yaml and promtool-clean ---------------


def _embedded_groups(
    outputs: dict[str, str], values: list[tuple[str, Any]], service: str
) -> dict[str, Any]:
    key = naming.k8s_name(service)
    found = {}
    for path, doc in values:
        rules_map = doc["additionalPrometheusRulesMap"]
        if key in rules_map:
            found[path] = rules_map[key]["groups"]
    found["prometheusrule"] = yaml.safe_load(
        outputs[naming.manifest_file(service, "prometheusrule")]
    )["spec"]["groups"]
    return found


@pytest.fixture(scope="module")
def embedded(rendered: dict[str, str], plans: list[ServicePlan]) -> dict[str, dict[str, Any]]:
    """{service: {where: rule groups}}: each service's groups as its values files and its
    PrometheusRule embed them (every values file parsed once)."""
    values = _values_files(rendered)
    return {plan.name: _embedded_groups(rendered, values, plan.name) for plan in plans}


def test_embedded_groups_are_byte_for_byte_the_rule_file(
    rendered: dict[str, str], plans: list[ServicePlan], embedded: dict[str, dict[str, Any]]
) -> None:
    for plan in plans:
        rule_text = rendered[naming.rules_file(plan.name)]
        body = "".join(line for line in rule_text.splitlines(True) if not line.startswith("#"))
        assert len(embedded[plan.name]) == 3  # values-<service>, values-observability, manifest
        for where, groups in embedded[plan.name].items():
            assert dump_yaml({"groups": groups}) == body, where


def test_alert_templates_reach_the_values_unrendered(rendered: dict[str, str]) -> None:
    text = rendered[naming.ALL_SERVICES_VALUES]
    assert "{{ $labels." in text
    # extraManifests goes through tpl: only the ScaledObjects (spec.autoscaling), no template.
    extra = yaml.safe_load(text).get("extraManifests") or {}
    assert all(obj["kind"] == "ScaledObject" for obj in extra.values())
    assert "{{" not in dump_yaml(extra) and "}}" not in dump_yaml(extra)


def test_embedded_groups_pass_promtool(
    plans: list[ServicePlan], embedded: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    files = []
    for plan in plans:
        for where, groups in embedded[plan.name].items():
            path = tmp_path / f"{plan.name}-{where.replace('/', '_')}.yaml"
            path.write_text(dump_yaml({"groups": groups}), encoding="utf-8")
            files.append(path)
    result = promtool.check_rules(files)
    assert result.ok, result.output


# --- the NVML sidecar ---------------------------------------------------------------------


SPEC = """
apiVersion: obsgen/v1alpha1
kind: ModelService
metadata: {name: demo, team: ml-platform}
spec:
  server: openai-http
  selector: {namespace: ai, job: demo}
  gpu: {exporter: sidecar, visibility: VISIBILITY, valuesPath: model.sidecars}
  deployment:
    name: demo
    container: vllm
    podLabels: {app.kubernetes.io/name: demo, tier: inference}
    metricsPort: 8000
"""


def _plan(visibility: str) -> ServicePlan:
    return resolve(parse_spec(yaml.safe_load(SPEC.replace("VISIBILITY", visibility)), "t"), "t")


def _pod(container: dict[str, Any]) -> dict[str, Any]:
    model = {"name": "vllm", "image": "vllm/vllm-openai:v0.11.0"}
    spec: dict[str, Any] = {"containers": [model, container]}
    claims = container.get("resources", {}).get("claims")
    if claims:
        model["resources"] = {"claims": claims}
        spec["resourceClaims"] = [
            {"name": claims[0]["name"], "resourceClaimTemplateName": "one-gpu"}
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "demo"}, "spec": spec}


@pytest.mark.parametrize(
    "visibility",
    [
        pytest.param("shared-claim", id="a sidecar sharing the model's DRA claim"),
        pytest.param("visible-devices", id="a sidecar with NVIDIA_VISIBLE_DEVICES"),
    ],
)
def test_sidecar_validates_as_a_kubernetes_container(visibility: str) -> None:
    plan = _plan(visibility)
    values = kube.sidecar_values(plan)
    (container,) = values["model"]["sidecars"]
    version = kubernetes_validate.latest_version()
    kubernetes_validate.validate(_pod(container), version, strict=True)
    security = container["securityContext"]
    assert security["runAsNonRoot"] is True
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    env = {e["name"]: e["value"] for e in container.get("env", [])}
    if visibility == "shared-claim":
        assert container["resources"]["claims"] == [{"name": "gpu"}]
        assert "NVIDIA_VISIBLE_DEVICES" not in env
    else:
        assert env["NVIDIA_VISIBLE_DEVICES"] == "all"
        assert "claims" not in container["resources"]


def test_kubernetes_validate_rejects_a_broken_container() -> None:
    container = kube.sidecar_container(_plan("visible-devices"))
    container["securityContext"]["readOnlyRootFS"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(
            _pod(container), kubernetes_validate.latest_version(), strict=True
        )


def test_sidecar_container_name_is_what_the_gpu_alerts_select() -> None:
    plan = _plan("visible-devices")
    container = kube.sidecar_container(plan)
    assert any(
        m.label == "container" and m.op == "=" and m.value == container["name"]
        for m in plan.gpu_matchers
    )


def test_pod_monitors_follow_the_spec(monitor_validator: jsonschema.protocols.Validator) -> None:
    model, gpu = kube.pod_monitors(_plan("shared-claim"))
    for monitor in (model, gpu):
        assert monitor["spec"]["selector"] == {
            "matchLabels": {"app.kubernetes.io/name": "demo", "tier": "inference"}
        }
        assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["ai"]}
        assert _errors(monitor_validator, monitor) == []
    # targetPort, which every supported operator declares (not portNumber)
    assert model["spec"]["podMetricsEndpoints"][0]["targetPort"] == 8000
    assert "portNumber" not in model["spec"]["podMetricsEndpoints"][0]
    assert model["spec"]["podMetricsEndpoints"][0]["relabelings"] == [
        {"action": "replace", "targetLabel": "job", "replacement": "demo"}
    ]
    assert gpu["spec"]["podMetricsEndpoints"][0]["port"] == naming.GPU_EXPORTER_PORT_NAME


def test_a_numeric_port_as_portnumber_is_what_old_operators_reject() -> None:
    # Issue 21, case 2: the old output (portNumber) fails v0.65's strict validation; the new
    # one (targetPort) passes both releases, and keeps scraping that one port.
    (model, _) = kube.pod_monitors(_plan("shared-claim"))
    old_style = copy.deepcopy(model)
    endpoint = old_style["spec"]["podMetricsEndpoints"][0]
    endpoint["portNumber"] = endpoint.pop("targetPort")
    oldest = _crd_validator("monitoring.coreos.com_podmonitors.yaml", "v0.65.0")
    assert any("portNumber" in e for e in _errors(oldest, old_style))
    for release in OPERATOR_RELEASES:
        validator = _crd_validator("monitoring.coreos.com_podmonitors.yaml", release)
        assert _errors(validator, model) == [], release


def test_without_a_namespace_the_monitors_select_any_namespace(
    monitor_validator: jsonschema.protocols.Validator,
) -> None:
    text = SPEC.replace("VISIBILITY", "shared-claim").replace(
        "{namespace: ai, job: demo}", "{job: demo}"
    )
    plan = resolve(parse_spec(yaml.safe_load(text), "t"), "t")
    for monitor in kube.pod_monitors(plan):
        assert monitor["spec"]["namespaceSelector"] == {"any": True}
        assert "namespace" not in monitor["metadata"]
        assert _errors(monitor_validator, monitor) == []


def test_pod_labels_default_to_the_deployment_name() -> None:
    data = yaml.safe_load(SPEC.replace("VISIBILITY", "shared-claim"))
    del data["spec"]["deployment"]["podLabels"]
    plan = resolve(parse_spec(data, "t"), "t")
    assert kube.pod_monitors(plan)[0]["spec"]["selector"] == {
        "matchLabels": {"app.kubernetes.io/name": "demo"}
    }


def test_job_relabeling_doubles_dollar_signs() -> None:
    # The spec refuses '$' in selector values; the builder still escapes it (defence in depth).
    plan = _plan("shared-claim")
    plan = dataclasses.replace(
        plan,
        matchers=tuple(
            Matcher("job", "=", "a$1b") if m.label == "job" else m for m in plan.matchers
        ),
    )
    (relabel,) = kube.pod_monitors(plan)[0]["spec"]["podMetricsEndpoints"][0]["relabelings"]
    assert relabel["replacement"] == "a$$1b"


def test_no_sidecar_and_no_gpu_monitor_without_the_exporter() -> None:
    text = SPEC.replace("exporter: sidecar", "exporter: none").replace("VISIBILITY", "shared-claim")
    plan = resolve(parse_spec(yaml.safe_load(text), "t"), "t")
    files = overlay.overlay_outputs([plan], {})
    assert naming.sidecar_values_file("demo") not in files
    assert [m["metadata"]["name"] for m in kube.pod_monitors(plan)] == ["obsgen-demo-model"]


# --- dashboards -----------------------------------------------------------------------------


def test_dashboards_as_configmaps(plans: list[ServicePlan]) -> None:
    dashboards = _with_dashboards(plans)
    files = overlay.overlay_outputs(plans, dashboards, "configmaps")
    for plan in plans:
        cm = yaml.safe_load(files[naming.manifest_file(plan.name, "dashboard")])
        assert cm["metadata"]["labels"][naming.DASHBOARD_LABEL] == "1"
        assert cm["metadata"]["annotations"] == {"grafana_folder": naming.DASHBOARD_FOLDER}
        assert cm["metadata"]["namespace"] == plan.namespace
        assert cm["metadata"]["name"] == f"obsgen-dashboard-{plan.name}"
        uid = naming.dashboard_uid(plan.name, plan.namespace)
        assert cm["data"] == {f"{uid}.json": dashboards[f"dashboards/{plan.name}.json"]}
    fleet = yaml.safe_load(files["manifests/fleet-overview.yaml"])
    assert fleet["data"] == {f"{FLEET_UID}.json": dashboards["dashboards/fleet-overview.json"]}
    assert fleet["metadata"]["name"] == f"obsgen-dashboard-{FLEET_UID.removeprefix('obsgen-')}"
    assert "namespace" not in fleet["metadata"]
    # no Grafana setting at all: the chart's sidecar loads the ConfigMaps as it is, and any
    # folder setting would move the user's own dashboards (tests/test_install_paths.py)
    assert "grafana" not in yaml.safe_load(files[naming.ALL_SERVICES_VALUES])


def test_dashboards_via_values(plans: list[ServicePlan]) -> None:
    dashboards = _with_dashboards(plans)
    files = overlay.overlay_outputs(plans, dashboards, "values")
    grafana = yaml.safe_load(files[naming.ALL_SERVICES_VALUES])["grafana"]
    inline = grafana["dashboards"][naming.DASHBOARD_PROVIDER]
    assert {k: v["json"] for k, v in inline.items()} == {
        json.loads(text)["uid"]: text for text in dashboards.values()
    }
    (provider_file,) = grafana["dashboardProviders"].values()
    assert provider_file["providers"][0]["options"]["path"].endswith(naming.DASHBOARD_PROVIDER)
    assert "sidecar" not in grafana


def test_no_grafana_values_without_dashboards(plans: list[ServicePlan]) -> None:
    files = overlay.overlay_outputs(plans, {}, "configmaps")
    assert "grafana" not in yaml.safe_load(files[naming.ALL_SERVICES_VALUES])
    assert not any(p.endswith("/dashboard.yaml") for p in files)


def test_a_dashboard_too_large_for_a_configmap_is_an_error(plans: list[ServicePlan]) -> None:
    plan = plans[0]
    uid = naming.dashboard_uid(plan.name, plan.namespace)
    filler = "x" * (install_limits.CONFIGMAP_DATA_LIMIT + 1)
    huge = {naming.dashboard_file(plan.name): dump_json({"uid": uid, "description": filler})}
    with pytest.raises(ObsgenError, match="a ConfigMap holds at most 1,048,576") as err:
        overlay.overlay_outputs(plans, huge)
    assert err.value.exit_code == 1
    assert {d.file for d in err.value.diagnostics} == {naming.manifest_file(plan.name, "dashboard")}


def test_render_command_puts_dashboards_under_values(tmp_path: Path) -> None:
    from generator.cli import main

    specs = ROOT / "specs"  # a folder: fleet-wide files such as values-observability are rendered
    code = main(
        [
            "render",
            "--out",
            str(tmp_path),
            "--skip-promtool",
            "--dashboards-via",
            "values",
            str(specs),
        ]
    )
    assert code == 0
    values = yaml.safe_load((tmp_path / naming.ALL_SERVICES_VALUES).read_text("utf-8"))
    assert "additionalPrometheusRulesMap" in values
    has_dashboards = (tmp_path / "dashboards").is_dir()
    assert ("dashboards" in values.get("grafana", {})) == has_dashboards


# --- names, round trips ----------------------------------------------------------------------


def test_a_service_named_observability_is_rejected() -> None:
    text = SPEC.replace("name: demo, team", "name: observability, team").replace(
        "VISIBILITY", "shared-claim"
    )
    plan = resolve(parse_spec(yaml.safe_load(text), "specs/o.yaml"), "specs/o.yaml")
    with pytest.raises(ObsgenError, match=r"metadata\.name: 'observability' is reserved"):
        overlay.overlay_outputs([plan], {})


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        pytest.param(
            "podLabels", {"bad key!": "x"}, "not a Kubernetes label key", id="bad pod label key"
        ),
        pytest.param(
            "metricsPort",
            "a-very-long-port-name",
            "container port name",
            id="port name over 15 chars",
        ),
        pytest.param(
            "metricsPort",
            70000,
            "port 70000 is out of range; expected 1 to 65535",
            id="port number over 65535",
        ),
    ],
)
def test_bad_install_fields_are_rejected(field: str, value: Any, message: str) -> None:
    data = yaml.safe_load(SPEC.replace("VISIBILITY", "shared-claim"))
    data["spec"]["deployment"][field] = value
    with pytest.raises(ObsgenError, match=re.escape(message)) as caught:
        parse_spec(data, "t")
    assert any(d.path.startswith(f"spec.deployment.{field}") for d in caught.value.diagnostics)


def test_every_overlay_file_round_trips_through_yaml(rendered: dict[str, str]) -> None:
    paths = [p for p in rendered if p.startswith(("helm/", "manifests/"))]
    assert paths
    for path in paths:
        text = rendered[path]
        # Comments: the header, and the reasons above inhibit rules (alertmanagerconfig.yaml).
        body = "".join(x for x in text.splitlines(True) if not x.lstrip().startswith("# "))
        data = yaml.safe_load(text)
        assert dump_yaml(data) == body, path
        assert yaml.safe_load(dump_yaml(data)) == data, path
