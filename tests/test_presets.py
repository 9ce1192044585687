"""Server presets: names, buckets, version keying, unit conversion, missing signals, groupBy.

Specs are built in memory from a valid base and one changed field; rules are checked with the
real ``promtool`` (check and unit tests).
"""

from __future__ import annotations

import copy
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import promql_parser as P
import pytest
import yaml

from generator.builders.rulefile import rule_file
from generator.errors import ObsgenError
from generator.lint import promql
from generator.plan import ServicePlan, resolve
from generator.presets import get_preset
from generator.presets.tgi import DURATION_BUCKETS
from generator.promtool import find_promtool
from generator.render import render
from generator.spec import parse_spec
from tests.promql_checks import is_label_less_filter

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = (
    "llama3-70b-vllm",
    "mistral-7b-tgi",
    "triton-trtllm",
    "qwen-sglang",
    "llama-trtllm-serve",
)


def base_spec(server: str, **spec: Any) -> dict[str, Any]:
    """A minimal valid spec for ``server``; keyword arguments replace keys of ``spec``."""
    body: dict[str, Any] = {
        "server": server,
        "selector": {"namespace": "ns", "job": "svc"},
        "deployment": {"name": "svc", "container": "server", "memoryLimit": "32Gi"},
    }
    body.update(spec)
    return {
        "apiVersion": "obsgen/v1alpha1",
        "kind": "ModelService",
        "metadata": {"name": "svc", "team": "t"},
        "spec": body,
    }


def plan_of(data: dict[str, Any]) -> ServicePlan:
    return resolve(parse_spec(copy.deepcopy(data), "mem.yaml"), "mem.yaml")


def errors_of(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ObsgenError) as caught:
        plan_of(data)
    return [f"{d.path}: {d.message}" for d in caught.value.diagnostics]


def all_exprs(plan: ServicePlan) -> list[tuple[str, str]]:
    return [(g["name"], r["expr"]) for g in rule_file(plan)["groups"] for r in g["rules"]]


# --- metric names and bucket lists --------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "key", "name", "first", "last", "count"),
    [
        pytest.param("vllm", "requestDuration", "vllm:e2e_request_latency_seconds", 0.3, 7680.0, 21, id="vllm e2e uses request_latency_buckets"),
        pytest.param("vllm", "timeToFirstToken", "vllm:time_to_first_token_seconds", 0.001, 2560.0, 22, id="vllm ttft uses its own 22 bounds"),
        pytest.param("vllm", "interTokenLatency", "vllm:inter_token_latency_seconds", 0.01, 80.0, 19, id="vllm itl uses the per-token 19 bounds"),
        pytest.param("tgi", "requestDuration", "tgi_request_duration", 0.0001 * 1.5, 145.61096060497135, 35, id="tgi duration has no _seconds suffix and 35 geometric bounds"),
        pytest.param("tgi", "interTokenLatency", "tgi_request_mean_time_per_token_duration", 0.0001 * 1.5, 145.61096060497135, 35, id="tgi mean time per token shares the duration bounds"),
        pytest.param("sglang", "requestDuration", "sglang:e2e_request_latency_seconds", 0.1, 2400.0, 22, id="sglang 0.5.2+ e2e bounds reach 2400s"),
        pytest.param("sglang", "timeToFirstToken", "sglang:time_to_first_token_seconds", 0.1, 400.0, 18, id="sglang ttft"),
        pytest.param("sglang", "interTokenLatency", "sglang:inter_token_latency_seconds", 0.002, 8.0, 23, id="sglang itl"),
        pytest.param("trtllm", "requestDuration", "trtllm_e2e_request_latency_seconds", 0.3, 7680.0, 21, id="trtllm e2e uses vllm's list"),
        pytest.param("trtllm", "timePerOutputToken", "trtllm_time_per_output_token_seconds", 0.01, 80.0, 19, id="trtllm per-request tpot"),
        pytest.param("trtllm", "requestQueueTime", "trtllm_request_queue_time_seconds", 0.3, 7680.0, 21, id="trtllm queue uses the request-latency list"),
        pytest.param("vllm", "requestQueueTime", "vllm:request_queue_time_seconds", 0.3, 7680.0, 21, id="vllm queue uses request_latency_buckets"),
        pytest.param("sglang", "requestQueueTime", "sglang:queue_time_seconds", 0.0, 3000.0, 40, id="sglang 0.5.12+ queue time, bounds from 1 ms"),
        pytest.param("triton", "timeToFirstToken", "nv_inference_first_response_histogram_ms", 100.0, 5000.0, 4, id="triton first response histogram is in milliseconds"),
    ],
)  # fmt: skip
def test_preset_histograms(
    server: str, key: str, name: str, first: float, last: float, count: int
) -> None:
    h = get_preset(server, None).latency[key]
    assert (h.name, h.buckets[0], h.buckets[-1], len(h.buckets)) == (name, first, last, count)
    assert list(h.buckets) == sorted(set(h.buckets))


def test_tgi_bounds_follow_the_routers_repeated_multiplication() -> None:
    value, expected = 0.0001, []
    for _ in range(35):
        value *= 1.5
        expected.append(value)
    assert tuple(expected) == DURATION_BUCKETS
    assert repr(DURATION_BUCKETS[22]) == "1.122274146401882"


@pytest.mark.parametrize(
    ("server", "requests", "failure", "queue", "running", "kv", "model_label"),
    [
        pytest.param("vllm", "http_requests_total", None, "vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc", "model_name", id="vllm"),
        pytest.param("tgi", "tgi_request_success", "tgi_request_failure", "tgi_queue_size", "tgi_batch_current_size", None, None, id="tgi has no kv gauge and no model label"),
        pytest.param("sglang", "sglang:num_requests_total", "sglang:num_aborted_requests_total", "sglang:num_queue_reqs", "sglang:num_running_reqs", "sglang:token_usage", "model_name", id="sglang counts aborts against finished requests"),
        pytest.param("trtllm", "trtllm_request_success_total", None, "trtllm_num_requests_waiting", "trtllm_num_requests_running", "trtllm_kv_cache_utilization", "model_name", id="trtllm"),
        pytest.param("triton", "nv_inference_request_success", "nv_inference_request_failure", "nv_inference_pending_request_count", "nv_trt_llm_request_metrics", "nv_trt_llm_kv_cache_block_metrics", "model", id="triton"),
    ],
)  # fmt: skip
def test_preset_counters_and_gauges(
    server: str,
    requests: str,
    failure: str | None,
    queue: str,
    running: str,
    kv: str | None,
    model_label: str | None,
) -> None:
    p = get_preset(server, None)
    got = (
        p.requests.name,
        p.requests.failure_name,
        p.queue_depth.name if p.queue_depth else None,
        p.running_requests.name if p.running_requests else None,
        p.kv_cache_usage.name if p.kv_cache_usage else None,
        p.model_label,
    )
    assert got == (requests, failure, queue, running, kv, model_label)


# --- version keying -----------------------------------------------------------------------


def test_sglang_before_the_abort_counter_is_refused_naming_the_first_release() -> None:
    (error,) = errors_of(base_spec("sglang", serverVersion="0.4.6"))
    assert error == (
        "spec.serverVersion: no sglang preset for version 0.4.6; the oldest supported is 0.4.7"
    )
    assert get_preset("sglang", "0.5.1").latency["requestDuration"].buckets[-1] == 800.0
    assert get_preset("sglang", "0.5.2").latency["requestDuration"].buckets[-1] == 2400.0


@pytest.mark.parametrize(
    ("version", "first", "error_matcher"),
    [
        pytest.param("1.1", "e2e_request_latency_seconds", 'finished_reason="timeout"', id="1.1 unprefixed"),
        pytest.param("1.2", "trtllm_e2e_request_latency_seconds", 'finished_reason="timeout"', id="1.2 trtllm_"),
    ],
)  # fmt: skip
def test_trtllm_reads_every_spelling_of_its_histograms(
    version: str, first: str, error_matcher: str
) -> None:
    plan = plan_of(base_spec("trtllm", serverVersion=version))
    h = plan.histograms["requestDuration"]
    assert h.metric == first
    assert set(h.names) == {
        "e2e_request_latency_seconds",
        "trtllm_e2e_request_latency_seconds",
        "trtllm:e2e_request_latency_seconds",
    }
    exprs = " ".join(expr for _, expr in all_exprs(plan))
    for name in h.names:
        assert f"{name}_bucket" in exprs
    assert error_matcher in exprs


@pytest.mark.parametrize(
    ("version", "kv", "itl"),
    [
        pytest.param("0.8", "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds", id="0.8 reads gpu_cache_usage_perc and TPOT"),
        pytest.param("0.8.5", "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds", id="a patch release keeps its minor line"),
        pytest.param("0.9", "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds", id="0.9.0 and 0.9.1 still have only the gpu_ KV gauge"),
        pytest.param("0.9.2", "vllm:kv_cache_usage_perc", "vllm:time_per_output_token_seconds", id="0.9.2 added kv_cache_usage_perc"),
        pytest.param("0.10.2", "vllm:kv_cache_usage_perc", "vllm:time_per_output_token_seconds", id="0.10 still has TPOT"),
        pytest.param("0.11", "vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds", id="0.11 renamed TPOT to inter-token latency"),
    ],
)  # fmt: skip
def test_vllm_version_selection(version: str, kv: str, itl: str) -> None:
    plan = plan_of(base_spec("vllm", serverVersion=version))
    assert plan.kv_cache_usage is not None
    assert (plan.kv_cache_usage.name, plan.histograms["interTokenLatency"].metric) == (kv, itl)
    exprs = " ".join(e for _, e in all_exprs(plan))
    assert kv in exprs and itl + "_bucket" in exprs


def test_vllm_older_than_the_v1_engine_is_an_error_naming_the_field() -> None:
    assert errors_of(base_spec("vllm", serverVersion="0.7")) == [
        "spec.serverVersion: no vllm preset for version 0.7; the oldest supported is 0.8"
    ]


# --- units: Triton milliseconds -----------------------------------------------------------


@pytest.mark.parametrize(
    ("threshold", "bound"),
    [
        pytest.param("500ms", 500.0, id="500ms selects le=500 of the ms histogram"),
        pytest.param("2s", 2000.0, id="2s selects le=2000"),
    ],
)
def test_triton_threshold_is_checked_against_converted_bounds(threshold: str, bound: float) -> None:
    slo = {"name": "ttft", "indicator": "ttft", "threshold": threshold, "objective": 99}
    plan = plan_of(base_spec("triton", slos=[slo]))
    assert plan.slos[0].threshold_bound == bound
    h = plan.histograms["timeToFirstToken"]
    assert h.bound_for(bound / 1000) == bound and h.seconds_per_unit == 0.001


def test_triton_threshold_between_bounds_names_the_neighbours_in_seconds() -> None:
    slo = {"name": "ttft", "indicator": "ttft", "threshold": "300ms", "objective": 99}
    (error,) = errors_of(base_spec("triton", slos=[slo]))
    assert error.startswith("spec.slos[0].threshold: 0.3s is not a bucket bound")
    assert "nearest: below 0.1s, above 0.5s" in error


def test_spec_buckets_in_seconds_are_converted_to_the_metrics_unit() -> None:
    data = base_spec("triton", metrics={"timeToFirstToken": {"buckets": [0.25, 1, 4]}})
    assert plan_of(data).histograms["timeToFirstToken"].buckets == (250.0, 1000.0, 4000.0)


@pytest.mark.parametrize(
    ("threshold_ms", "named"),
    [
        pytest.param(1122, 1.122274146401882, id="1122ms names TGI's 1.1223 s bound"),
        pytest.param(99, 0.09852612533569335, id="99ms names the 98.5 ms bound (0.5 % away)"),
        pytest.param(1000, None, id="1s is between bounds and names none"),
    ],
)
def test_tgi_non_round_bounds_are_named_to_the_millisecond(
    threshold_ms: int, named: float | None
) -> None:
    h = plan_of(base_spec("tgi")).histograms["requestDuration"]
    assert h.bound_for(threshold_ms / 1000) == named


def test_a_millisecond_never_names_a_bound_far_from_it() -> None:
    h = plan_of(base_spec("openai-http", metrics={"requestDuration": {"buckets": [0.0012, 0.5]}}))
    assert h.histograms["requestDuration"].bound_for(0.001) is None


def test_triton_quantile_is_recorded_in_seconds_by_promtool(tmp_path: Path) -> None:
    """All first responses in (100, 500] ms: p99 = 100 + 0.99 × 400 = 496 ms = 0.496 s."""
    plan = plan_of(base_spec("triton"))
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(rule_file(plan), sort_keys=False))
    series = 'nv_inference_first_response_histogram_ms_bucket{{job="svc",namespace="ns",model="m",version="1",le="{le}"}}'
    lines = [
        {"series": series.format(le=le), "values": f"0+{step}x20"}
        for le, step in (("100", 0), ("500", 60), ("2000", 60), ("5000", 60), ("+Inf", 60))
    ]
    lines.append(
        {
            "series": 'nv_inference_first_response_histogram_ms_count{job="svc",namespace="ns",model="m",version="1"}',
            "values": "0+60x20",
        }
    )
    test = {
        "rule_files": [str(rules)],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": lines,
                "promql_expr_test": [
                    {
                        "expr": 'service:model_latency_seconds:quantile_rate5m{indicator="ttft",quantile="0.99"}',
                        "eval_time": "10m",
                        "exp_samples": [
                            {
                                "labels": 'service:model_latency_seconds:quantile_rate5m{indicator="ttft",namespace="ns",quantile="0.99",service="svc"}',
                                "value": 0.496,
                            }
                        ],
                    }
                ],
            }
        ],
    }
    test_file = tmp_path / "test.yaml"
    test_file.write_text(yaml.safe_dump(test, sort_keys=False))
    done = subprocess.run(
        [find_promtool(), "test", "rules", str(test_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_triton_mean_latency_converts_microseconds() -> None:
    plan = plan_of(base_spec("triton"))
    (mean,) = [e for _, e in all_exprs(plan) if "nv_inference_request_duration_us" in e]
    assert mean.endswith("* 0.000001")


# --- missing signals are errors, never fakes ----------------------------------------------


@pytest.mark.parametrize(
    ("spec", "path", "says"),
    [
        pytest.param({"slos": [{"name": "t", "indicator": "ttft", "threshold": "1122ms", "objective": 99}]}, "spec.slos[0].indicator", "TGI exposes no time-to-first-token histogram", id="a TTFT SLO on TGI"),
        pytest.param({"alerts": {"latencyP99": {"indicator": "ttft", "threshold": "5s"}}}, "spec.alerts.latencyP99.indicator", "TGI exposes no time-to-first-token histogram", id="a TTFT p99 alert on TGI"),
        pytest.param({"alerts": {"slowRequests": {"indicator": "timeToFirstToken", "threshold": "1122ms"}}}, "spec.alerts.slowRequests.indicator", "it has requestDuration (e2e), interTokenLatency (itl)", id="a TTFT slow-request alert on TGI lists what TGI has"),
    ],
)  # fmt: skip
def test_missing_histogram_is_an_error_naming_the_field(
    spec: dict[str, Any], path: str, says: str
) -> None:
    (error,) = errors_of(base_spec("tgi", **spec))
    assert error.startswith(path + ": server tgi has no timeToFirstToken (ttft) histogram")
    assert says in error


def test_triton_e2e_slo_is_an_error_because_the_duration_is_a_counter() -> None:
    slo = {"name": "e2e", "indicator": "e2e", "threshold": "1s", "objective": 99}
    (error,) = errors_of(base_spec("triton", slos=[slo]))
    assert "microsecond counter (mean latency only), not a histogram" in error


def test_default_latency_alerts_fall_back_to_the_histogram_the_server_has() -> None:
    plan = plan_of(base_spec("triton", alerts={"latencyP99": {"threshold": "3s"}}))
    assert plan.alerts["latency_p99"].params["indicator"] == "timeToFirstToken"


# --- groupBy ------------------------------------------------------------------------------


def _grouping_labels(expr: str) -> list[set[str]]:
    """The labels of each ``sum``/``max``/``avg by (…)`` and each ``on (…)`` of ``expr``
    (parsed), but a set-operator filter on a vector that reads no series, which groups nothing
    (:func:`tests.promql_checks.is_label_less_filter`)."""
    found = []
    for node, _ in promql.walk(promql.parse(expr)):
        if isinstance(node, P.AggregateExpr) and str(node.op) in ("sum", "max", "avg"):
            if node.modifier is not None and node.modifier.type == P.AggModifierType.By:
                found.append(set(node.modifier.labels))
        elif isinstance(node, P.BinaryExpr) and node.modifier is not None:
            matching = node.modifier.matching
            include = matching is not None and matching.type == P.LabelModifierType.Include
            if include and not is_label_less_filter(node):
                found.append(set(matching.labels))
    return found


def test_group_by_adds_the_model_label_to_every_service_aggregation() -> None:
    data = base_spec(
        "vllm",
        groupBy=["model_name"],
        slos=[
            {"name": "availability", "objective": 99.9},
            {"name": "ttft", "indicator": "ttft", "threshold": "2500ms", "objective": 99},
        ],
        alerts={"slowRequests": {"threshold": "60s"}},
    )
    checked = 0
    for group, expr in all_exprs(plan_of(data)):
        if group.endswith((".memory", ".targets", ".gpu", ".guards")):
            continue  # per pod / per target / per GPU / per namespace (input guards) by design
        for labels in _grouping_labels(expr):
            if labels == {"instance", "job", "namespace"}:
                continue  # the join with each target's `up` that counts late-born series
            assert "model_name" in labels, (group, expr)
            checked += 1
    assert checked > 40


def test_group_by_names_records_with_the_level() -> None:
    plan = plan_of(base_spec("vllm", groupBy=["model_name"]))
    records = {r.get("record") for g in rule_file(plan)["groups"] for r in g["rules"]}
    assert "service_model_name:model_requests:rate5m" in records
    assert "service_model_name_pod:model_kv_cache_usage:max" in records


# --- alert families per server and the example specs --------------------------------------

_ALL = {
    "ErrorBudgetBurn", "ErrorBudgetLow", "ModelLatencyP99High", "ModelSlowRequestsHigh", "ModelErrorRatioHigh",
    "ModelMemoryHeadroomLow", "ModelMemoryExhaustionPredicted", "ModelContainerOOMKilled", "ModelContainerCrashLooping",
    "ModelQueueDepthHigh", "ModelKVCacheNearFull", "ModelPreemptionsHigh", "ModelPrefixCacheHitRatioLow", "ModelTargetDown", "GPUMemoryHeadroomLow",
    "GPUTemperatureHigh", "GPUXidErrors", "GPUExporterDown", "GPUDeviceLost", "GPUHardwareSlowdown",
    "GPUUncorrectableECCErrors", "GPURowRemapFailed", "GPURowRemapPending", "GPUUncorrectableRowsRemapped",
    "GPUUncorrectablePagesRetired", "GPUPageRetirementPending", "GPUNVLinkErrors",
    "GPUPCIeReplays", "GPUXidNodeRebootRequired", "GPUXidResetRequired", "GPUXidApplicationError",
    "ModelReplicasUnavailable", "ModelSignalMissing", "ModelSpecDecodeAcceptanceLow",
}  # fmt: skip


@pytest.mark.parametrize(
    ("example", "expected"),
    [
        pytest.param("llama3-70b-vllm", _ALL, id="vllm has every signal"),
        pytest.param(
            "mistral-7b-tgi",
            _ALL
            - {"ModelKVCacheNearFull", "ModelPreemptionsHigh", "ModelPrefixCacheHitRatioLow"}
            - {"ModelSpecDecodeAcceptanceLow"},
            id="tgi has every signal but KV cache and preemptions",
        ),
        pytest.param(
            "triton-trtllm",
            _ALL
            - {"ModelPreemptionsHigh", "ModelPrefixCacheHitRatioLow"}
            - {"ModelSpecDecodeAcceptanceLow"},
            id="triton with TensorRT-LLM has every signal but preemptions",
        ),
    ],
)
def test_every_design_alert_renders_where_the_server_has_the_signal(
    example: str, expected: set[str]
) -> None:
    spec = ROOT / "specs" / f"{example}.yaml"
    plan = resolve(parse_spec(yaml.safe_load(spec.read_text()), example), example)
    alerts = {r["alert"] for g in rule_file(plan)["groups"] for r in g["rules"] if "alert" in r}
    assert alerts == expected


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_spec_passes_promtool_and_matches_the_committed_rules(example: str) -> None:
    outputs, _ = render(ROOT, [str(ROOT / "specs" / f"{example}.yaml")])
    rules = [p for p in outputs if p.endswith(".rules.yaml")]
    assert len(rules) == 1
    assert (ROOT / rules[0]).read_text() == outputs[rules[0]], "run `obsgen render` and commit"


@pytest.mark.parametrize(
    ("server", "indicator", "threshold", "histogram"),
    [
        pytest.param("vllm", "queue", "2500ms", "vllm:request_queue_time_seconds", id="vllm queue time"),
        pytest.param("trtllm", "tpot", "100ms", "trtllm_time_per_output_token_seconds", id="trtllm per-request tpot"),
        pytest.param("sglang", "queue", "5s", "sglang:queue_time_seconds", id="sglang queue time"),
    ],
)  # fmt: skip
def test_queue_and_tpot_indicators_back_latency_slos(
    server: str, indicator: str, threshold: str, histogram: str
) -> None:
    slo = {"name": "x", "indicator": indicator, "threshold": threshold, "objective": 99}
    plan = plan_of(base_spec(server, slos=[slo]))
    (resolved,) = plan.slos
    assert resolved.histogram is not None and resolved.histogram.metric == histogram
    exprs = " ".join(expr for _, expr in all_exprs(plan))
    assert f"{histogram}_bucket" in exprs


def test_an_indicator_the_server_lacks_says_which_it_has() -> None:
    slo = {"name": "x", "indicator": "itl", "threshold": "100ms", "objective": 99}
    (error,) = errors_of(base_spec("trtllm", slos=[slo]))
    assert "use timePerOutputToken (tpot)" in error
    assert "requestQueueTime (queue)" in error
    slo = {"name": "x", "indicator": "queue", "threshold": "1s", "objective": 99}
    (error,) = errors_of(base_spec("tgi", slos=[slo]))
    assert error.startswith("spec.slos[0].indicator: server tgi has no requestQueueTime (queue)")


def test_vllm_errors_come_from_http_5xx_on_v1_handlers_only() -> None:
    plan = plan_of(base_spec("vllm"))
    (errors,) = [
        r["expr"]
        for g in rule_file(plan)["groups"]
        for r in g["rules"]
        if r.get("record") == "service:model_request_errors:rate5m"
    ]
    # 5xx and the overload rejection 429 (generator/failures.py DEFAULT_STATUSES).
    assert (
        'http_requests_total{handler=~"/v1/.*",job="svc",namespace="ns",status=~"5..|429"}'
        in errors
    )
    # Streamed failures after the 200 (no serverVersion: the newest entry, vLLM ≥ 0.13): the
    # engine's finish reason, aborts excluded; plain values are written = / !=.
    assert 'finished_reason!="abort",finished_reason="error"' in errors


def test_trtllm_kv_usage_is_used_over_max_blocks() -> None:
    (kv,) = [
        e
        for g, e in all_exprs(plan_of(base_spec("triton")))
        if "kv_cache_block_metrics" in e and not g.endswith(".guards")
    ]
    assert textwrap.dedent(kv) == (
        'max by (namespace, pod) (nv_trt_llm_kv_cache_block_metrics{job="svc",kv_cache_block_type="used",namespace="ns"})'
        ' / (max by (namespace, pod) (nv_trt_llm_kv_cache_block_metrics{job="svc",kv_cache_block_type="max",namespace="ns"}) > 0)'
    )
