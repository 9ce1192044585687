"""Issue 13, "the spec meets the real server": release strings, renamed metrics, engine
variants and histogram units. Each numbered case of the issue is a regression test whose
rules run in the real ``promtool test rules`` (fires where it must, silent when healthy), and
every refusal is checked through the CLI (``file: field: message``, exit 2, nothing written).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.builders.rulefile import rule_file
from generator.cli import main
from generator.errors import ObsgenError
from generator.plan import ServicePlan, resolve
from generator.presets import select_preset
from generator.spec import parse_spec
from generator.yamlio import dump_yaml
from tests.helpers_promtool import assert_ok, run_promtool

POD = "svc-7d9f8c6b5-x2k7p"


def spec_data(server: str, **body: Any) -> dict[str, Any]:
    """A minimal valid spec for ``server``; keyword arguments set keys of ``spec``."""
    data: dict[str, Any] = {
        "server": server,
        "selector": {"namespace": "ns", "job": "svc"},
        "deployment": {"name": "svc", "container": "server", "memoryLimit": "32Gi"},
    }
    data.update(body)
    return {
        "apiVersion": "obsgen/v1alpha1",
        "kind": "ModelService",
        "metadata": {"name": "svc", "team": "t", "runbookBaseUrl": "https://x.invalid/rb"},
        "spec": data,
    }


def plan_of(data: dict[str, Any]) -> ServicePlan:
    return resolve(parse_spec(copy.deepcopy(data), "mem.yaml"), "mem.yaml")


def series(name: str, values: str, **labels: str) -> dict[str, str]:
    """One promtool input series of the service's target (namespace ns, job svc)."""
    every = {"namespace": "ns", "job": "svc", **labels}
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(every.items()))
    return {"series": f"{name}{{{inner}}}", "values": values}


def firing(alert: str, eval_time: str, count: int) -> dict[str, Any]:
    """An expression test: ``count`` firing ``alert`` alerts of the service at ``eval_time``."""
    expr = f'count(ALERTS{{alertname="{alert}",alertstate="firing",service="svc"}}) or vector(0)'
    return {"expr": expr, "eval_time": eval_time, "exp_samples": [{"labels": "{}", "value": count}]}


def paging_budget_burn(eval_time: str) -> dict[str, Any]:
    """An expression test: at least one critical ``ErrorBudgetBurn`` tier fires."""
    alerts = (
        'ALERTS{alertname="ErrorBudgetBurn",alertstate="firing",service="svc",severity="critical"}'
    )
    return {
        "expr": f"(count({alerts}) > bool 0) or vector(0)",
        "eval_time": eval_time,
        "exp_samples": [{"labels": "{}", "value": 1}],
    }


def recorded(expr: str, eval_time: str, value: float) -> dict[str, Any]:
    """An expression test: ``expr`` summed equals ``value`` (to 6 decimals) at ``eval_time``."""
    return {
        "expr": f"round(sum({expr}), 0.000001)",
        "eval_time": eval_time,
        "exp_samples": [{"labels": "{}", "value": value}],
    }


def promtool_passes(
    tmp_path: Path, plan: ServicePlan, inputs: list[dict[str, str]], tests: list[dict[str, Any]]
) -> None:
    """Run ``tests`` on ``plan``'s rules over ``inputs`` (1m steps) in the real promtool."""
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule_file(plan)), encoding="utf-8")
    suite = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": inputs, "promql_expr_test": tests}],
    }
    (tmp_path / "case.test.yaml").write_text(dump_yaml(suite), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", "case.test.yaml", cwd=tmp_path))


def cli_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: dict[str, Any]) -> str:
    """Render ``data`` through the CLI; assert exit 2, no traceback, nothing written."""
    spec = tmp_path / "specs" / "svc.yaml"
    spec.parent.mkdir(parents=True, exist_ok=True)
    spec.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    code = main(["render", "--out", str(tmp_path / "out"), str(spec)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.yaml"))
    return err


# --- case 5: release strings ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "version", "variant", "entry", "warns"),
    [
        pytest.param("vllm", "0.10.1.1", None, "0.9.2", False, id="a four-part release"),
        pytest.param("vllm", "0.8.5.post1", None, "0.8.4", False, id="a post release"),
        pytest.param("vllm", "v0.11.0", None, "0.11", False, id="a leading v"),
        pytest.param("vllm", "0.11.0rc1", None, "0.11", False, id="a release candidate counts as its release"),
        pytest.param("vllm", "0.9.2.dev12", None, "0.9.2", False, id="a dev build counts as its release"),
        pytest.param("vllm", "0.10.1.1+381074ae.nv25.9.cu130", None, "0.9.2", False, id="NVIDIA's local version"),
        pytest.param("vllm", "0.9.1", None, "0.8.4", False, id="0.9.1 predates the KV rename"),
        pytest.param("vllm", "0.8", None, "0.8", False, id="0.8.0 has no HTTP metrics"),
        pytest.param("vllm", "0.9", "v0", "0.8.4", False, id="the V0 engine"),
        pytest.param("vllm", "0.8.3", None, "0.8.3", False, id="0.8.3 has HTTP metrics and the short bucket lists"),
        pytest.param("vllm", "0.8.4", "v0", "0.8.4", False, id="V0 takes the extended bucket lists with 0.8.4 too"),
        pytest.param("vllm", "0.11.2", None, "0.11", False, id="a patch of the newest checked line"),
        pytest.param("vllm", "0.12.0", None, "0.11", False, id="0.12 has no finished_reason error yet"),
        pytest.param("vllm", "0.13.0rc1", None, "0.13", False, id="0.13 reads the engine's error reason"),
        pytest.param("vllm", "0.14.0rc1", None, "0.13", True, id="newer than every entry warns"),
        pytest.param("vllm", "1.0", None, "0.13", True, id="a major release warns"),
        pytest.param("tgi", "3.0.2", None, "1.0", False, id="tgi patch"),
        pytest.param("tgi", "v2.4.1", None, "1.0", False, id="tgi with a v"),
        pytest.param("tgi", "3.3.4", None, "1.0", True, id="tgi newer than checked warns"),
        pytest.param("triton", "2.49.0", None, "23.04", False, id="triton server release"),
        pytest.param("triton", "24.08", None, "23.04", False, id="triton container tag"),
        pytest.param("triton", "24.08-trtllm-python-py3", None, "23.04", False, id="container tag with flavour"),
        pytest.param("triton", "nvcr.io/nvidia/tritonserver:24.08-py3", None, "23.04", False, id="image reference"),
        pytest.param("triton", "r24.08", None, "23.04", False, id="release branch"),
        pytest.param("triton", "26.01", None, "24.11", True, id="container newer than checked warns"),
        pytest.param("triton", "2.60.0", None, "24.11", True, id="triton release newer than checked warns"),
        pytest.param("triton", "2.52.0", None, "24.11", False, id="triton 2.52.0 is container 24.11, the first with a histogram"),
        pytest.param("triton", "24.10", None, "23.04", False, id="triton 24.10 has no histogram yet"),
        pytest.param("openai-http", "3.7.1", None, "0", False, id="a generic server takes any release"),
    ],
)  # fmt: skip
def test_published_release_strings_pick_the_newest_entry_not_after_them(
    server: str, version: str, variant: str | None, entry: str, warns: bool
) -> None:
    chosen = select_preset(server, version, variant)
    assert chosen.preset.since_version == entry
    assert (chosen.preset.variant or None) == (variant or ("v1" if server == "vllm" else None))
    assert (chosen.warning is not None) == warns
    if warns:
        assert chosen.warning is not None and "obsgen verify" in chosen.warning
        data = spec_data(server, serverVersion=version)
        assert [w.path for w in plan_of(data).warnings if w.path == "spec.serverVersion"] == [
            "spec.serverVersion"
        ]


@pytest.mark.parametrize(
    ("server", "value", "says"),
    [
        pytest.param("vllm", "banana", "spec.serverVersion: 'banana' is not a release string: expected a vllm release (PEP 440: 0.11, 0.10.1.1", id="not a version"),
        pytest.param("vllm", "0.11 ", "spec.serverVersion: '0.11 ' is not a release string: remove the spaces around the release", id="trailing space"),
        pytest.param("vllm", "1!0.11", "without an epoch", id="an epoch"),
        pytest.param("vllm", 0.1, 'spec.serverVersion: write the release in quotes, e.g. serverVersion: "0.1"; YAML reads', id="an unquoted number"),
        pytest.param("triton", "24.13", "spec.serverVersion: '24.13' is not a release string: expected a Triton release (2.49.0 or an NGC container tag", id="month 13"),
        pytest.param("triton", "0.11", "expected a Triton release", id="a vllm version on triton"),
        pytest.param("vllm", "0.7.3", "spec.serverVersion: no vllm preset for version 0.7.3; the oldest supported is 0.8", id="older than every entry"),
        pytest.param("triton", "2.32.0", "spec.serverVersion: no triton preset for version 2.32.0; the oldest supported is 23.04", id="triton release before the entry"),
    ],
)  # fmt: skip
def test_bad_release_strings_are_refused_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], server: str, value: Any, says: str
) -> None:
    err = cli_error(tmp_path, capsys, spec_data(server, serverVersion=value))
    assert says in err, err


def test_a_release_string_never_reaches_the_output_unescaped() -> None:
    plan = plan_of(spec_data("vllm", serverVersion="0.10.1.1+381074ae.nv25.9.cu130"))
    assert "381074ae" not in dump_yaml(rule_file(plan))


# --- case 1: a metric renamed by an upgrade ------------------------------------------------

KV = {"model_name": "m", "engine": "0", "pod": POD}


@pytest.mark.parametrize(
    ("version", "exposed", "value", "alerts"),
    [
        pytest.param("0.9.1", {"vllm:kv_cache_usage_perc"}, "0.97", 1, id="spec 0.9.1, pods 0.11: only the new name, fires"),
        pytest.param("0.9.1", {"vllm:kv_cache_usage_perc"}, "0.5", 0, id="spec 0.9.1, pods 0.11, healthy: silent"),
        pytest.param("0.9.1", {"vllm:gpu_cache_usage_perc"}, "0.97", 1, id="spec and pods 0.9.1: fires"),
        pytest.param("0.11", {"vllm:gpu_cache_usage_perc"}, "0.97", 1, id="spec 0.11, pods 0.9.1: only the old name, fires"),
        pytest.param("0.10", {"vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"}, "0.97", 1, id="both names exposed: one alert, not two"),
        pytest.param("0.10", {"vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"}, "0.5", 0, id="both names, healthy: silent"),
    ],
)  # fmt: skip
def test_kv_cache_alert_fires_whichever_name_the_pods_expose(
    tmp_path: Path, version: str, exposed: set[str], value: str, alerts: int
) -> None:
    plan = plan_of(spec_data("vllm", serverVersion=version, alerts={"kvCache": {"max": 0.9}}))
    inputs = [series(name, f"{value}x40", **KV) for name in sorted(exposed)]
    usage = 'service_pod:model_kv_cache_usage:max{service="svc"}'
    promtool_passes(
        tmp_path,
        plan,
        inputs,
        [firing("ModelKVCacheNearFull", "20m", alerts), recorded(usage, "20m", float(value))],
    )


def test_inter_token_latency_reads_the_renamed_histogram(tmp_path: Path) -> None:
    """Spec 0.10 (time_per_output_token_seconds); pods expose only inter_token_latency_seconds
    with every token in (2.5, 5] s: p99 = 2.5 + 0.99 × 2.5 = 4.975 s > 1 s fires."""
    plan = plan_of(
        spec_data(
            "vllm",
            serverVersion="0.10",
            alerts={"latencyP99": {"indicator": "itl", "threshold": "1s"}},
        )
    )
    h = plan.histograms["interTokenLatency"]
    assert h.names == ("vllm:time_per_output_token_seconds", "vllm:inter_token_latency_seconds")
    name = "vllm:inter_token_latency_seconds"
    inputs = [
        series(f"{name}_bucket", f"0+{60 if b >= 5 else 0}x40", le=f"{b:g}", model_name="m")
        for b in h.buckets
    ]
    inputs.append(series(f"{name}_bucket", "0+60x40", le="+Inf", model_name="m"))
    inputs.append(series(f"{name}_count", "0+60x40", model_name="m"))
    p99 = 'service:model_latency_seconds:quantile_rate5m{indicator="itl",quantile="0.99"}'
    promtool_passes(
        tmp_path,
        plan,
        inputs,
        [firing("ModelLatencyP99High", "25m", 1), recorded(p99, "25m", 4.975)],
    )


# --- case 2: an engine variant without the HTTP counter ------------------------------------


def _v0_traffic(abort_per_min: int, reason: str = "error") -> list[dict[str, str]]:
    """The V0 engine's counters (no ``engine`` label, no http_requests_total): 10 requests/s
    finished by stop or length, plus ``abort_per_min`` finished by ``reason``."""
    out = [
        series("vllm:request_success_total", "0+540x60", finished_reason="stop", model_name="m"),
        series("vllm:request_success_total", "0+60x60", finished_reason="length", model_name="m"),
        series("vllm:e2e_request_latency_seconds_count", "0+600x60", model_name="m"),
        series("up", "1x60", instance="10.0.0.7:8000"),
    ]
    if abort_per_min:
        out.append(
            series(
                "vllm:request_success_total",
                f"0+{abort_per_min}x60",
                finished_reason=reason,
                model_name="m",
            )
        )
    return out


V0_SPECS = [
    pytest.param({"serverVersion": "0.8.5", "serverVariant": "v0"}, id="0.8.5 on the V0 engine"),
    pytest.param({"serverVersion": "0.8"}, id="0.8.0: no HTTP metrics in any engine"),
]
SLOS = [{"name": "availability", "objective": 99.9}]


@pytest.mark.parametrize("version", V0_SPECS)
def test_v0_engine_traffic_is_seen_and_healthy_stays_silent(
    tmp_path: Path, version: dict[str, str]
) -> None:
    plan = plan_of(spec_data("vllm", slos=SLOS, **version))
    assert plan.requests.name == "vllm:request_success_total"
    promtool_passes(
        tmp_path,
        plan,
        _v0_traffic(0),
        [
            recorded('service:model_requests:rate5m{service="svc"}', "30m", 10),
            recorded('service:model_request_errors:ratio_rate5m{service="svc"}', "30m", 0),
            firing("ModelErrorRatioHigh", "30m", 0),
            firing("ErrorBudgetBurn", "30m", 0),
        ],
    )


@pytest.mark.parametrize("version", V0_SPECS)
def test_v0_engine_errors_fire_the_error_ratio_and_the_slo(
    tmp_path: Path, version: dict[str, str]
) -> None:
    """120 engine errors a minute on top of 600 finished: 2/12 = 16.7 % errors (client
    aborts are not failures: tests/test_failure_definition.py)."""
    plan = plan_of(spec_data("vllm", slos=SLOS, **version))
    ratio = 'service:model_request_errors:ratio_rate5m{service="svc"}'
    promtool_passes(
        tmp_path,
        plan,
        _v0_traffic(120),
        [
            recorded('service:model_requests:rate5m{service="svc"}', "30m", 12),
            recorded(ratio, "30m", 0.166667),
            firing("ModelErrorRatioHigh", "30m", 1),
            paging_budget_burn("30m"),
        ],
    )


def test_the_engine_counter_named_in_the_spec_keeps_its_matchers() -> None:
    """Another frontend without HTTP metrics: naming the engine counter gets its error
    matchers, not the HTTP counter's status=~"5.."."""
    plan = plan_of(
        spec_data(
            "vllm",
            serverVersion="0.11",
            metrics={"requests": {"name": "vllm:request_success_total"}},
        )
    )
    assert [m.render() for m in plan.requests.error_matchers] == ['finished_reason="error"']
    assert [m.render() for m in plan.requests.exclude_matchers] == ['finished_reason!="abort"']
    assert plan.requests.sources == ()
    assert all(m.label != "handler" for m in plan.requests.matchers)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        pytest.param({"serverVersion": "0.11", "serverVariant": "v0"}, "spec.serverVersion: variant v0 does not exist in vllm 0.11 and later (vLLM 0.11.0 removed the V0 engine)", id="V0 after its removal"),
        pytest.param({"serverVariant": "v0"}, "spec.serverVariant: variant v0 does not exist in vllm 0.11 and later", id="V0 without a release"),
    ],
)  # fmt: skip
def test_a_variant_the_release_does_not_have_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: dict[str, str], says: str
) -> None:
    err = cli_error(tmp_path, capsys, spec_data("vllm", **body))
    assert says in err, err
    assert "from 0.8, before 0.11" in err


def test_a_variant_on_a_server_without_variants_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = cli_error(tmp_path, capsys, spec_data("tgi", serverVariant="v0"))
    assert "spec.serverVariant: server tgi has no variant 'v0'" in err
    assert "remove spec.serverVariant" in err


# --- case 3: units from the metric name ----------------------------------------------------

ISTIO_LE_MS = (1, 100, 250, 1000, 2500, 5000, 10000)


def _istio_spec(**duration: Any) -> dict[str, Any]:
    return spec_data(
        "openai-http",
        metrics={
            "requestDuration": {
                "name": "istio_request_duration_milliseconds",
                "buckets": [0.001, 0.1, 0.25, 1, 2.5, 5, 10],
                **duration,
            },
            "requests": {
                "name": "istio_requests_total",
                "errorMatchers": {"response_code": "5.."},
            },
        },
        slos=[
            {"name": "latency", "indicator": "requestDuration", "threshold": "1s", "objective": 99}
        ],
        alerts={"latencyP99": {"threshold": "2500ms"}},
    )


def _istio_traffic(duration_ms: float) -> list[dict[str, str]]:
    """600 requests a minute, each taking ``duration_ms``; le spelled as Envoy writes it."""
    out = [
        series(
            "istio_request_duration_milliseconds_bucket",
            f"0+{600 if duration_ms <= le else 0}x90",
            le=str(le),
            response_code="200",
        )
        for le in ISTIO_LE_MS
    ]
    name = "istio_request_duration_milliseconds"
    out.append(series(f"{name}_bucket", "0+600x90", le="+Inf", response_code="200"))
    out.append(series(f"{name}_count", "0+600x90", response_code="200"))
    out.append(series("istio_requests_total", "0+600x90", response_code="200"))
    return out


def test_a_milliseconds_histogram_is_scaled_from_its_name() -> None:
    h = plan_of(_istio_spec()).histograms["requestDuration"]
    assert (h.seconds_per_unit, h.buckets) == (0.001, tuple(float(b) for b in ISTIO_LE_MS))
    assert plan_of(_istio_spec()).slos[0].threshold_bound == 1000


def test_a_healthy_milliseconds_histogram_fires_nothing(tmp_path: Path) -> None:
    """Every request takes ~200 ms (le=250 bucket): p99 = 100 + 0.99 × 150 = 248.5 ms."""
    p99 = 'service:model_latency_seconds:quantile_rate5m{indicator="e2e",quantile="0.99"}'
    promtool_passes(
        tmp_path,
        plan_of(_istio_spec()),
        _istio_traffic(200),
        [
            recorded(p99, "80m", 0.2485),
            firing("ModelLatencyP99High", "80m", 0),
            firing("ModelSlowRequestsHigh", "80m", 0),
            firing("ErrorBudgetBurn", "80m", 0),
        ],
    )


def test_slow_requests_on_a_milliseconds_histogram_fire_the_right_alerts(tmp_path: Path) -> None:
    """Every request takes ~3 s (le=5000 bucket): p99 = 2.5 + 0.99 × 2.5 = 4.975 s."""
    p99 = 'service:model_latency_seconds:quantile_rate5m{indicator="e2e",quantile="0.99"}'
    promtool_passes(
        tmp_path,
        plan_of(_istio_spec()),
        _istio_traffic(3000),
        [
            recorded(p99, "30m", 4.975),
            firing("ModelLatencyP99High", "30m", 1),
            firing("ModelSlowRequestsHigh", "30m", 1),
            paging_budget_burn("30m"),
        ],
    )


@pytest.mark.parametrize(
    ("name", "unit", "scale"),
    [
        pytest.param("my_latency", "milliseconds", 0.001, id="a name without a unit takes the declared one"),
        pytest.param("my_latency", None, 1.0, id="no unit anywhere: seconds"),
        pytest.param("gateway_latency_us", None, 1e-6, id="_us is microseconds"),
        pytest.param("gateway_latency_microseconds", "microseconds", 1e-6, id="a unit agreeing with the name"),
        pytest.param("gateway_latency_ms", None, 0.001, id="_ms is milliseconds"),
        pytest.param("http_request_duration_seconds", None, 1.0, id="_seconds is seconds"),
    ],
)  # fmt: skip
def test_the_unit_comes_from_the_name_or_the_spec(
    name: str, unit: str | None, scale: float
) -> None:
    duration: dict[str, Any] = {"name": name, "buckets": [0.1, 1, 10]}
    if unit is not None:
        duration["unit"] = unit
    data = spec_data("openai-http", metrics={"requestDuration": duration})
    h = plan_of(data).histograms["requestDuration"]
    assert h.seconds_per_unit == scale
    assert [b * scale for b in h.buckets] == pytest.approx([0.1, 1, 10])


@pytest.mark.parametrize(
    ("server", "metrics", "says"),
    [
        pytest.param("openai-http", {"requestDuration": {"name": "istio_request_duration_milliseconds", "buckets": [0.1, 1], "unit": "seconds"}}, "spec.metrics.requestDuration.unit: seconds contradicts the metric name istio_request_duration_milliseconds, which says milliseconds", id="unit against the name"),
        pytest.param("openai-http", {"requestDuration": {"name": "latency_seconds", "buckets": [0.1, 1], "unit": "milliseconds"}}, "spec.metrics.requestDuration.unit: milliseconds contradicts the metric name latency_seconds, which says seconds", id="ms declared on a _seconds name"),
        pytest.param("triton", {"timeToFirstToken": {"unit": "seconds"}}, "spec.metrics.timeToFirstToken.unit: seconds contradicts the preset: nv_inference_first_response_histogram_ms records milliseconds", id="unit against the preset"),
        pytest.param("openai-http", {"requestDuration": {"name": "istio_request_duration_milliseconds_bucket", "buckets": [0.1, 1]}}, "spec.metrics.requestDuration.name: istio_request_duration_milliseconds_bucket is one series of a histogram; give the histogram's base name (istio_request_duration_milliseconds)", id="a _bucket series as the name"),
        pytest.param("vllm", {"requests": {"unit": "milliseconds"}}, "spec.metrics.requests.unit: unit applies to latency histograms only", id="unit on a counter"),
        pytest.param("vllm", {"kvCacheUsage": {"buckets": [1]}}, "spec.metrics.kvCacheUsage.buckets: buckets applies to latency histograms only", id="buckets on a gauge"),
    ],
)  # fmt: skip
def test_a_unit_the_metric_contradicts_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    server: str,
    metrics: dict[str, Any],
    says: str,
) -> None:
    err = cli_error(tmp_path, capsys, spec_data(server, metrics=metrics))
    assert says in err, err


def test_a_renamed_histogram_without_buckets_keeps_the_presets_bounds_in_its_unit() -> None:
    data = spec_data(
        "openai-http", metrics={"requestDuration": {"name": "istio_request_duration_milliseconds"}}
    )
    h = plan_of(data).histograms["requestDuration"]
    assert h.buckets[:3] == (5.0, 10.0, 25.0) and h.buckets[-1] == 120000.0


def test_every_preset_histogram_agrees_with_its_name() -> None:
    from generator.presets import PRESETS
    from generator.units import TIME_UNITS, unit_from_name

    for entries in PRESETS.values():
        for preset in entries:
            for h in preset.latency.values():
                named = unit_from_name(h.name)
                if named is not None:
                    assert TIME_UNITS[named] == h.seconds_per_unit, h.name


def test_plan_errors_are_collected_not_raised_one_by_one() -> None:
    data = spec_data(
        "openai-http",
        metrics={
            "requestDuration": {"name": "a_ms", "buckets": [0.1], "unit": "seconds"},
            "requests": {"unit": "seconds"},
        },
    )
    with pytest.raises(ObsgenError) as caught:
        plan_of(data)
    assert [d.path for d in caught.value.diagnostics] == [
        "spec.metrics.requestDuration.unit",
        "spec.metrics.requests.unit",
    ]
