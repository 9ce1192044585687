"""Issue 13, the guards: each numbered case of the issue as a regression test on the real
promtool, pod identity without name patterns, lost GPUs and MIG, and the completeness of the
input guards against the rendered rules.

Expectations here are written by hand (alert names, labels, values); annotations are the
rules' own templates rendered by ``render_template``, since promtool compares them too.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import promql_parser as P
import pytest
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import CollectorRegistry

from generator import naming
from generator.builders.guard_rules import signal_inputs, unguarded_reads
from generator.builders.rulefile import rule_file, rule_groups
from generator.errors import ObsgenError
from generator.lint import promql as q
from generator.parts import go_templates, promtool_series, series_parts
from generator.parts.pods import example_pods, generated_name
from generator.plan import ServicePlan, resolve
from generator.promql import Matcher, quote
from generator.render import find_specs, load_plans
from generator.signals.healthy import healthy as healthy_service
from generator.spec import parse_spec
from generator.yamlio import dump_yaml
from nvml_exporter.collector import NvmlCollector
from nvml_exporter.fake import FakeGpu, FakeMig, FakeNvml
from nvml_exporter.nvml import MIG_ENABLED
from tests.helpers_promtool import ROOT, assert_ok, run_promtool

NS = "llm-serving"
GIB = 2**30
LONG_NAME = "llama-3-1-70b-instruct-awq-tensor-parallel-serving"  # 50 characters (case 4)


def spec_data(**spec: Any) -> dict[str, Any]:
    """A vLLM spec with the GPU sidecar; ``spec`` keys replace those of ``spec``."""
    body: dict[str, Any] = {
        "server": "vllm",
        "selector": {"namespace": NS, "job": "llama"},
        "prometheus": {"scrapeInterval": "30s"},
        "gpu": {"exporter": "sidecar"},
        "deployment": {"name": "llama", "container": "vllm", "memoryLimit": "64Gi"},
    }
    body.update(copy.deepcopy(spec))
    return {
        "apiVersion": "obsgen/v1alpha1",
        "kind": "ModelService",
        "metadata": {"name": "llama", "team": "ml"},
        "spec": body,
    }


def plan_of(data: dict[str, Any]) -> ServicePlan:
    return resolve(parse_spec(data, "t.yaml"), "t.yaml")


def series(name: str, labels: Mapping[str, str], values: str) -> dict[str, str]:
    inner = ",".join(f"{k}={quote(v)}" for k, v in sorted(labels.items()))
    return {"series": f"{name}{{{inner}}}", "values": values}


def expect(
    plan: ServicePlan,
    alert: str,
    labels: Mapping[str, str],
    value: float | None = None,
    **rule: str,
) -> dict[str, Any]:
    """The expected alert: the rule named ``alert`` whose static labels include ``rule``."""
    found = [
        r
        for g in rule_groups(plan)
        for r in g["rules"]
        if r.get("alert") == alert and all(r["labels"].get(k) == v for k, v in rule.items())
    ]
    assert len(found) == 1, (alert, rule, len(found))
    merged = {**labels, **found[0]["labels"]}
    full = {**merged, "alertname": alert}
    return {
        "exp_labels": dict(sorted(merged.items())),
        "exp_annotations": {
            k: go_templates.render_template(v, full, value)
            for k, v in sorted(found[0]["annotations"].items())
        },
    }


def run_case(
    tmp_path: Path,
    plan: ServicePlan,
    inputs: Sequence[dict[str, str]],
    checks: Sequence[tuple[str, str, list[dict[str, Any]]]],
) -> None:
    """Run promtool on ``plan``'s rules with ``inputs``; each check is (time, alert, alerts)."""
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule_file(plan)), encoding="utf-8")
    test = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": list(inputs),
                "alert_rule_test": [
                    {"eval_time": at, "alertname": alert, "exp_alerts": expected}
                    for at, alert, expected in checks
                ],
            }
        ],
    }
    path = tmp_path / "case.test.yaml"
    path.write_text(dump_yaml(test), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", path), [str(path)])


def owners(name: str, pod: str, replicaset: str | None) -> list[dict[str, str]]:
    """kube-state-metrics owner series: pod → ReplicaSet → Deployment, or pod → StatefulSet."""
    if replicaset is None:
        return [
            series(
                "kube_pod_owner",
                {"namespace": NS, "pod": pod, "owner_kind": "StatefulSet", "owner_name": name},
                "1+0x40",
            )
        ]
    return [
        series(
            "kube_pod_owner",
            {"namespace": NS, "pod": pod, "owner_kind": "ReplicaSet", "owner_name": replicaset},
            "1+0x40",
        ),
        series(
            "kube_replicaset_owner",
            {
                "namespace": NS,
                "replicaset": replicaset,
                "owner_kind": "Deployment",
                "owner_name": name,
            },
            "1+0x40",
        ),
    ]


def memory(pod: str, used_ratio: float, container: str = "vllm") -> list[dict[str, str]]:
    labels = {"namespace": NS, "pod": pod, "container": container}
    return [
        series("container_memory_working_set_bytes", labels, f"{int(64 * GIB * used_ratio)}+0x40"),
        series(
            "kube_pod_container_resource_limits",
            {**labels, "resource": "memory"},
            f"{64 * GIB}+0x40",
        ),
    ]


def memory_alert(plan: ServicePlan, pod: str, ratio: float) -> dict[str, Any]:
    labels = {"namespace": NS, "pod": pod, "container": "vllm"}
    return expect(plan, naming.ALERT_MEMORY_HEADROOM, labels, ratio)


# --- case 4: pod names are not a pattern ----------------------------------------------------


def _renamed(s: promtool_series.Series, names: Mapping[str, str]) -> promtool_series.Series:
    """``s`` with every label value in ``names`` replaced (pod and owner names)."""
    out = promtool_series.Series()
    for (name, labels), per_step in s.counters.items():
        out.add(name, {k: names.get(v, v) for k, v in labels}, per_step)
    for (name, labels), values in s.gauges.items():
        out.gauge(name, {k: names.get(v, v) for k, v in labels}, values)
    return out


def test_case_4_truncated_pod_names_still_reach_the_gpu_and_memory_alerts(tmp_path: Path) -> None:
    """50-character deployment: Kubernetes cuts the pod prefix to 58 characters, so the pods are
    ``<name>-5f7c9d8x2k7p``. Every series of a healthy service is there, but at 95 °C and 96 %
    memory: GPUTemperatureHigh and ModelMemoryHeadroomLow fire; GPUExporterDown and the input
    guards do not."""
    plan = plan_of(
        spec_data(deployment={"name": LONG_NAME, "container": "vllm", "memoryLimit": "64Gi"})
    )
    replicaset = f"{LONG_NAME}-5f7c9d8x2k"
    pod = generated_name(f"{replicaset}-", "x2k7p")
    assert pod == f"{LONG_NAME}-5f7c9d8x2k7p"  # as the issue saw it
    assert not re.fullmatch(re.escape(LONG_NAME) + "-[a-z0-9]+-[a-z0-9]+", pod)  # the old rule
    old_pod, old_replicaset = example_pods(plan)[0]
    s = _renamed(
        healthy_service(plan, [promtool_series.Klass(600)]),
        {old_pod: pod, old_replicaset: replicaset},
    )
    gpu = {"namespace": NS, "pod": pod, "container": "nvml-exporter", "job": "obsgen-llama-gpu"}
    s.gauge("gpu_temperature_celsius", {**gpu, "uuid": series_parts.UUID}, "95+0x60")
    container = {"namespace": NS, "pod": pod, "container": "vllm"}
    s.gauge("container_memory_working_set_bytes", container, f"{int(64 * GIB * 0.96)}+0x60")
    gpu_out = {"namespace": NS, "pod": pod, "uuid": series_parts.UUID}
    temperature = expect(plan, naming.ALERT_GPU_TEMPERATURE, gpu_out, 95)
    run_case(
        tmp_path,
        plan,
        _rendered(s),
        [
            ("20m", naming.ALERT_GPU_TEMPERATURE, [temperature]),
            ("20m", naming.ALERT_MEMORY_HEADROOM, [memory_alert(plan, pod, 0.96)]),
            ("20m", naming.ALERT_GPU_EXPORTER_DOWN, []),
            ("20m", naming.ALERT_SIGNAL_MISSING, []),
        ],
    )


def _deployment(name: str, kind: str = "Deployment") -> dict[str, Any]:
    return {"name": name, "kind": kind, "container": "vllm", "memoryLimit": "64Gi"}


MAX_NAME = "m" * 40 + "-" + "x" * 22  # 63 characters: the longest DNS-1123 label


@pytest.mark.parametrize(
    ("deployment", "pod", "replicaset"),
    [
        pytest.param(
            _deployment(MAX_NAME),
            generated_name(f"{MAX_NAME}-7d9f8b6c5d-", "q7w3z"),  # the name itself is cut
            f"{MAX_NAME}-7d9f8b6c5d",
            id="63-character deployment name",
        ),
        pytest.param(
            _deployment("llama-serve", "StatefulSet"), "llama-serve-0", None, id="StatefulSet pod"
        ),
    ],
)
def test_pods_are_attributed_by_owner_whatever_their_name(
    tmp_path: Path, deployment: dict[str, Any], pod: str, replicaset: str | None
) -> None:
    plan = plan_of(spec_data(deployment=deployment))
    inputs = [
        series("up", {"namespace": NS, "job": "llama", "instance": "a"}, "1+0x40"),
        *owners(deployment["name"], pod, replicaset),
        *memory(pod, 0.96),
    ]
    run_case(
        tmp_path,
        plan,
        inputs,
        [("10m", naming.ALERT_MEMORY_HEADROOM, [memory_alert(plan, pod, 0.96)])],
    )


def test_a_name_that_prefixes_another_service_claims_none_of_its_pods(tmp_path: Path) -> None:
    """Service ``llama`` (Deployment) beside ``llama-guard`` (StatefulSet, same namespace and
    container name). ``llama-[a-z0-9]+-[a-z0-9]+`` matched ``llama-guard-0``; owner series do
    not: only llama's own pod at 96 % fires, not llama-guard's at 99 %."""
    plan = plan_of(spec_data())
    ours = generated_name("llama-7d9f8b6c5d-", "x2k4q")
    theirs = "llama-guard-0"
    assert re.fullmatch("llama-[a-z0-9]+-[a-z0-9]+", theirs)
    inputs = [
        series("up", {"namespace": NS, "job": "llama", "instance": "a"}, "1+0x40"),
        *owners("llama", ours, "llama-7d9f8b6c5d"),
        *owners("llama-guard", theirs, None),
        *memory(ours, 0.96),
        *memory(theirs, 0.99),
    ]
    run_case(
        tmp_path,
        plan,
        inputs,
        [("10m", naming.ALERT_MEMORY_HEADROOM, [memory_alert(plan, ours, 0.96)])],
    )


def test_without_kube_state_metrics_the_targets_pod_label_attributes_pods(tmp_path: Path) -> None:
    plan = plan_of(spec_data())
    pod = "anything-at-all"
    inputs = [
        series("up", {"namespace": NS, "job": "llama", "instance": "a", "pod": pod}, "1+0x40"),
        *memory(pod, 0.96),
    ]
    run_case(
        tmp_path,
        plan,
        inputs,
        [("10m", naming.ALERT_MEMORY_HEADROOM, [memory_alert(plan, pod, 0.96)])],
    )


def test_pods_not_attributed_is_a_ticket_not_silence(tmp_path: Path) -> None:
    """A healthy service, but its pod's owner series name another deployment and its target
    carries no pod label: the memory alerts cannot see the pod at 96 %, and
    ModelSignalMissing{signal="pods"} says so (the memory guards, which need attributed pods,
    stay quiet)."""
    plan = plan_of(spec_data())
    pod, _ = example_pods(plan)[0]
    s = healthy_service(plan, [promtool_series.Klass(600)])
    s.gauges = {
        (name, labels): values
        for (name, labels), values in s.gauges.items()
        if name not in ("kube_pod_owner", "kube_replicaset_owner", "up")
        or (name == "up" and dict(labels)["job"] != "llama")
    }
    s.gauge("up", {"namespace": NS, "job": "llama", "instance": "10.0.0.1:8000"}, "1+0x60")
    for item in owners("other", pod, "other-7d9f8b6c5d"):
        name, _, rest = item["series"].partition("{")
        labels = dict(re.findall(r'(\w+)="([^"]*)"', rest))
        s.gauge(name, labels, "1+0x60")
    s.gauge(
        "container_memory_working_set_bytes",
        {"namespace": NS, "pod": pod, "container": "vllm"},
        f"{int(64 * GIB * 0.96)}+0x60",
    )
    guard = expect(
        plan, naming.ALERT_SIGNAL_MISSING, {"namespace": NS}, signal="pods", metric="kube_pod_owner"
    )
    run_case(
        tmp_path,
        plan,
        _rendered(s),
        [
            ("20m", naming.ALERT_MEMORY_HEADROOM, []),
            ("20m", naming.ALERT_SIGNAL_MISSING, [guard]),
        ],
    )


# --- cases 1 and 2, and a bucket an SLO counts: inputs that vanished --------------------------


def _rendered(s: promtool_series.Series, steps: int = 40) -> list[dict[str, str]]:
    return s.render(steps)


def test_case_1_renamed_kv_cache_gauge(tmp_path: Path) -> None:
    """Spec for vLLM 0.9.1 (vllm:gpu_cache_usage_perc); the pods run 0.11 (only
    vllm:kv_cache_usage_perc, at 0.97). The rules read both names of the renamed gauge
    (issue 13's other half), so ModelKVCacheNearFull fires and no guard does. Should the
    gauge vanish under both names (a later rename), the guard names it."""
    spec = spec_data(serverVersion="0.9.1", alerts={"kvCache": {"max": 0.9}})
    plan = plan_of(spec)
    running = plan_of({**spec, "spec": {**spec["spec"], "serverVersion": "0.11"}})
    assert plan.kv_cache_usage is not None and running.kv_cache_usage is not None
    assert plan.kv_cache_usage.names == ("vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc")
    assert running.kv_cache_usage.name == "vllm:kv_cache_usage_perc"
    exposed = healthy_service(running, [promtool_series.Klass(6000)])
    pod = promtool_series.example_pod(running)
    labels = promtool_series.labels_of(running, running.kv_cache_usage.matchers, pod=pod)
    exposed.gauge("vllm:kv_cache_usage_perc", labels, "0.97+0x60")
    full = expect(plan, naming.ALERT_KV_CACHE, {"namespace": NS, "pod": pod}, 0.97)
    run_case(
        tmp_path,
        plan,
        _rendered(exposed),
        [
            ("30m", naming.ALERT_KV_CACHE, [full]),
            ("30m", naming.ALERT_SIGNAL_MISSING, []),
        ],
    )
    renamed_again = _renamed(exposed, {})
    renamed_again.gauges = {
        ("vllm:kv_cache_usage_ratio" if name == "vllm:kv_cache_usage_perc" else name, lb): v
        for (name, lb), v in renamed_again.gauges.items()
    }
    guard = expect(
        plan,
        naming.ALERT_SIGNAL_MISSING,
        {"namespace": NS},
        signal="kvCacheUsage",
        metric="vllm:gpu_cache_usage_perc",
    )
    run_case(
        tmp_path,
        plan,
        _rendered(renamed_again),
        [
            ("30m", naming.ALERT_KV_CACHE, []),
            ("30m", naming.ALERT_SIGNAL_MISSING, [guard]),
        ],
    )


def test_case_2_request_counter_not_exposed_fires_the_guard(tmp_path: Path) -> None:
    """The spec says vLLM 0.8.5 on the V1 engine (availability from http_requests_total); the
    pods run the V0 engine, which has every vllm:* series, with traffic, but no HTTP counter.
    The error ratio and the availability SLO see no traffic; ModelSignalMissing{signal=
    "requests"} names the missing counter. (For a spec that says V0, or a release before
    0.8.3, the rules read vllm:request_success_total instead: issue 13's other half.)"""
    spec = spec_data(serverVersion="0.8.5", slos=[{"name": "availability", "objective": 99.9}])
    plan = plan_of(spec)
    assert plan.requests.name == "http_requests_total"
    exposed = healthy_service(plan, [promtool_series.Klass(600)])
    exposed.counters = {k: v for k, v in exposed.counters.items() if k[0] != "http_requests_total"}
    assert any(name == "vllm:e2e_request_latency_seconds_count" for name, _ in exposed.counters)
    guard = expect(
        plan,
        naming.ALERT_SIGNAL_MISSING,
        {"namespace": NS},
        signal="requests",
        metric="http_requests_total",
    )
    run_case(
        tmp_path,
        plan,
        _rendered(exposed),
        [
            ("30m", naming.ALERT_SIGNAL_MISSING, [guard]),
            ("30m", naming.ALERT_ERROR_RATIO, []),
        ],
    )


def test_a_latency_slo_bucket_missing_beside_its_count_fires_the_guard(tmp_path: Path) -> None:
    """The histogram's _count and other buckets are there, but not le="30", which the latency
    SLO counts as good: the SLI would read 100 % bad or nothing. The guard names the bucket."""
    plan = load_plans([ROOT / "specs" / "o1-preview.yaml"], ROOT)[0]
    exposed = healthy_service(plan, [promtool_series.Klass(6000)])
    bucket = "http_request_duration_seconds_bucket"
    exposed.counters = {
        k: v
        for k, v in exposed.counters.items()
        if not (k[0] == bucket and dict(k[1])["le"] == "30")
    }
    guard = expect(
        plan,
        naming.ALERT_SIGNAL_MISSING,
        {"namespace": "ai-inference"},
        signal="requestDuration",
        metric=bucket,
        le="30",
    )
    run_case(tmp_path, plan, _rendered(exposed), [("30m", naming.ALERT_SIGNAL_MISSING, [guard])])


def test_a_renamed_gauge_without_aliases_fires_the_guard_and_a_down_target_does_not(
    tmp_path: Path,
) -> None:
    """queueDepth declared as a name the server does not expose (no preset alias can save it):
    with the target up the guard fires; with the target down it stays silent."""
    plan = plan_of(spec_data(metrics={"queueDepth": {"name": "my_queue_depth"}}))
    exposed = healthy_service(plan, [promtool_series.Klass(600)])
    exposed.gauges = {k: v for k, v in exposed.gauges.items() if k[0] != "my_queue_depth"}
    guard = expect(
        plan,
        naming.ALERT_SIGNAL_MISSING,
        {"namespace": NS},
        signal="queueDepth",
        metric="my_queue_depth",
    )
    run_case(tmp_path, plan, _rendered(exposed), [("16m", naming.ALERT_SIGNAL_MISSING, [guard])])
    down = [
        series("up", {"namespace": NS, "job": "llama", "instance": "a"}, "0+0x40"),
        series(
            "up",
            {"namespace": NS, "job": "obsgen-llama-gpu", "container": "nvml-exporter", "pod": "p"},
            "0+0x40",
        ),
    ]
    run_case(tmp_path, plan, down, [("16m", naming.ALERT_SIGNAL_MISSING, [])])


# --- case 6: GPU faults, from the real exporter's output ------------------------------------


def _exporter_series(
    nvml: FakeNvml, pod: str, lose: int | None = None, steps: int = 40
) -> list[dict[str, str]]:
    """What Prometheus would store from a scrape of the real collector over ``nvml`` (GPU
    ``lose`` lost after start-up), held constant, with the target labels obsgen's GPU
    PodMonitor gives the sidecar."""
    registry = CollectorRegistry()
    collector = NvmlCollector(nvml, registry=registry)
    assert collector.initialise()
    if lose is not None:
        nvml.lose(lose)
        generate_latest(registry)  # this collection finds it lost
    text = generate_latest(registry).decode()
    target = {"namespace": NS, "pod": pod, "container": "nvml-exporter", "job": "obsgen-llama-gpu"}
    out = [series("up", target, f"1+0x{steps}")]
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.endswith("_created") or math.isnan(sample.value):
                continue
            out.append(
                series(sample.name, {**sample.labels, **target}, f"{sample.value:.17g}+0x{steps}")
            )
    return out


def _gpu(index: int, **fields: Any) -> FakeGpu:
    return FakeGpu(
        index=index,
        uuid=f"GPU-{index:08x}-0000-4000-8000-000000000000",
        pci_bus_id=f"00000000:{0x18 + index:02X}:00.0",
        **fields,
    )


def test_case_6_a_lost_gpu_under_a_healthy_exporter_fires_gpu_device_lost(tmp_path: Path) -> None:
    plan = plan_of(spec_data())
    nvml = FakeNvml([_gpu(0, memory_used=20 * GIB), _gpu(1, memory_used=20 * GIB)])
    pod = "llama-7d9f8b6c5d-x2k4q"
    inputs = _exporter_series(nvml, pod, lose=1)
    assert any("gpu_device_up{" in s["series"] and s["values"].startswith("0") for s in inputs)
    lost = {"namespace": NS, "pod": pod, "uuid": _gpu(1).uuid}
    run_case(
        tmp_path,
        plan,
        inputs,
        [
            ("5m", naming.ALERT_GPU_LOST, [expect(plan, naming.ALERT_GPU_LOST, lost)]),
            ("20m", naming.ALERT_GPU_EXPORTER_DOWN, []),
            ("20m", naming.ALERT_GPU_MEMORY_HEADROOM, []),
            # The lost GPU's readings are gone, but no guard calls them missing.
            ("20m", naming.ALERT_SIGNAL_MISSING, []),
        ],
    )


def test_case_6_a_mig_instance_98_percent_full_fires_per_instance(tmp_path: Path) -> None:
    """The pod sees only its MIG instance: the parent's memory is not readable, the instance's
    is 98 % used. GPUMemoryHeadroomLow fires for the instance; no guard calls GPU memory
    missing."""
    plan = plan_of(spec_data())
    total = 20 * GIB
    instance = FakeMig(0, "MIG-6a0b1c2d-0000-4000-8000-000000000001", 3, total, int(total * 0.98))
    gpu = _gpu(0, mig_mode=MIG_ENABLED, mig_slots=1, migs=[instance])
    gpu.unsupported.update({"device_memory_info_v2", "device_memory_info_v1"})
    pod = "llama-7d9f8b6c5d-x2k4q"
    inputs = _exporter_series(FakeNvml([gpu]), pod)
    names = {s["series"].split("{")[0] for s in inputs}
    assert "gpu_memory_free_bytes" not in names and "gpu_mig_memory_free_bytes" in names
    free = next(
        float(s["values"].split("+")[0])
        for s in inputs
        if s["series"].startswith("gpu_mig_memory_free_bytes")
    )
    labels = {
        "namespace": NS,
        "pod": pod,
        "uuid": gpu.uuid,
        "mig_uuid": instance.uuid,
        "gpu_instance_id": "3",
    }
    run_case(
        tmp_path,
        plan,
        inputs,
        [
            (
                "10m",
                naming.ALERT_GPU_MEMORY_HEADROOM,
                [expect(plan, naming.ALERT_GPU_MEMORY_HEADROOM, labels, free / total)],
            ),
            ("20m", naming.ALERT_SIGNAL_MISSING, []),
        ],
    )


# --- capacity ---------------------------------------------------------------------------------


def test_replicas_unavailable_by_kube_state_metrics_and_by_targets(tmp_path: Path) -> None:
    plan = plan_of(spec_data(deployment={**_deployment("llama"), "replicas": 3}))
    up = {"namespace": NS, "job": "llama"}
    ksm = [
        series("kube_deployment_spec_replicas", {"namespace": NS, "deployment": "llama"}, "3+0x40"),
        series(
            "kube_deployment_status_replicas_available",
            {"namespace": NS, "deployment": "llama"},
            "3x5 2x35",
        ),
    ]
    targets = [series("up", {**up, "instance": f"10.0.0.{i}:8000"}, "1+0x40") for i in (1, 2)]
    alert = naming.ALERT_REPLICAS_UNAVAILABLE
    # Short from 6m on (`3x5` is six samples): 9m30s of 30s steps at 15m (under the 15m it
    # fires at), 15m30s at 21m; the fallback short from the start: 16m30s at 16m.
    run_case(
        tmp_path,
        plan,
        [*ksm, *targets],
        [("15m", alert, []), ("21m", alert, [expect(plan, alert, {"namespace": NS}, 930)])],
    )
    (tmp_path / "fallback").mkdir()
    run_case(
        tmp_path / "fallback",
        plan,
        targets,
        [("16m", alert, [expect(plan, alert, {"namespace": NS}, 990)])],
    )


# --- spec -------------------------------------------------------------------------------------


def test_a_guard_for_shorter_than_four_scrapes_is_refused() -> None:
    data = spec_data(alerts={"signalMissing": {"for": "1m"}})
    with pytest.raises(ObsgenError) as err:
        plan_of(data)
    (diag,) = err.value.diagnostics
    assert diag.path == "spec.alerts.signalMissing.for"
    assert "shorter than 4 × spec.prometheus.scrapeInterval (2m)" in diag.message


def test_the_default_guard_for_is_at_least_four_scrapes() -> None:
    plan = plan_of(spec_data(prometheus={"scrapeInterval": "5m"}))
    assert plan.alerts["signal_missing"].for_ms == 20 * 60_000
    assert plan_of(spec_data()).alerts["signal_missing"].for_ms == 15 * 60_000


def test_ignored_signals_get_no_guard_and_unknown_ones_are_refused() -> None:
    plan = plan_of(
        spec_data(alerts={"signalMissing": {"ignore": ["gpuTemperature", "queueDepth"]}})
    )
    signals = {i.signal for i in signal_inputs(plan)}
    assert "gpuTemperature" not in signals and "queueDepth" not in signals
    assert {"gpuTemperature", "queueDepth"} <= {i.signal for i in signal_inputs(plan, True)}
    with pytest.raises(ObsgenError) as err:
        plan_of(spec_data(alerts={"signalMissing": {"ignore": ["gpuTemp"]}}))
    assert err.value.diagnostics[0].path == "spec.alerts.signalMissing.ignore[0]"


def test_a_series_in_another_namespace_is_guarded_for_the_whole_service() -> None:
    """A gauge selected in another namespace than the targets' (spec.metrics.<x>.selector)
    cannot be matched on namespace against ``up``: its guard keys on nothing."""
    plan = plan_of(spec_data(metrics={"queueDepth": {"selector": {"namespace": "queues"}}}))
    (queue,) = [i for i in signal_inputs(plan) if i.signal == "queueDepth"]
    assert queue.keys == ()
    (rule,) = [
        r
        for g in rule_groups(plan)
        for r in g["rules"]
        if r.get("alert") == naming.ALERT_SIGNAL_MISSING and r["labels"]["signal"] == "queueDepth"
    ]
    assert rule["expr"].startswith(
        'group (up{job="llama",namespace="llm-serving"} == 1) unless on () '
    )
    others = [i for i in signal_inputs(plan) if i.signal == "requests"]
    assert others and others[0].keys == ("namespace",)


def test_guards_can_be_switched_off() -> None:
    plan = plan_of(spec_data(alerts={"signalMissing": {"enabled": False}}))
    assert signal_inputs(plan) == ()
    rules = [r for g in rule_groups(plan) for r in g["rules"]]
    assert not any(r.get("alert") == naming.ALERT_SIGNAL_MISSING for r in rules)


# --- one source of truth: every series an alert reads is guarded --------------------------------


def _selectors(expr: str) -> set[tuple[str, frozenset[tuple[str, str, str]]]]:
    ops = {
        "MatchOp.Equal": "=",
        "MatchOp.NotEqual": "!=",
        "MatchOp.Re": "=~",
        "MatchOp.NotRe": "!~",
    }
    found = set()
    for node, _ in q.walk(q.parse(expr)):
        if isinstance(node, P.VectorSelector | P.MatrixSelector):
            matchers = frozenset(
                (m.name, ops[str(m.op)], str(m.value))
                for m in q.matchers(node)
                if m.name != "__name__"
            )
            found.add((q.selector_name(node), matchers))
    return found


def _key(metric: str, matchers: Sequence[Matcher]) -> tuple[str, frozenset[tuple[str, str, str]]]:
    return metric, frozenset((m.label, m.op, m.value) for m in matchers)


def _reads(plan: ServicePlan) -> dict[str, set[tuple[str, frozenset[tuple[str, str, str]]]]]:
    """Reader name → every raw (not recorded) selector its alert rules read, through the
    recording rules whose static labels fit the recorded selector."""
    rules = [r for g in rule_groups(plan) for r in g["rules"]]
    records = [r for r in rules if "record" in r]

    def raw(expr: str, seen: frozenset[str]) -> set[tuple[str, frozenset[tuple[str, str, str]]]]:
        out = set()
        for metric, matchers in _selectors(expr):
            used = [
                r
                for r in records
                if r["record"] == metric
                and all(r["labels"].get(k, v) == v for k, op, v in matchers if op == "=")
            ]
            if not used:
                out.add((metric, matchers))
            for r in used:
                if r["expr"] not in seen:
                    out |= raw(r["expr"], seen | {r["expr"]})
        return out

    reads: dict[str, set[tuple[str, frozenset[tuple[str, str, str]]]]] = {}
    for r in rules:
        if "alert" not in r or r["alert"] == naming.ALERT_SIGNAL_MISSING:
            continue
        name = r["alert"]
        if name in (naming.ALERT_ERROR_BUDGET_BURN, naming.ALERT_ERROR_BUDGET_LOW):
            name = f"{name} (SLO {r['labels'][naming.SLO]})"
        reads.setdefault(name, set()).update(raw(r["expr"], frozenset()))
    return reads


def _all_plans() -> list[ServicePlan]:
    plans = load_plans(find_specs([], ROOT), ROOT)
    plans += load_plans(sorted((ROOT / "tests" / "fixtures").glob("slo-*.yaml")), ROOT)
    plans.append(plan_of(spec_data(deployment=_deployment("llama", "StatefulSet"))))
    plans.append(plan_of(spec_data(metrics={"queueDepth": {"selector": {"namespace": "q"}}})))
    plans.append(
        plan_of(
            spec_data(
                selector={"job": "llama"},
                deployment={"name": "llama", "container": "vllm"},
                alerts={"gpuExporterDown": {"enabled": False}},
            )
        )
    )
    return plans


@pytest.mark.parametrize(
    "plan", [pytest.param(p, id=p.name + "-" + p.workload_kind) for p in _all_plans()]
)
def test_every_series_an_alert_reads_is_guarded_or_known_unguarded(plan: ServicePlan) -> None:
    """Parse every alert of the rendered rules, follow recorded series to their recording
    rules, and check each raw selector: an input guard watches it (or it is one a guard
    covers, legitimately absent when healthy), or it is listed with the reason it needs no
    guard; and the guard names that alert among its readers. Conversely every reader a guard
    names reads one of its series."""
    inputs = signal_inputs(plan, include_ignored=True)
    unguarded = {_key(u.source.metric, u.source.matchers) for u in unguarded_reads(plan)}
    reads = _reads(plan)
    assert reads
    for reader, selectors in sorted(reads.items()):
        for metric, matchers in sorted(selectors, key=str):
            if (metric, matchers) in unguarded:
                continue
            watching = [
                i
                for i in inputs
                if (metric, matchers)
                in {_key(s.metric, s.matchers) for s in (*i.sources, *i.covers)}
            ]
            assert watching, (
                f"{plan.name}: {reader} reads {metric}{sorted(matchers)}, which no guard watches"
            )
            assert any(reader in i.readers for i in watching), (plan.name, reader, metric)
    for item in inputs:
        mine = {_key(s.metric, s.matchers) for s in (*item.sources, *item.covers)}
        # Inputs that must exist only where this one does (their gate reads it): what they
        # feed is blind too while this one is missing.
        gated = {
            _key(s.metric, s.matchers)
            for other in inputs
            if any(_key(src.metric, src.matchers) in mine for c in other.gate for src in c.sources)
            for s in (*other.sources, *other.covers)
        }
        for reader in item.readers:
            assert reads.get(reader, set()) & (mine | gated), (plan.name, item.signal, reader)
