"""Error matchers that can never match: check refuses them naming the field and the fix, the
presets read the series that carries the outcome, ``metrics.failures`` names a failure counter,
and the requestErrors meaning guard tickets when request series carry no outcome label.

The label layouts obsgen knows are checked against the real prometheus-fastapi-instrumentator
(PyPI) serving a real FastAPI app; the guard and the failure counter run on the real promtool.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi import FastAPI, Response
from fastapi.testclient import TestClient
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families
from prometheus_fastapi_instrumentator import Instrumentator

from generator import naming
from generator.builders.guard_rules import signal_inputs
from generator.cases import guard_cases
from generator.errors import ObsgenError
from generator.parts import promtool_series
from generator.plan import ServicePlan, resolve
from generator.presets import PRESETS, layouts
from generator.render import find_specs, load_plans
from generator.signals.healthy import healthy as healthy_service
from generator.spec import parse_spec
from tests.factories import good_spec
from tests.helpers_promtool import ROOT, assert_ok, render_to, run_promtool

TARGET = 'job="o1-preview",namespace="ai-inference"'


def _plan(data: dict[str, Any]) -> ServicePlan:
    return resolve(parse_spec(data, "t.yaml"), "t.yaml")


def _refused(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ObsgenError) as err:
        _plan(data)
    return [(d.path, d.message) for d in err.value.diagnostics]


def _with_requests(server: str | None = None, **requests: Any) -> dict[str, Any]:
    data = good_spec()
    if server is not None:
        data["spec"]["server"] = server
        data["spec"]["metrics"] = {}
        data["spec"]["slos"] = [data["spec"]["slos"][0]]
        data["spec"]["alerts"] = {"errorRatio": data["spec"]["alerts"]["errorRatio"]}
    data["spec"]["metrics"]["requests"] = requests
    return data


# --- the instrumentator's real layout --------------------------------------------------------


def _instrumented_families() -> dict[str, set[str]]:
    """Sample name → label names, scraped from a real app under the instrumentator's
    defaults after one 200 and one 500."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(fail: int = 0) -> Response:
        return Response(status_code=500 if fail else 200)

    registry = CollectorRegistry()
    Instrumentator(registry=registry).instrument(app).expose(app)
    client = TestClient(app)
    client.post("/v1/chat/completions")
    client.post("/v1/chat/completions?fail=1")
    text = client.get("/metrics").text
    found: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, set()).update(sample.labels)
    return found


def test_the_http_layouts_are_the_instrumentators_own() -> None:
    families = _instrumented_families()
    checked = 0
    for name, layout in layouts.LAYOUTS.items():
        if "openai-http" not in layout.servers:
            continue
        assert families[name] == set(layout.labels), name
        checked += 1
    assert checked == 3
    # The outcome label's values: grouped (2xx, 5xx), all in the known set.
    assert "status" not in families["http_request_duration_seconds_count"]


def test_the_openai_http_preset_reads_the_counter_that_carries_status() -> None:
    (preset,) = PRESETS["openai-http"]
    assert preset.requests.name == "http_requests_total"
    for server, entries in PRESETS.items():
        for p in entries:
            for req in (p.requests, *p.other_requests):
                for label, regex in req.error_matchers:
                    assert layouts.matcher_problem(server, req.name, label, regex) is None


# --- check refuses what can never match ------------------------------------------------------


def test_status_read_off_the_duration_histogram_is_refused_naming_the_counter() -> None:
    data = _with_requests(
        name="http_request_duration_seconds_count", errorMatchers={"status": "5.."}
    )
    problems = _refused(data)
    assert len(problems) == 1
    path, message = problems[0]
    assert path == "spec.metrics.requests.errorMatchers"
    assert "carries handler, method" in message
    assert "set spec.metrics.requests.name: http_requests_total" in message
    assert "prometheus-fastapi-instrumentator 8.1.0" in message


def test_a_regex_no_value_of_the_label_can_take_is_refused() -> None:
    data = _with_requests("trtllm", errorMatchers={"finished_reason": "error|abort"})
    ((path, message),) = _refused(data)
    assert path == "spec.metrics.requests.errorMatchers"
    assert "matches none of the values" in message and "cancelled" in message
    assert _plan(_with_requests("trtllm", errorMatchers={"finished_reason": "cancelled"}))
    http = _with_requests(name="http_requests_total", errorMatchers={"status": "error"})
    ((_, message),) = _refused(http)
    assert "5xx" in message  # the values it could have matched
    # Ungrouped codes (should_group_status_codes=False) are values the label can take too.
    assert _plan(_with_requests(name="http_requests_total", errorMatchers={"status": "5\\d\\d"}))


@pytest.mark.parametrize(
    ("server", "kept"),
    [
        pytest.param("openai-http", "status=~'5..'", id="openai-http error matchers"),
        pytest.param("tgi", "tgi_request_failure", id="tgi failure counter"),
    ],
)
def test_renaming_the_request_counter_never_keeps_the_presets_matchers(
    server: str, kept: str
) -> None:
    ((path, message),) = _refused(_with_requests(server, name="my_requests_total"))
    assert path == "spec.metrics.requests.name"
    assert kept in message
    assert "spec.metrics.requests.errorMatchers" in message
    assert "spec.metrics.failures.name" in message
    stated = _plan(_with_requests(server, name="my_requests_total", errorMatchers={"code": "5.."}))
    assert stated.requests.failure_name is None
    assert [(m.label, m.value) for m in stated.requests.error_matchers] == [("code", "5..")]


def test_a_known_counter_of_the_server_keeps_its_own_matchers() -> None:
    plan = _plan(_with_requests("vllm", name="vllm:request_success_total"))
    assert [(m.label, m.value) for m in plan.requests.error_matchers] == [
        ("finished_reason", "error")
    ]
    # "abort" is the client's (vllm/v1/engine/__init__.py FinishReason): excluded, not failed.
    assert [(m.label, m.op, m.value) for m in plan.requests.exclude_matchers] == [
        ("finished_reason", "!=", "abort")
    ]


# --- metrics.failures ------------------------------------------------------------------------


def _failures_spec() -> dict[str, Any]:
    """A small spec (one availability SLO, the error ratio, no GPU) with a failure counter."""
    data = _with_requests("openai-http", name="jobs_succeeded_total")
    data["spec"]["metrics"]["failures"] = {"name": "jobs_failed_total"}
    data["spec"]["gpu"] = {"exporter": "none"}
    return data


def test_metrics_failures_names_the_failure_counter() -> None:
    plan = _plan(_failures_spec())
    assert (plan.requests.name, plan.requests.failure_name) == (
        "jobs_succeeded_total",
        "jobs_failed_total",
    )
    assert plan.requests.error_matchers == ()
    assert [i.signal for i in signal_inputs(plan)].count("requestErrors") == 0


@pytest.mark.parametrize(
    ("field", "value", "path"),
    [
        ("errorMatchers", {"status": "5.."}, "spec.metrics.requests.errorMatchers"),
        ("failures.selector", {"job": "x"}, "spec.metrics.failures.selector"),
        ("failures.buckets", [1.0], "spec.metrics.failures.buckets"),
    ],
)
def test_metrics_failures_refuses_what_it_does_not_read(field: str, value: Any, path: str) -> None:
    data = _failures_spec()
    metrics = data["spec"]["metrics"]
    if field.startswith("failures."):
        metrics["failures"][field.split(".", 1)[1]] = value
    else:
        metrics["requests"][field] = value
    assert path in {p for p, _ in _refused(data)}


def test_metrics_failures_rules_pass_their_generated_promtool_tests(tmp_path: Path) -> None:
    spec = tmp_path / "specs" / "jobs.yaml"
    spec.parent.mkdir()
    spec.write_text(yaml.safe_dump(_failures_spec(), sort_keys=False), encoding="utf-8")
    written = render_to(spec, tmp_path)
    tests = [written["rules/o1-preview.test.yaml"]]
    text = "".join(p.read_text(encoding="utf-8") for p in tests)
    assert "jobs_failed_total" in text and naming.ALERT_ERROR_RATIO in text
    assert_ok(run_promtool("test", "rules", *tests, cwd=tmp_path), [str(p) for p in tests])


# --- the requestErrors meaning guard ----------------------------------------------------------


def test_every_preset_with_error_matchers_gets_a_meaning_guard() -> None:
    plans = load_plans(find_specs([], ROOT), ROOT)
    for plan in plans:
        guards = [i for i in signal_inputs(plan) if i.signal == "requestErrors"]
        if plan.requests.failure_name is not None:
            assert guards == [], plan.name
            continue
        labels = sorted(m.label for m in plan.requests.error_matchers)
        assert [i.metric for i in guards] == [f"{plan.requests.name}{{{x}}}" for x in labels]
    servers = {p.server for p in plans if p.requests.failure_name is None}
    assert {"openai-http", "vllm", "trtllm"} <= servers


def test_a_label_only_failures_carry_gets_no_meaning_guard() -> None:
    plan = _plan(_with_requests(name="my_requests_total", errorMatchers={"error": ".+"}))
    assert [i for i in signal_inputs(plan) if i.signal == "requestErrors"] == []


def _guard_case(status: bool) -> list[dict[str, Any]]:
    labels = f'{TARGET},instance="a:8000",handler="/v1/chat/completions",method="POST"'
    if status:
        labels += ',status="2xx"'
    counter = f"http_requests_total{{{labels}}}"
    return [
        {"series": f'up{{{TARGET},instance="a:8000"}}', "values": "1x40"},
        {"series": counter, "values": "0+100x40"},
    ]


def _guard_test(tmp_path: Path, series: list[dict[str, Any]], expected: list[Any]) -> None:
    rules = render_to(ROOT / "specs" / "o1-preview.yaml", tmp_path)["rules/o1-preview.rules.yaml"]
    test = {
        "rule_files": [str(rules)],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": series,
                "promql_expr_test": [
                    {
                        "expr": 'ALERTS{alertname="ModelSignalMissing",signal="requestErrors",'
                        'alertstate="firing"}',
                        "eval_time": "20m",
                        "exp_samples": expected,
                    }
                ],
            }
        ],
    }
    path = tmp_path / "meaning.test.yaml"
    path.write_text(yaml.safe_dump(test, sort_keys=False), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", path), [path.name])


def test_request_series_without_the_status_label_ticket_naming_it(tmp_path: Path) -> None:
    plan = load_plans([ROOT / "specs" / "o1-preview.yaml"], ROOT)[0]
    (item,) = [i for i in signal_inputs(plan) if i.signal == "requestErrors"]
    assert "carries the label status" in item.remedy
    assert "spec.metrics.requests.errorMatchers" in item.remedy
    labels = {
        "__name__": "ALERTS",
        "alertname": "ModelSignalMissing",
        "alertstate": "firing",
        "metric": "http_requests_total{status}",
        "namespace": "ai-inference",
        "service": "o1-preview",
        "severity": "warning",
        "signal": "requestErrors",
        "team": "ml-platform",
    }
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    _guard_test(tmp_path, _guard_case(status=False), [{"labels": f"{{{inner}}}", "value": 1}])


def test_request_series_with_the_status_label_stay_silent(tmp_path: Path) -> None:
    _guard_test(tmp_path, _guard_case(status=True), [])


def test_the_generated_cases_strip_the_label_and_keep_the_series() -> None:
    plan = load_plans([ROOT / "specs" / "llama-trtllm-serve.yaml"], ROOT)[0]
    (item,) = [i for i in signal_inputs(plan) if i.signal == "requestErrors"]
    s = healthy_service(plan, [promtool_series.Klass(60)])
    before = {dict(k[1]).get("finished_reason") for k in s.counters if k[0] == plan.requests.name}
    for source in item.needs[0]:
        guard_cases._remove(plan, s, copy.deepcopy(source))
    after = [dict(k[1]) for k in s.counters if k[0] == plan.requests.name]
    assert before - {None} and after
    assert all("finished_reason" not in labels for labels in after)
    assert guard_cases.guard_firing(plan, item, s)
