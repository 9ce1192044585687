"""What a failure is (docs/spec.md, "What a failure is"): streamed failures after the 200,
client aborts and cancellations, rejection and gateway statuses, and how failure sources
combine. Every outcome runs on the service's real rules in the real promtool.

- 20 % of streamed requests fail after their ``200`` (vLLM ``finished_reason="error"``):
  ``ModelErrorRatioHigh`` and the burn-rate tiers fire.
- 10 % client aborts on vLLM, 10 % ``CANCELED`` on Triton, 10 % ``499``: silent.
- An older Triton without the ``reason`` label still counts its failures.
- ``combine: max`` reads the larger source (a lower bound), ``sum`` their sum (an upper
  bound), both capped at the total.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.errors import ObsgenError
from generator.families import error_ratio
from tests.helpers_promtool import promtool_groups
from tests.test_server_reality import (
    firing,
    paging_budget_burn,
    plan_of,
    promtool_passes,
    recorded,
    series,
    spec_data,
)

SLOS = [{"name": "availability", "objective": 99.9}]
RATIO = 'service:model_request_errors:ratio_rate5m{service="svc"}'
UP = series("up", "1x60", instance="10.0.0.7:8000")
HANDLER = "/v1/chat/completions"


def _http(per_min: dict[str, int]) -> list[dict[str, str]]:
    """vLLM's HTTP counter: ``per_min`` requests a minute per status (grouped, ``2xx``)."""
    return [
        series("http_requests_total", f"0+{n}x60", handler=HANDLER, method="POST", status=s)
        for s, n in per_min.items()
    ]


def _engine(per_min: dict[str, int]) -> list[dict[str, str]]:
    """vLLM's engine counter: ``per_min`` finished requests a minute per finish reason."""
    return [
        series(
            "vllm:request_success_total",
            f"0+{n}x60",
            engine="0",
            finished_reason=reason,
            model_name="m",
        )
        for reason, n in per_min.items()
    ]


def _silent() -> list[dict[str, Any]]:
    return [
        recorded(RATIO, "30m", 0),
        firing("ModelErrorRatioHigh", "30m", 0),
        firing("ErrorBudgetBurn", "30m", 0),
    ]


def _pages(ratio: float) -> list[dict[str, Any]]:
    return [
        recorded(RATIO, "30m", ratio),
        firing("ModelErrorRatioHigh", "30m", 1),
        paging_budget_burn("30m"),
    ]


def _vllm(**failure: Any) -> Any:
    body: dict[str, Any] = {"slos": SLOS}
    if failure:
        body["failure"] = failure
    return plan_of(spec_data("vllm", **body))


# --- vLLM: streamed failures after the 200, client aborts -------------------------------------


def test_streamed_failures_after_the_200_page_the_error_ratio_and_the_burn_tiers(
    tmp_path: Path,
) -> None:
    """600 requests a minute, all HTTP 200; the engine finished 120 of them with an error."""
    plan = _vllm()
    (engine,) = plan.requests.sources
    assert engine.name == "vllm:request_success_total" and engine.field == "spec.failure.engine"
    inputs = [UP, *_http({"2xx": 600}), *_engine({"stop": 400, "length": 80, "error": 120})]
    tests = _pages(0.2)
    # Every tier's windows hold 20 % failures, far above each threshold: both page tiers fire
    # at 30m; the ticket tiers' 1d/3d windows sum hourly tiles, the first of which is at 1h.
    tests.append(firing("ErrorBudgetBurn", "30m", 2))
    promtool_passes(tmp_path, plan, inputs, tests)


def test_without_the_engine_source_the_same_traffic_reads_healthy(tmp_path: Path) -> None:
    """``spec.failure.engine: false`` reads the HTTP status alone: the case the issue saw."""
    plan = _vllm(engine=False)
    assert plan.requests.sources == ()
    inputs = [UP, *_http({"2xx": 600}), *_engine({"stop": 480, "error": 120})]
    promtool_passes(tmp_path, plan, inputs, _silent())


@pytest.mark.parametrize("aborts", [60, 6], ids=["10 % client aborts", "1 % client aborts"])
def test_client_aborts_never_page(tmp_path: Path, aborts: int) -> None:
    """vLLM's ``abort`` is "aborted by client" (vllm/v1/engine/__init__.py FinishReason)."""
    plan = _vllm()
    inputs = [UP, *_http({"2xx": 600}), *_engine({"stop": 600 - aborts, "abort": aborts})]
    promtool_passes(tmp_path, plan, inputs, _silent())


def test_healthy_streamed_traffic_with_a_few_aborts_and_errors_stays_silent(
    tmp_path: Path,
) -> None:
    """0.1 % engine errors (below the 5 % error-ratio line and every tier's threshold but the
    ticket tiers' at 30m of history … kept at 0 5xx) and 2 % aborts: nothing pages."""
    plan = _vllm()
    inputs = [UP, *_http({"2xx": 1000}), *_engine({"stop": 980, "abort": 20})]
    promtool_passes(tmp_path, plan, inputs, _silent())


# --- how sources combine ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("combine", "ratio"),
    [
        pytest.param(None, 0.2, id="max by default: the larger source, a lower bound"),
        pytest.param("max", 0.2, id="max: 120 engine errors over 60 HTTP 5xx"),
        pytest.param("sum", 0.3, id="sum: 60 + 120, an upper bound"),
    ],
)
def test_sources_combine_as_the_spec_says(
    tmp_path: Path, combine: str | None, ratio: float
) -> None:
    """600 a minute: 60 answered 5xx (the engine never saw them) and 120 streamed errors."""
    plan = _vllm(**({"combine": combine} if combine else {}))
    inputs = [
        UP,
        *_http({"2xx": 540, "5xx": 60}),
        *_engine({"stop": 420, "error": 120}),
    ]
    promtool_passes(tmp_path, plan, inputs, _pages(ratio))


def test_a_sum_is_capped_at_the_total(tmp_path: Path) -> None:
    """Every request failed, and both sources saw all of them: the sum is 2× the total and
    the ratio stays 1."""
    plan = _vllm(combine="sum")
    inputs = [UP, *_http({"5xx": 600}), *_engine({"error": 600})]
    promtool_passes(tmp_path, plan, inputs, _pages(1))


def test_the_engine_source_alone_is_read_while_the_http_counter_has_no_failure(
    tmp_path: Path,
) -> None:
    """No 5xx series exists yet (a counter is born on its first increment): max still reads
    the engine's errors."""
    plan = _vllm()
    inputs = [UP, *_http({"2xx": 600}), *_engine({"stop": 540, "error": 60})]
    promtool_passes(tmp_path, plan, inputs, _pages(0.1))


# --- Triton: CANCELED, and releases without the reason label ---------------------------------


def _triton(success: int, failures: dict[str | None, int]) -> list[dict[str, str]]:
    """Triton's two counters: ``success`` a minute, and failures a minute per ``reason``
    (None: a release before core r24.08, whose counter has no reason label)."""
    out = [UP, series("nv_inference_request_success", f"0+{success}x60", model="m", version="1")]
    for reason, n in failures.items():
        labels = {"model": "m", "version": "1", **({"reason": reason} if reason else {})}
        out.append(series("nv_inference_request_failure", f"0+{n}x60", **labels))
    return out


@pytest.mark.parametrize("version", ["24.08", "25.06"])
def test_triton_cancellations_do_not_page(tmp_path: Path, version: str) -> None:
    plan = plan_of(spec_data("triton", slos=SLOS, serverVersion=version))
    assert [m.render() for m in plan.requests.exclude_matchers] == ['reason!="CANCELED"']
    inputs = _triton(540, {"CANCELED": 60, "BACKEND": 0, "REJECTED": 0, "OTHER": 0})
    promtool_passes(tmp_path, plan, inputs, _silent())


def test_triton_backend_failures_and_rejections_page_beside_cancellations(
    tmp_path: Path,
) -> None:
    """60 backend failures and 60 rejections (a full queue: the user got no answer) in 600."""
    plan = plan_of(spec_data("triton", slos=SLOS))
    inputs = _triton(420, {"CANCELED": 60, "BACKEND": 60, "REJECTED": 60})
    promtool_passes(tmp_path, plan, inputs, _pages(0.2))


def test_an_older_triton_without_the_reason_label_still_counts_failures(tmp_path: Path) -> None:
    """Before core r24.08 the failure counter has no ``reason``: ``reason!="CANCELED"``
    matches it, so its failures are not dropped with the cancellations."""
    plan = plan_of(spec_data("triton", slos=SLOS, serverVersion="24.05"))
    promtool_passes(tmp_path, plan, _triton(480, {None: 120}), _pages(0.2))


def test_an_exclusion_on_the_failure_counter_is_accepted_and_read(tmp_path: Path) -> None:
    """``spec.metrics.failures.excludeMatchers`` replaces the preset's: REJECTED excluded too."""
    data = spec_data(
        "triton",
        slos=SLOS,
        metrics={
            "failures": {
                "name": "nv_inference_request_failure",
                "excludeMatchers": {"reason": "CANCELED|REJECTED"},
            }
        },
    )
    plan = plan_of(data)
    assert [m.render() for m in plan.requests.exclude_matchers] == ['reason!~"CANCELED|REJECTED"']
    promtool_passes(tmp_path, plan, _triton(480, {"CANCELED": 60, "REJECTED": 60}), _silent())


# --- TensorRT-LLM: cancelled is the client's --------------------------------------------------


def test_trtllm_counts_timeouts_and_excludes_cancelled() -> None:
    plan = plan_of(spec_data("trtllm", serverVersion="1.2"))
    assert [m.render() for m in plan.requests.error_matchers] == ['finished_reason="timeout"']
    assert [m.render() for m in plan.requests.exclude_matchers] == ['finished_reason!="cancelled"']


# --- what a status means ----------------------------------------------------------------------


def _openai(per_min: dict[str, int], **failure: Any) -> tuple[Any, list[dict[str, str]]]:
    """A generic OpenAI server with ungrouped codes: ``per_min`` requests a minute per code."""
    body: dict[str, Any] = {"slos": SLOS}
    if failure:
        body["failure"] = failure
    plan = plan_of(spec_data("openai-http", **body))
    inputs = [
        UP,
        *(
            series("http_requests_total", f"0+{n}x60", handler=HANDLER, method="POST", status=s)
            for s, n in per_min.items()
        ),
    ]
    return plan, inputs


@pytest.mark.parametrize(
    ("code", "pages"),
    [
        pytest.param("429", True, id="429 overload rejection: a failure"),
        pytest.param("499", False, id="499 client closed request: excluded"),
        pytest.param("503", True, id="503 full queue: a failure"),
        pytest.param("504", True, id="504 gateway timeout: a failure"),
        pytest.param("404", False, id="404 the client's own error: not a failure"),
    ],
)
def test_each_status_has_its_stated_meaning(tmp_path: Path, code: str, pages: bool) -> None:
    plan, inputs = _openai({"200": 540, code: 60})
    promtool_passes(tmp_path, plan, inputs, _pages(0.1) if pages else _silent())


def test_the_spec_overrides_the_meaning_of_a_status(tmp_path: Path) -> None:
    """Per-tenant quotas: 429 is the client's; and a 500 the spec calls excluded is dropped."""
    plan, inputs = _openai(
        {"200": 480, "429": 60, "500": 60}, statuses={"429": "excluded", "500": "excluded"}
    )
    (errors,) = plan.requests.error_matchers
    assert errors.render() == 'status=~"5.."'
    # 499 needs no exclusion: 5.. never matched it.
    assert [m.render() for m in plan.requests.exclude_matchers] == ['status!="500"']
    promtool_passes(tmp_path, plan, inputs, _silent())


def test_a_spec_failure_source_is_read_beside_the_status(tmp_path: Path) -> None:
    plan, inputs = _openai(
        {"200": 600},
        sources=[
            {
                "name": "engine_requests_total",
                "errorMatchers": {"outcome": "error"},
                "excludeMatchers": {"outcome": "client_abort"},
            }
        ],
    )
    inputs.append(series("engine_requests_total", "0+90x60", outcome="error"))
    inputs.append(series("engine_requests_total", "0+60x60", outcome="client_abort"))
    promtool_passes(tmp_path, plan, inputs, _pages(0.15))


# --- refused with the field ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failure", "says"),
    [
        pytest.param(
            {"statuses": {"4xx": "excluded"}},
            "spec.failure.statuses",
            id="a status that is not a code",
        ),
        pytest.param(
            {"statuses": {"429": "ignored"}},
            "spec.failure.statuses.429",
            id="a meaning that is not failure or excluded",
        ),
        pytest.param({"combine": "avg"}, "spec.failure.combine", id="an unknown combination"),
        pytest.param(
            {"sources": [{"name": "x_total", "errorMatchers": {"r": "e"}, "excludeMatchers": {"r": ".*"}}]},
            "spec.failure.sources[0].excludeMatchers",
            id="an exclusion that also drops series without the label",
        ),
        pytest.param(
            {"sources": [{"name": "x_total", "errorMatchers": {}}]},
            "spec.failure.sources[0].errorMatchers",
            id="a source that counts no failure",
        ),
    ],
)  # fmt: skip
def test_bad_failure_definitions_are_refused_naming_the_field(
    failure: dict[str, Any], says: str
) -> None:
    with pytest.raises(ObsgenError) as err:
        plan_of(spec_data("vllm", failure=failure))
    text = "\n".join(str(d) for d in err.value.diagnostics)
    assert says in text, text
    assert "Traceback" not in text


# --- the generated cases and the guard, in both promtool lines --------------------------------


@pytest.mark.parametrize("line", ["prometheus3", "prometheus2"])
@pytest.mark.parametrize("combine", ["max", "sum"])
def test_generated_cases_fire_on_streamed_failures_and_stay_quiet_on_aborts(
    tmp_path: Path, line: str, combine: str
) -> None:
    plan = _vllm(combine=combine)
    groups = error_ratio.cases(plan)
    names = [g["name"] for g in groups]
    assert (
        "ModelErrorRatioHigh fires on failures vllm:request_success_total counts after an "
        "HTTP success" in names
    )
    assert (
        "ModelErrorRatioHigh stays quiet on vllm:request_success_total's excluded finished_reason"
        in names
    )
    out = promtool_groups(line, tmp_path, plan, groups)
    assert out.startswith("PASS"), out


def test_generated_cases_catch_an_engine_source_left_out(tmp_path: Path) -> None:
    """The rules of a plan without the engine source fail the streamed-failure case."""
    groups = error_ratio.cases(_vllm())
    out = promtool_groups("prometheus3", tmp_path, _vllm(engine=False), groups)
    assert out.startswith("FAIL") and "after an HTTP success" in out, out


def test_a_declared_engine_source_that_is_missing_fires_its_guard(tmp_path: Path) -> None:
    """Requests flow and the HTTP counter is there, but the engine counter is not exposed
    (a frontend that strips it): ModelSignalMissing{signal="failureSources"} names it; with
    the counter present the guard is silent."""
    plan = _vllm()
    guard = 'ALERTS{alertname="ModelSignalMissing",alertstate="firing",signal="failureSources"}'
    missing = {"expr": f"count({guard}) or vector(0)", "eval_time": "40m"}
    healthy_inputs = [UP, *_http({"2xx": 600}), *_engine({"stop": 600})]
    promtool_passes(
        tmp_path, plan, healthy_inputs, [{**missing, "exp_samples": [{"labels": "{}", "value": 0}]}]
    )
    promtool_passes(
        tmp_path,
        plan,
        [UP, *_http({"2xx": 600})],
        [{**missing, "exp_samples": [{"labels": "{}", "value": 1}]}],
    )


def test_statuses_on_a_server_without_a_status_label_are_refused() -> None:
    with pytest.raises(ObsgenError) as err:
        plan_of(spec_data("triton", failure={"statuses": {"429": "excluded"}}))
    text = "\n".join(str(d) for d in err.value.diagnostics)
    assert "spec.failure.statuses: nv_inference_request_failure tells failures by no HTTP" in text


@pytest.mark.parametrize(
    ("metrics", "says"),
    [
        pytest.param(
            {"failures": {"name": "nv_inference_request_failure", "excludeMatchers": {"reason": "CANCELED|"}}},
            "spec.metrics.failures.excludeMatchers",
            id="a failure-counter exclusion that also drops series without the label",
        ),
        pytest.param(
            {
                "requests": {"excludeMatchers": {"reason": "CANCELED"}},
                "failures": {"name": "nv_inference_request_failure"},
            },
            "spec.metrics.requests.excludeMatchers: with spec.metrics.failures, failed requests "
            "are that counter's: move excludeMatchers to spec.metrics.failures.excludeMatchers",
            id="an exclusion on the success counter beside a failure counter",
        ),
    ],
)  # fmt: skip
def test_bad_exclusions_are_refused_naming_the_field(metrics: dict[str, Any], says: str) -> None:
    with pytest.raises(ObsgenError) as err:
        plan_of(spec_data("triton", metrics=metrics))
    text = "\n".join(str(d) for d in err.value.diagnostics)
    assert says in text, text


@pytest.mark.parametrize(
    ("server", "version", "quiet"),
    [
        pytest.param("triton", "25.06", "nv_inference_request_failure's excluded reason", id="triton CANCELED"),
        pytest.param("trtllm", "1.2", "trtllm_request_success_total's excluded finished_reason", id="trtllm cancelled"),
    ],
)  # fmt: skip
def test_generated_cases_keep_excluded_failures_quiet(
    tmp_path: Path, server: str, version: str, quiet: str
) -> None:
    plan = plan_of(spec_data(server, serverVersion=version))
    groups = error_ratio.cases(plan)
    assert f"ModelErrorRatioHigh stays quiet on {quiet}" in [g["name"] for g in groups]
    out = promtool_groups("prometheus3", tmp_path, plan, groups)
    assert out.startswith("PASS"), out
