"""``ModelPrefixCacheHitRatioLow``: the prefix cache's hit ratio below ``alerts.prefixCache.min``
while requests flow (vLLM counters, SGLang gauge); proved by the real promtool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.builders.guard_rules import signal_inputs
from generator.builders.rulefile import rule_file
from generator.cases.rule_tests import family_groups
from generator.plan import ServicePlan
from generator.yamlio import dump_yaml
from tests.helpers_promtool import assert_ok, run_promtool
from tests.test_server_reality import firing, plan_of, promtool_passes, series, spec_data

ALERT = "ModelPrefixCacheHitRatioLow"
ENGINE = {"model_name": "m", "engine": "0"}
HITS, QUERIES = "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"


def alerts_of(plan: ServicePlan) -> list[dict[str, Any]]:
    return [r for g in rule_file(plan)["groups"] for r in g["rules"] if r.get("alert") == ALERT]


@pytest.mark.parametrize(
    ("server", "record", "metrics"),
    [
        pytest.param("vllm", "service:model_prefix_cache_hits:ratio_rate5m", {HITS, QUERIES}, id="vllm"),
        pytest.param("sglang", "service:model_prefix_cache_hits:avg", {"sglang:cache_hit_rate"}, id="sglang"),
    ],
)  # fmt: skip
def test_a_ticket_below_the_specs_ratio_while_requests_flow_with_a_guard(
    server: str, record: str, metrics: set[str]
) -> None:
    plan = plan_of(spec_data(server, alerts={"prefixCache": {"min": 0.3}}))
    (rule,) = alerts_of(plan)
    low = f'{record}{{namespace="ns",service="svc"}} < 0.3'
    traffic = ' and on (namespace) service:model_requests:rate5m{namespace="ns",service="svc"} > 0'
    # The counters' ratio exists only while tokens are looked up; the gauge needs the gate.
    assert rule["expr"] == (low if server == "vllm" else low + traffic)
    assert rule["labels"]["severity"] == "warning" and rule["for"] == "30m"
    (guard,) = [i for i in signal_inputs(plan) if ALERT in i.readers and i.signal != "requests"]
    assert guard.signal == "prefixCache" and metrics <= {s.metric for s in guard.sources}


@pytest.mark.parametrize(
    ("server", "variant"), [("trtllm", None), ("tgi", None), ("triton", None), ("vllm", "v0")]
)
def test_a_server_without_a_hit_ratio_renders_no_alert(server: str, variant: str | None) -> None:
    extra = {"serverVariant": variant, "serverVersion": "0.8"} if variant else {}
    plan = plan_of(spec_data(server, **extra))
    assert plan.prefix_cache is None and alerts_of(plan) == []


@pytest.mark.parametrize(
    ("values", "requests", "alerts"),
    [
        pytest.param("0.05x60", "0+60x60", 1, id="5 % with traffic: fires"),
        pytest.param("0.05x60", "0x60", 0, id="5 % left over, idle: silent"),
        pytest.param("0.6x60", "0+60x60", 0, id="60 % with traffic: silent"),
    ],
)
def test_sglang_gauge_alerts_only_while_requests_flow(
    tmp_path: Path, values: str, requests: str, alerts: int
) -> None:
    plan = plan_of(spec_data("sglang", alerts={"prefixCache": {"for": "10m"}}))
    inputs = [
        series("up", "1x60"),
        series("sglang:cache_hit_rate", values, model_name="m"),
        series("sglang:num_requests_total", requests, model_name="m"),
    ]
    promtool_passes(tmp_path, plan, inputs, [firing(ALERT, "40m", alerts)])


@pytest.mark.parametrize("server", ["vllm", "sglang"])
def test_generated_cases_fire_when_low_and_stay_silent_when_healthy_or_idle(
    tmp_path: Path, server: str
) -> None:
    plan = plan_of(spec_data(server))
    groups = [g for g in family_groups(plan) if g["name"].startswith(ALERT)]
    fired = {g["name"]: [len(t["exp_alerts"]) for t in g["alert_rule_test"]] for g in groups}
    assert fired == {
        f"{ALERT} fires": [1],
        f"{ALERT} stays quiet": [0],
        f"{ALERT}: idle, silent": [0],
    }
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule_file(plan)), encoding="utf-8")
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "tests.yaml").write_text(dump_yaml(tests), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", "tests.yaml", cwd=tmp_path))


@pytest.mark.parametrize(
    ("hits", "queries", "requests", "alerts"),
    [
        pytest.param("0+50x60", "0+1000x60", "0+60x60", 1, id="5 % with traffic: fires"),
        pytest.param("0+500x60", "0+1000x60", "0+60x60", 0, id="50 % with traffic: silent"),
        pytest.param("0x60", "0x60", "0x60", 0, id="idle, nothing looked up: silent, no 0/0"),
        pytest.param(
            "0x60", "0+1000x60", "0x60", 1, id="looked up, none finished yet: traffic, fires"
        ),
    ],
)
def test_vllm_ratio_reads_the_counters_and_only_alerts_while_tokens_are_looked_up(
    tmp_path: Path, hits: str, queries: str, requests: str, alerts: int
) -> None:
    plan = plan_of(spec_data("vllm", serverVersion="0.11", alerts={"prefixCache": {"for": "10m"}}))
    inputs = [
        series("up", "1x60"),
        series(HITS, hits, **ENGINE),
        series(QUERIES, queries, **ENGINE),
        series(
            "http_requests_total",
            requests,
            handler="/v1/chat/completions",
            status="2xx",
            method="POST",
        ),
    ]
    promtool_passes(tmp_path, plan, inputs, [firing(ALERT, "40m", alerts)])


def test_vllm_reads_the_old_counter_names_of_pods_before_the_rename(tmp_path: Path) -> None:
    plan = plan_of(spec_data("vllm", serverVersion="0.11", alerts={"prefixCache": {"for": "10m"}}))
    inputs = [
        series("up", "1x60"),
        series("vllm:gpu_prefix_cache_hits_total", "0+50x60", **ENGINE),
        series("vllm:gpu_prefix_cache_queries_total", "0+1000x60", **ENGINE),
        series(
            "http_requests_total", "0+60x60", handler="/v1/completions", status="2xx", method="POST"
        ),
    ]
    promtool_passes(tmp_path, plan, inputs, [firing(ALERT, "40m", 1)])
