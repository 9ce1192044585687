"""``spec.autoscaling.autoscaler: hpa``: the HorizontalPodAutoscaler, prometheus-adapter's rules,
and their consistency with the alerts.

- The HPA validates, strictly, against the Kubernetes ``autoscaling/v2`` OpenAPI schema
  (tests/data/kubernetes: an extract of the spec side, see its README) for every shape.
- The adapter rules use only fields prometheus-adapter v0.12.0's config declares
  (tests/data/prometheus-adapter/config.go), and the chart (5.3.0) writes ``rules.external``
  verbatim as ``externalRules``.
- In real promtool (Prometheus 3.16 and 2.53): the query the adapter builds for the HPA's
  External metric (``BuildExternal``: selector by key, then the namespace) evaluates to the total
  the HPA divides by ``averageValue``; at maxReplicas, each replica at the most the HPA holds,
  the page stays quiet; past its threshold it still fires.
- ``check`` refuses min 0 (no HPAScaleToZero), KEDA-only fields, a target the page would fire
  before, with file and field path, no traceback. Specs without ``autoscaler: hpa`` render as
  before (no HPA, no adapter file).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from generator import naming
from generator.builders import hpa, overlay, scaled_object
from generator.builders.rulefile import rule_file
from generator.plan import ServicePlan
from tests.autoscaling_support import ADDRESS, LINES, check, good, max_replica_cases, refusal_test
from tests.data_dir import data_path
from tests.factories import set_path
from tests.helpers_promtool import promtool_groups
from tests.test_overlay import _strict
from tests.test_server_reality import plan_of, spec_data


def _spec(server: str = "vllm", replicas: Any = None, **auto: Any) -> dict[str, Any]:
    data = spec_data(server)
    data["spec"]["deployment"]["replicas"] = replicas or {"min": 1, "max": 4}
    data["spec"]["autoscaling"] = {"autoscaler": "hpa", "serverAddress": ADDRESS, **auto}
    return data


SPECS = {
    "queue": _spec(queuePerReplica=20),
    "kv cache": _spec(kvCachePerReplica=0.8),
    "both": _spec(replicas={"min": 2, "max": 5}, queuePerReplica=10, kvCachePerReplica=0.7),
    "cluster label": {
        **(d := _spec(queuePerReplica=15, cluster="eu-1")),
        "spec": {**d["spec"], "prometheus": {"clusterLabel": "cluster"}},
    },
    "Triton, StatefulSet": {
        **(d := _spec("triton", kvCachePerReplica=0.5, queuePerReplica=4)),
        "spec": {
            **d["spec"],
            "deployment": {**d["spec"]["deployment"], "kind": "StatefulSet"},
        },
    },
    "groupBy model": {
        **(d := _spec(queuePerReplica=20, kvCachePerReplica=0.8)),
        "spec": {**d["spec"], "groupBy": ["model_name"]},
    },
}


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    doc = json.loads(data_path("kubernetes", "autoscaling-v2-hpa.openapi.json").read_text("utf-8"))
    schema = _strict(
        {
            **doc,
            "$ref": "#/components/schemas/io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler",
        }
    )
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    cls.check_schema(schema)
    return cls(schema)


def _errors(obj: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator().iter_errors(obj)
    ]


def _hpa(plan: ServicePlan) -> dict[str, Any]:
    obj = hpa.hpa(plan)
    assert obj is not None
    return obj


QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+)?$")


# --- the HPA -----------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", list(SPECS), ids=list(SPECS))
def test_the_hpa_validates_against_the_kubernetes_schema(spec: str) -> None:
    plan = plan_of(SPECS[spec])
    obj = _hpa(plan)
    assert _errors(obj) == []
    assert (obj["apiVersion"], obj["kind"]) == ("autoscaling/v2", "HorizontalPodAutoscaler")
    body = obj["spec"]
    assert body["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": plan.workload_kind,
        "name": plan.deployment_name,
    }
    assert (body["minReplicas"], body["maxReplicas"]) == (plan.replicas, plan.replicas_max)
    assert body["minReplicas"] >= 1
    for metric in body["metrics"]:
        assert metric["type"] == "External"
        target = metric["external"]["target"]
        assert target["type"] == "AverageValue"
        assert QUANTITY.match(target["averageValue"]), target
        assert metric["external"]["metric"]["selector"]["matchLabels"][naming.SERVICE] == "svc"
    # KEDA's object is not rendered beside it.
    assert scaled_object.scaled_object(plan) is None


def test_the_schema_check_is_not_vacuous() -> None:
    obj = _hpa(plan_of(SPECS["queue"]))
    broken = copy.deepcopy(obj)
    broken["spec"]["metrics"][0]["external"]["target"]["averageValue"] = 20  # not a Quantity
    del broken["spec"]["maxReplicas"]
    broken["spec"]["minReplicaCount"] = 1  # KEDA's spelling, not the HPA's
    errors = _errors(broken)
    assert any("averageValue" in e for e in errors), errors
    assert any("'maxReplicas' is a required property" in e for e in errors), errors
    assert any("minReplicaCount" in e for e in errors), errors


def test_each_target_is_its_own_external_metric() -> None:
    plan = plan_of(SPECS["cluster label"])
    (metric,) = _hpa(plan)["spec"]["metrics"]
    assert metric["external"] == {
        "metric": {
            "name": "obsgen_service_model_queue_depth_sum",
            "selector": {"matchLabels": {"cluster": "eu-1", "service": "svc"}},
        },
        "target": {"type": "AverageValue", "averageValue": "15"},
    }
    both = _hpa(plan_of(SPECS["both"]))["spec"]["metrics"]
    assert [m["external"]["target"]["averageValue"] for m in both] == ["10", "0.7"]


# --- prometheus-adapter's rules ------------------------------------------------------------------


def _yaml_tags(struct: str) -> set[str]:
    """The yaml keys of Go struct ``struct`` in the adapter's config.go at v0.12.0."""
    source = data_path("prometheus-adapter", "config.go").read_text("utf-8")
    body = re.search(rf"type {struct} struct {{(.*?)\n}}", source, re.S)
    assert body, struct
    return set(re.findall(r'yaml:"([A-Za-z]+)', body.group(1)))


def test_the_adapter_rules_use_only_fields_its_config_declares() -> None:
    values = hpa.adapter_values([plan_of(SPECS["both"])])
    assert values is not None
    rules = values["rules"]["external"]
    assert len(rules) == 2
    for rule in rules:
        assert set(rule) <= _yaml_tags("DiscoveryRule")
        assert set(rule["resources"]) <= _yaml_tags("ResourceMapping")
        assert set(rule["name"]) == _yaml_tags("NameMapping")
        for override in rule["resources"]["overrides"].values():
            assert set(override) <= _yaml_tags("GroupResource")
        assert rule["metricsQuery"] == "sum(<<.Series>>{<<.LabelMatchers>>})"
    # The series query selects the recorded series with the labels the HPA matches on.
    records = {
        r.get("record") for g in rule_file(plan_of(SPECS["both"]))["groups"] for r in g["rules"]
    }
    for rule in rules:
        assert rule["seriesQuery"].split("{")[0] in records
    assert values["prometheus"] == {
        "url": "http://prometheus-operated.monitoring.svc",
        "port": 9090,
        "path": "",
    }


def test_the_chart_writes_rules_external_verbatim_as_external_rules() -> None:
    """prometheus-adapter chart 5.3.0: ``rules.external`` defaults to ``[]`` and goes through
    ``toYaml`` (no ``tpl``: the adapter's ``<<``/``>>`` template reaches it as written)."""
    template = data_path("prometheus-adapter", "configmap.yaml").read_text("utf-8")
    assert "externalRules:\n{{ toYaml .Values.rules.external | indent 4 }}" in template
    values = yaml.safe_load(data_path("prometheus-adapter", "values.yaml").read_text("utf-8"))
    assert values["rules"]["external"] == []
    assert set(values["prometheus"]) >= {"url", "port", "path"}


def test_the_adapter_builds_external_queries_as_modelled() -> None:
    """``BuildExternal`` at v0.12.0: the selector's requirements, then the HPA's namespace;
    ``QueryForExternalSeries`` passes an empty GroupBy."""
    source = data_path("prometheus-adapter", "metrics_query.go").read_text("utf-8")
    build = source[source.index("func (q *metricsQuery) BuildExternal") :]
    assert build.index("createQueryPartsFromSelector(metricSelector)") < build.index(
        'if q.namespaced && namespace != ""'
    )
    assert (
        hpa.adapter_query(
            "service:model_queue_depth:sum", {"service": "svc", "cluster": "eu-1"}, "ns"
        )
        == 'sum(service:model_queue_depth:sum{cluster="eu-1",service="svc",namespace="ns"})'
    )


# --- served with the overlay ---------------------------------------------------------------------


def test_served_as_a_manifest_in_the_helm_overlay_and_as_adapter_values() -> None:
    plan = plan_of(SPECS["both"])
    obj = _hpa(plan)
    files = overlay.service_overlay(plan, None)
    manifest = files[naming.manifest_file(plan.name, "hpa")]
    assert "kubectl apply -f manifests/svc/hpa.yaml" in manifest
    assert yaml.safe_load(manifest) == obj
    assert not any("scaledobject" in f for f in files)
    values = yaml.safe_load(files[naming.values_file(plan.name)])
    assert values["extraManifests"] == {"obsgen-svc-hpa": obj}
    adapter = files[hpa.adapter_values_file(plan.name)]
    assert "prometheus-community/prometheus-adapter" in adapter
    assert yaml.safe_load(adapter) == hpa.adapter_values([plan])
    assert naming.owned_by(hpa.adapter_values_file(plan.name), plan.name)


def test_the_fleet_adapter_values_hold_every_services_rules_once() -> None:
    one = plan_of(SPECS["queue"])
    other_data = copy.deepcopy(SPECS["both"])
    other_data["metadata"]["name"] = "other"
    other = plan_of(other_data)
    keda = plan_of(
        set_path(
            copy.deepcopy(SPECS["queue"])
            | {"metadata": {**SPECS["queue"]["metadata"], "name": "k"}},
            "spec.autoscaling",
            {"serverAddress": ADDRESS, "queuePerReplica": 20},
        )
    )
    files = overlay.overlay_outputs([keda, other, one], {})
    fleet = yaml.safe_load(files[hpa.FLEET_ADAPTER_VALUES])
    names = [r["name"]["as"] for r in fleet["rules"]["external"]]
    assert names == sorted(set(names)) and len(names) == 2  # the queue record once
    values = yaml.safe_load(files[naming.ALL_SERVICES_VALUES])
    assert sorted(values["extraManifests"]) == [
        "obsgen-k-scaledobject",
        "obsgen-other-hpa",
        "obsgen-svc-hpa",
    ]


def test_no_hpa_no_adapter_file() -> None:
    plan = plan_of(spec_data("vllm"))
    assert hpa.hpa(plan) is None and hpa.adapter_values([plan]) is None
    files = overlay.overlay_outputs([plan], {})
    assert not any("prometheus-adapter" in f or f.endswith("/hpa.yaml") for f in files)


# --- check --------------------------------------------------------------------------------------


def _good_hpa(**auto: Any) -> dict[str, Any]:
    data = good(**auto)
    data["spec"]["autoscaling"]["autoscaler"] = "hpa"
    return data


def test_check_accepts_a_consistent_hpa(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = check(tmp_path, monkeypatch, capsys, _good_hpa(queuePerReplica=22))
    assert code == 0, err


REFUSALS = [
    pytest.param(
        set_path(_good_hpa(queuePerReplica=10), "spec.deployment.replicas", {"min": 0, "max": 4}),
        "spec.deployment.replicas: autoscaler hpa cannot scale from zero: an HPA's minReplicas "
        "must be at least 1 (0 needs the alpha HPAScaleToZero feature gate",
        id="min 0",
    ),
    pytest.param(
        _good_hpa(queuePerReplica=23),
        "spec.autoscaling.queuePerReplica: 23 × 4 replicas × 1.1 (HPA tolerance) = 101.2 "
        "reaches the page's service-level threshold 100 (spec.alerts.queueDepth.max 100)",
        id="queue target the page fires before",
    ),
    pytest.param(
        _good_hpa(queuePerReplica=10, pollingInterval="15s"),
        "spec.autoscaling.pollingInterval: is KEDA's; autoscaler hpa has no such field",
        id="KEDA's polling interval",
    ),
    pytest.param(
        _good_hpa(queuePerReplica=10, activationThreshold=3),
        "spec.autoscaling.activationThreshold: is KEDA's; autoscaler hpa has no such field",
        id="KEDA's activation",
    ),
    pytest.param(
        set_path(_good_hpa(queuePerReplica=10), "spec.alerts.queueDepth.for", "10s"),
        "spec.alerts.queueDepth.for: 10s is not longer than the HPA's 15s sync period",
        id="a page faster than the HPA",
    ),
    pytest.param(
        set_path(
            _good_hpa(queuePerReplica=10, cluster="eu 1"),
            "spec.prometheus",
            {"clusterLabel": "cluster"},
        ),
        "spec.autoscaling.cluster: 'eu 1' is not a Kubernetes label value",
        id="cluster not a label value",
    ),
    pytest.param(
        set_path(_good_hpa(queuePerReplica=10), "spec.autoscaling.autoscaler", "vpa"),
        "spec.autoscaling.autoscaler: Input should be 'keda' or 'hpa'",
        id="unknown autoscaler",
    ),
]


test_check_refuses_naming_file_and_field = refusal_test(REFUSALS)


# --- promtool: what the adapter asks, and the page at maxReplicas --------------------------------


def _cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """:func:`tests.autoscaling_support.max_replica_cases`, the query prometheus-adapter builds
    for the HPA's External metric read (``BuildExternal``: selector by key, then namespace)."""
    assert plan.namespace is not None
    metrics = {
        m["external"]["metric"]["name"]: m["external"]["metric"]["selector"]["matchLabels"]
        for m in _hpa(plan)["spec"]["metrics"]
    }
    records = {r["name"]["as"]: r["seriesQuery"].split("{")[0] for r in hpa.adapter_rules([plan])}
    by_key = {
        "queue_depth": naming.record(plan.group_by, naming.QUEUE_DEPTH, "sum"),
        "kv_cache": naming.record((*plan.group_by, "pod"), naming.KV_CACHE_USAGE, "max"),
    }

    def query_of(key: str) -> str:
        name = hpa.metric_name(by_key[key])
        assert records[name] == by_key[key]
        assert plan.namespace is not None
        return hpa.adapter_query(records[name], metrics[name], plan.namespace)

    return max_replica_cases(plan, query_of, " (HPA)")


PROVED = [s for s in SPECS if s != "cluster label"]


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("spec", PROVED, ids=PROVED)
def test_the_adapter_query_reads_the_total_and_the_page_waits_for_the_hpa(
    tmp_path: Path, line: str, spec: str
) -> None:
    plan = plan_of(SPECS[spec])
    groups = _cases(plan)
    assert groups
    result = promtool_groups(line, tmp_path, plan, groups)
    assert result.startswith("PASS"), result
