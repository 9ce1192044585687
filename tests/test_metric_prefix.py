"""``spec.metrics.prefix``: preset names re-exported under a prefix (Ray Serve's ``ray_``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from generator.cli import main
from generator.plan import resolve
from generator.presets import get_preset
from generator.presets.model import metric_names, prefixed
from generator.spec import load_spec
from tests.factories import good_spec, set_path, write_spec
from tests.helpers_promtool import logging_promtool

ROOT = Path(__file__).resolve().parents[1]
RAY = ROOT / "tests" / "fixtures" / "ray-serve-vllm.yaml"


def test_every_preset_name_gets_the_prefix_and_nothing_else_changes() -> None:
    preset = get_preset("vllm", "0.11")
    ray = prefixed(preset, "ray_")
    assert metric_names(ray) == tuple("ray_" + n for n in metric_names(preset))
    assert ray.latency["timeToFirstToken"].buckets == preset.latency["timeToFirstToken"].buckets
    assert ray.model_label == preset.model_label
    assert prefixed(preset, "") is preset


def test_ray_serve_rules_read_ray_vllm_names_and_pass_promtool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = logging_promtool(tmp_path, monkeypatch)
    out = tmp_path / "out"
    # A render runs `promtool check rules` and the generated `promtool test rules` (split by
    # the rules each test observes); it writes nothing unless both pass.
    assert main(["render", "--no-cache", "--out", str(out), str(RAY)]) == 0
    calls = log.read_text().splitlines()
    assert any(c.startswith("check rules") for c in calls)
    assert any(c.startswith("test rules") for c in calls)
    rules = (out / "rules" / "ray-llm.rules.yaml").read_text(encoding="utf-8")
    assert "ray_vllm:time_to_first_token_seconds_bucket{" in rules
    assert "ray_vllm:num_requests_waiting{" in rules
    assert "ray_vllm:kv_cache_usage_perc{" in rules
    # No preset name is left unprefixed.
    assert not re.search(r"(?<![A-Za-z0-9_:])vllm:", rules)
    # Kubernetes and GPU exporter series keep their own names.
    for name in ("container_memory_working_set_bytes{", "kube_pod_container_", "gpu_memory_"):
        assert name in rules and "ray_" + name not in rules
    assert 'up{job="ray-llm"' in rules


def test_an_explicit_name_is_taken_as_written_and_keeps_its_counters_matchers() -> None:
    plan = resolve(load_spec(RAY), str(RAY))
    assert plan.requests.name == "ray_vllm:request_success_total"
    assert [m.render() for m in plan.requests.error_matchers] == ['finished_reason="error"']
    assert [m.render() for m in plan.requests.exclude_matchers] == ['finished_reason!="abort"']
    assert plan.requests.sources == (), "the engine counter is the request counter itself"
    assert plan.metric_prefix == "ray_"


def test_an_overridden_name_is_not_prefixed(tmp_path: Path) -> None:
    data = set_path(yaml.safe_load(RAY.read_text()), "spec.metrics.prefix", "kserve_")
    set_path(data, "spec.metrics.queueDepth", {"name": "my_queue"})
    # A renamed request counter must state its own matchers (never the preset's, silently).
    set_path(data, "spec.metrics.requests.errorMatchers", {"finished_reason": "abort"})
    path = write_spec(tmp_path, data)
    plan = resolve(load_spec(path), str(path))
    assert plan.queue_depth is not None and plan.queue_depth.name == "my_queue"
    assert plan.running_requests is not None
    assert plan.running_requests.name == "kserve_vllm:num_requests_running"
    # Named as written: not the Ray name with kserve_ in front.
    assert plan.requests.name == "ray_vllm:request_success_total"


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        pytest.param(
            "ray.",
            "spec.metrics.prefix: 'ray.' makes the preset's metric name 'ray.http_request_duration_seconds', "
            "which is not a legacy Prometheus metric name",
            id="a dotted prefix on Prometheus 2 names the field and the name it makes",
        ),
        pytest.param(
            "9",
            "spec.metrics.prefix: '9' makes the preset's metric name '9",
            id="a leading digit is refused",
        ),
        pytest.param(
            "ray\n",
            "spec.metrics.prefix: 'ray\\n' contains a control character",
            id="a control character is refused",
        ),
    ],
)
def test_a_prefix_that_makes_no_metric_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prefix: str, expected: str
) -> None:
    data = set_path(good_spec(), "spec.metrics.prefix", prefix)
    spec = write_spec(tmp_path / "specs", data)
    assert main(["render", "--out", str(tmp_path), str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"specs/x.yaml: {expected}" in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "rules").exists()


def test_a_dotted_prefix_on_prometheus_3_gives_quoted_selectors(tmp_path: Path) -> None:
    data = set_path(yaml.safe_load(RAY.read_text()), "spec.metrics.prefix", "otel.")
    set_path(data, "spec.prometheus.version", "3")
    set_path(data, "spec.metrics.requests", {"name": "otel.vllm:request_success_total"})
    path = write_spec(tmp_path, data)
    plan = resolve(load_spec(path), str(path))
    assert "otel.vllm:num_requests_waiting" in plan.utf8_names
    out = tmp_path / "out"
    assert main(["render", "--skip-promtool", "--out", str(out), str(path)]) == 0
    rules = (out / "rules" / "ray-llm.rules.yaml").read_text(encoding="utf-8")
    assert '{"otel.vllm:num_requests_waiting",job="ray-llm",namespace="ray"}' in rules
    assert (
        '{"otel.vllm:request_success_total",finished_reason!="abort",finished_reason="error"'
        in rules
    )
