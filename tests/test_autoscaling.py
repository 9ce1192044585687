"""``spec.autoscaling``: the KEDA ScaledObject and its consistency with the alerts.

- The rendered ScaledObject validates against KEDA's own CRD (tests/data/keda, v2.20.2), strictly
  (a field the CRD does not declare is an error), for every shape: queue, KV cache, both, from
  zero with each activator source, a cluster label, a StatefulSet, a groupBy.
- ``check`` refuses, with file and field path and no traceback, a target the alert would page
  before (target × maxReplicas × HPA tolerance against the alert's service-level threshold), a
  poll slower than the page's ``for``, scaling from zero without an activator, and the rest.
- In real promtool (Prometheus 3.16 and 2.53): at maxReplicas, each replica at the most the
  autoscaler holds without scaling, the page stays quiet; past the page's threshold at
  maxReplicas it still fires. The KEDA queries evaluate to the totals the HPA divides.
- The object is served as manifests/<service>/scaledobject.yaml and in kube-prometheus-stack's
  ``extraManifests`` (rendered through Helm's ``tpl``: no ``{{``/``}}`` in it).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from generator import autoscaling, naming
from generator.builders import overlay, scaled_object
from generator.builders.rulefile import rule_file
from generator.cli import main
from generator.errors import ObsgenError
from generator.parts.pods import replica_metrics
from generator.plan import ServicePlan
from generator.yamlio import dump_yaml
from tests.autoscaling_support import ADDRESS, LINES, check, good, max_replica_cases, refusal_test
from tests.data_dir import data_path
from tests.factories import set_path, write_spec
from tests.helpers_promtool import promtool_groups
from tests.test_overlay import _strict
from tests.test_server_reality import plan_of, spec_data

KEDA_HTTP = {"source": "keda-http", "selector": {"route_namespace": "ns", "route_name": "svc"}}
KNATIVE = {"source": "knative", "selector": {"k8s_namespace_name": "ns", "kn_revision_name": "x"}}
GATEWAY = {"source": "custom", "metric": "gateway_held_requests", "selector": {"backend": "svc"}}


def _spec(
    server: str = "vllm",
    replicas: Any = None,
    activator: Any = None,
    **auto: Any,
) -> dict[str, Any]:
    data = spec_data(server)
    data["spec"]["deployment"]["replicas"] = replicas or {"min": 1, "max": 4}
    data["spec"]["autoscaling"] = {"serverAddress": ADDRESS, **auto}
    if activator is not None:
        data["spec"]["scaleToZero"] = {"activator": activator}
    return data


SPECS = {
    "queue": _spec(queuePerReplica=20),
    "kv cache": _spec(kvCachePerReplica=0.8),
    "both, from zero through KEDA's interceptor": _spec(
        replicas={"min": 0, "max": 5},
        activator=KEDA_HTTP,
        queuePerReplica=10,
        kvCachePerReplica=0.7,
        activationThreshold=2,
        pollingInterval="15s",
        cooldownPeriod="10m",
    ),
    "from zero through Knative's activator": _spec(
        replicas={"min": 0, "max": 3}, activator=KNATIVE, queuePerReplica=5
    ),
    "from zero through a gateway, cluster label": {
        **(
            d := _spec(
                replicas={"min": 0, "max": 2},
                activator=GATEWAY,
                queuePerReplica=30,
                cluster="eu-1",
            )
        ),
        "spec": {**d["spec"], "prometheus": {"clusterLabel": "cluster"}},
    },
    "Triton (KV cache as used / total blocks), StatefulSet": {
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
    crd = yaml.safe_load(data_path("keda", "keda.sh_scaledobjects.yaml").read_text("utf-8"))
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1")
    schema = _strict(copy.deepcopy(version["schema"]["openAPIV3Schema"]))
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _errors(obj: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator().iter_errors(obj)
    ]


def _object(plan: ServicePlan) -> dict[str, Any]:
    obj = scaled_object.scaled_object(plan)
    assert obj is not None
    return obj


# --- the ScaledObject ------------------------------------------------------------------------


@pytest.mark.parametrize("spec", list(SPECS), ids=list(SPECS))
def test_the_scaled_object_validates_against_kedas_crd(spec: str) -> None:
    plan = plan_of(SPECS[spec])
    obj = _object(plan)
    assert _errors(obj) == []
    assert (obj["apiVersion"], obj["kind"]) == ("keda.sh/v1alpha1", "ScaledObject")
    body = obj["spec"]
    assert body["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": plan.workload_kind,
        "name": plan.deployment_name,
    }
    assert (body["minReplicaCount"], body["maxReplicaCount"]) == (plan.replicas, plan.replicas_max)
    for trigger in body["triggers"]:
        assert trigger["type"] == "prometheus" and trigger["metricType"] == "AverageValue"
        meta = trigger["metadata"]
        assert set(meta) == {"serverAddress", "query", "threshold", "activationThreshold"}
        assert all(isinstance(v, str) for v in meta.values())  # the CRD's map of strings
        assert meta["serverAddress"] == ADDRESS
        float(meta["threshold"]), float(meta["activationThreshold"])


def test_the_crd_check_is_not_vacuous() -> None:
    obj = _object(plan_of(SPECS["queue"]))
    broken = copy.deepcopy(obj)
    broken["spec"]["triggers"][0]["metadata"]["threshold"] = 20  # a number, not a string
    del broken["spec"]["scaleTargetRef"]["name"]
    broken["spec"]["minReplicas"] = 1  # HPA's spelling, not KEDA's
    errors = _errors(broken)
    assert any("threshold" in e for e in errors), errors
    assert any("'name' is a required property" in e for e in errors), errors
    assert any("minReplicas" in e for e in errors), errors


def test_spec_values_reach_the_object() -> None:
    body = _object(plan_of(SPECS["both, from zero through KEDA's interceptor"]))["spec"]
    assert (body["pollingInterval"], body["cooldownPeriod"]) == (15, 600)
    by_name = {t["name"]: t["metadata"] for t in body["triggers"]}
    assert list(by_name) == ["queue", "kv-cache", "activator"]
    assert by_name["queue"]["threshold"] == "10"
    assert by_name["kv-cache"]["threshold"] == "0.7"
    activator = by_name["activator"]
    assert activator["activationThreshold"] == "2"
    # Activation only: ceil(held / target) never asks for a second replica.
    assert float(activator["threshold"]) == scaled_object.ACTIVATION_ONLY_TARGET
    assert "interceptor_" in activator["query"]
    assert 'route_name="svc"' in activator["query"]


def test_from_zero_the_activation_trigger_reads_no_series_of_the_models_pods() -> None:
    for spec in SPECS:
        plan = plan_of(SPECS[spec])
        triggers = {t["name"]: t["metadata"]["query"] for t in _object(plan)["spec"]["triggers"]}
        if plan.replicas > 0:
            assert "activator" not in triggers, spec
            continue
        query = triggers["activator"]
        assert plan.activator is not None
        # Every series it reads is the activator's: none of the pods' own, nor a record of them.
        read = set(re.findall(r"([A-Za-z_:][A-Za-z0-9_:]*)\{", query))
        assert read and read <= set(plan.activator.names), (spec, read)


def test_queries_read_the_services_own_records_and_its_cluster() -> None:
    plan = plan_of(SPECS["from zero through a gateway, cluster label"])
    queries = [t["metadata"]["query"] for t in _object(plan)["spec"]["triggers"]]
    assert queries[0] == (
        'sum(service:model_queue_depth:sum{cluster="eu-1",namespace="ns",service="svc"})'
    )
    assert queries[1] == (
        'sum(max_over_time(gateway_held_requests{backend="svc",cluster="eu-1"}[1m]))'
    )
    records = {r.get("record") for g in rule_file(plan)["groups"] for r in g["rules"]}
    assert "service:model_queue_depth:sum" in records
    grouped = plan_of(SPECS["groupBy model"])
    records = {r.get("record") for g in rule_file(grouped)["groups"] for r in g["rules"]}
    for trigger in _object(grouped)["spec"]["triggers"]:
        name = trigger["metadata"]["query"].removeprefix("sum(").split("{")[0]
        assert name in records, name


def test_no_autoscaling_no_object() -> None:
    data = spec_data("vllm")
    plan = plan_of(data)
    assert scaled_object.scaled_object(plan) is None
    files = overlay.service_overlay(plan, None)
    assert not any("scaledobject" in f for f in files)
    assert "extraManifests" not in yaml.safe_load(files[naming.values_file(plan.name)])


# --- served with the overlay ------------------------------------------------------------------


def test_served_as_a_manifest_and_in_the_helm_overlay() -> None:
    plan = plan_of(SPECS["both, from zero through KEDA's interceptor"])
    obj = _object(plan)
    files = overlay.service_overlay(plan, None)
    manifest = files[naming.manifest_file(plan.name, "scaledobject")]
    assert "kubectl apply -f manifests/svc/scaledobject.yaml" in manifest
    assert yaml.safe_load(manifest) == obj
    values = yaml.safe_load(files[naming.values_file(plan.name)])
    assert values["extraManifests"] == {"obsgen-svc-scaledobject": obj}
    # kube-prometheus-stack renders extraManifests through tpl: nothing it would expand.
    assert "{{" not in dump_yaml(obj) and "}}" not in dump_yaml(obj)
    assert obj["metadata"]["namespace"] == "ns"  # beside the workload, not in the chart's


def test_the_all_services_values_keep_each_services_object() -> None:
    one = plan_of(SPECS["queue"])
    other_data = copy.deepcopy(SPECS["kv cache"])
    other_data["metadata"]["name"] = "other"
    other = plan_of(other_data)
    files = overlay.overlay_outputs([other, one], {})
    values = yaml.safe_load(files[naming.ALL_SERVICES_VALUES])
    assert sorted(values["extraManifests"]) == [
        "obsgen-other-scaledobject",
        "obsgen-svc-scaledobject",
    ]
    for obj in values["extraManifests"].values():
        assert _errors(obj) == []


# --- check: thresholds like with like ----------------------------------------------------------


def test_the_arithmetic_compares_like_with_like() -> None:
    plan = plan_of(SPECS["both, from zero through KEDA's interceptor"])
    # Queue: summed over pods, its page at alerts.queueDepth.max (100 by default).
    assert autoscaling.service_threshold(plan, "queue_depth") == 100
    # KV cache: per pod; its service level is that share on each of maxReplicas pods.
    assert autoscaling.service_threshold(plan, "kv_cache") == pytest.approx(0.95 * 5)
    assert autoscaling.saturation(10, 5) == pytest.approx(55)  # 10 × 5 × 1.1 < 100
    assert autoscaling.saturation(0.7, 5) == pytest.approx(3.85)  # < 4.75


def test_check_accepts_a_consistent_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # 22 × 4 × 1.1 = 96.8 < 100: the autoscaler is out of replicas before the page.
    code, err = check(tmp_path, monkeypatch, capsys, good(queuePerReplica=22))
    assert code == 0, err


REFUSALS = [
    pytest.param(
        good(queuePerReplica=23),
        "spec.autoscaling.queuePerReplica: 23 × 4 replicas × 1.1 (HPA tolerance) = 101.2 "
        "reaches the page's service-level threshold 100 (spec.alerts.queueDepth.max 100)",
        id="queue target the page fires before",
    ),
    pytest.param(
        set_path(good(queuePerReplica=5), "spec.alerts.queueDepth.max", 10),
        "spec.autoscaling.queuePerReplica: 5 × 4 replicas × 1.1 (HPA tolerance) = 22 reaches "
        "the page's service-level threshold 10",
        id="alert max lowered under the target",
    ),
    pytest.param(
        good(queuePerReplica=10, pollingInterval="5m"),
        "spec.autoscaling.pollingInterval: 5m is not shorter than spec.alerts.queueDepth.for (5m)",
        id="poll as slow as the page",
    ),
    pytest.param(
        set_path(good(queuePerReplica=10), "spec.deployment.replicas", 3),
        "spec.deployment.replicas: autoscaling needs a range with min < max (got min 3, max 3)",
        id="a fixed count",
    ),
    pytest.param(
        set_path(good(queuePerReplica=10), "spec.deployment.replicas", {"min": 0, "max": 4}),
        "spec.autoscaling: replicas.min is 0, but at zero replicas the model's own pods export "
        "nothing",
        id="from zero without an activator",
    ),
    pytest.param(
        set_path(good(queuePerReplica=10), "spec.selector", {"job": "o1-preview"}),
        "spec.selector.namespace: autoscaling needs the workload's namespace",
        id="no namespace",
    ),
    pytest.param(
        set_path(good(queuePerReplica=10), "spec.prometheus", {"clusterLabel": "cluster"}),
        "spec.autoscaling.cluster: spec.prometheus.clusterLabel is 'cluster': name the cluster",
        id="cluster label without the cluster",
    ),
    pytest.param(
        good(queuePerReplica=10, cluster="eu-1"),
        "spec.autoscaling.cluster: names a cluster, but spec.prometheus.clusterLabel is not set",
        id="cluster without a cluster label",
    ),
    pytest.param(
        good(kvCachePerReplica=0.5),
        "spec.autoscaling.kvCachePerReplica: server openai-http has no kvCacheUsage gauge",
        id="no KV-cache gauge",
    ),
    pytest.param(
        good(),
        "spec.autoscaling: expected queuePerReplica and/or kvCachePerReplica",
        id="no target",
    ),
    pytest.param(
        good(queuePerReplica=10, pollingInterval="1500ms"),
        "spec.autoscaling.pollingInterval: 1s500ms is not a whole number of seconds",
        id="fractional seconds",
    ),
    pytest.param(
        good(queuePerReplica=0),
        "spec.autoscaling.queuePerReplica: Input should be greater than or equal to 0.001 (got 0)",
        id="zero target",
    ),
    pytest.param(
        good(kvCachePerReplica=1.5),
        "spec.autoscaling.kvCachePerReplica: Input should be less than or equal to 1 (got 1.5)",
        id="KV target above a full cache",
    ),
]


test_check_refuses_naming_file_and_field = refusal_test(REFUSALS)


def test_the_kv_cache_target_is_checked_per_pod(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _spec(kvCachePerReplica=0.87)  # 0.87 × 1.1 = 0.957 > 0.95 on each pod
    code, err = check(tmp_path, monkeypatch, capsys, data)
    assert code == 2
    assert (
        "spec.autoscaling.kvCachePerReplica: 0.87 × 4 replicas × 1.1 (HPA tolerance) = 3.828 "
        "reaches the page's service-level threshold 3.8 (spec.alerts.kvCache.max 0.95 per pod "
        "× 4 replicas)"
    ) in err, err
    data = _spec(kvCachePerReplica=0.86)  # 0.946 < 0.95
    assert check(tmp_path, monkeypatch, capsys, data)[0] == 0


def test_an_alert_turned_off_has_nothing_to_fight() -> None:
    data = _spec(queuePerReplica=500)
    data["spec"]["alerts"] = {"queueDepth": {"enabled": False}}
    assert plan_of(data).autoscaling is not None


# --- promtool: the page at maxReplicas --------------------------------------------------------


def _cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """:func:`tests.autoscaling_support.max_replica_cases`, KEDA's trigger queries read."""
    triggers = {t["name"]: t["metadata"]["query"] for t in _object(plan)["spec"]["triggers"]}
    return max_replica_cases(plan, lambda key: triggers[TRIGGERS[key]])


TRIGGERS = {"queue_depth": "queue", "kv_cache": "kv-cache"}
"""The ScaledObject's trigger of each autoscaled signal."""


PROVED = [s for s in SPECS if s != "from zero through a gateway, cluster label"]


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("spec", PROVED, ids=PROVED)
def test_the_page_waits_for_the_autoscaler_and_still_fires_at_max_replicas(
    tmp_path: Path, line: str, spec: str
) -> None:
    plan = plan_of(SPECS[spec])
    groups = _cases(plan)
    assert groups
    assert len(groups) == 2 * sum(
        1
        for key, target in (
            ("queue_depth", plan.autoscaling and plan.autoscaling.queue_per_replica),
            ("kv_cache", plan.autoscaling and plan.autoscaling.kv_cache_per_replica),
        )
        if target is not None and key in plan.alerts
    )
    result = promtool_groups(line, tmp_path, plan, groups)
    assert result.startswith("PASS"), result


def test_the_cases_catch_a_target_the_page_would_fire_before(tmp_path: Path) -> None:
    """The quiet case is not vacuous: a target check would refuse (0.9 per pod against a 0.95
    page, × 1.1) puts the replicas past the page while the autoscaler still holds."""
    plan = plan_of(SPECS["kv cache"])
    assert plan.autoscaling is not None
    auto = plan.autoscaling.model_copy(update={"kv_cache_per_replica": 0.9})
    unchecked = dataclasses.replace(plan, autoscaling=auto)  # bypasses check
    assert autoscaling.problems(unchecked)
    result = promtool_groups("prometheus3", tmp_path, unchecked, _cases(unchecked))
    assert result.startswith("FAIL") and "stays quiet at maxReplicas" in result, result
    assert math.isclose(autoscaling.saturation(0.9, 4), 3.96)


def test_the_chart_renders_each_map_value_of_extra_manifests_through_tpl() -> None:
    """What the Helm path relies on, read from kube-prometheus-stack 88.5.3 itself: the default
    ``extraManifests`` is empty, a map's values are rendered (keys ignored) and each goes
    through ``tpl`` (so the object must hold no Go template delimiters: see above)."""
    template = data_path("kube-prometheus-stack", "extra-objects.yaml").read_text("utf-8")
    assert '{{- if kindIs "map" $extraObjects -}}' in template
    assert "{{- $extraObjects = values $extraObjects -}}" in template
    assert "{{- tpl (toYaml .) $ | nindent 0 }}" in template
    values = yaml.safe_load(data_path("kube-prometheus-stack", "values.yaml").read_text("utf-8"))
    assert values["extraManifests"] is None


# --- scaled to zero by the autoscaler: the whole rule file ---------------------------------------


def _desired_only(plan: ServicePlan, desired: int) -> list[dict[str, str]]:
    """Only kube-state-metrics' desired and available replicas (``desired``, none available):
    no target, no series of the model at all, for an hour."""
    namespace = {"namespace": "ns"}
    want, available, workload = replica_metrics(plan)
    labels = {**namespace, workload: plan.deployment_name}
    series = []
    for metric, value in ((want, desired), (available, 0)):
        inner = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        series.append({"series": f"{metric}{{{inner}}}", "values": f"{value}+0x60"})
    return series


@pytest.mark.parametrize("line", LINES)
def test_at_zero_every_alert_of_the_rule_file_is_silent_and_a_lost_start_pages(
    tmp_path: Path, line: str
) -> None:
    """KEDA scaled the service to zero: not one alert of its whole rule file (SLOs, latency,
    traffic, targets, guards) fires or is pending. Desired 1 with no pod after the grace:
    ModelTargetDown pages."""
    plan = plan_of(SPECS["both, from zero through KEDA's interceptor"])
    at_zero = {
        "name": "autoscaled to zero: silent",
        "interval": "1m",
        "input_series": _desired_only(plan, 0),
        "promql_expr_test": [{"expr": "ALERTS", "eval_time": "50m", "exp_samples": []}],
    }
    lost = {
        "name": "desired 1, no pod after the startup grace: pages",
        "interval": "1m",
        "input_series": _desired_only(plan, 1),
        "promql_expr_test": [
            {
                "expr": f'count(ALERTS{{alertname="{naming.ALERT_TARGET_DOWN}",'
                'alertstate="firing"})',
                "eval_time": "50m",
                "exp_samples": [{"labels": "{}", "value": 1}],
            }
        ],
    }
    result = promtool_groups(line, tmp_path, plan, [at_zero, lost])
    assert result.startswith("PASS"), result


def test_a_template_delimiter_in_the_activator_selector_is_refused() -> None:
    """The ScaledObject goes through Helm's tpl: no selector may carry ``{{``/``}}`` to it."""
    data = _spec(
        replicas={"min": 0, "max": 2},
        activator={"source": "custom", "metric": "held", "selector": {"a{{b": "x"}},
        queuePerReplica=10,
    )
    data["spec"]["prometheus"] = {"version": "3"}
    with pytest.raises(ObsgenError) as err:
        plan_of(data)
    assert any(
        d.path == "spec.scaleToZero.activator.selector" and "{{" in d.message
        for d in err.value.diagnostics
    ), err.value.diagnostics


HOSTILE: list[Any] = [
    None,
    True,
    -1,
    0,
    1e308,
    float("inf"),
    float("nan"),
    "8",
    "{{ .Values }}",
    [],
    {},
    {"a": 1},
    2**63,
]


@pytest.mark.parametrize(
    "field",
    [
        "serverAddress",
        "queuePerReplica",
        "kvCachePerReplica",
        "activationThreshold",
        "pollingInterval",
        "cooldownPeriod",
        "cluster",
    ],
)
def test_hostile_values_are_clean_errors(
    field: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Never a traceback: ``check`` accepts a value or names the field (exit 0 or 2)."""
    for index, value in enumerate(HOSTILE):
        data = good(queuePerReplica=10)
        data["spec"]["autoscaling"][field] = value
        write_spec(tmp_path / "specs", data, name=f"h{index}.yaml")
        monkeypatch.chdir(tmp_path)
        code = main(["check", f"specs/h{index}.yaml"])
        err = capsys.readouterr().err
        assert code in (0, 2), (value, err)
        assert "Traceback" not in err, (value, err)
        if code == 2:
            assert f"specs/h{index}.yaml: spec.autoscaling" in err, (value, err)
