"""Goodput SLOs (``spec.slos[].targets``): the union bound 1 − Σ violation shares recorded and
its ``GoodputBudgetBurn`` tiers, proved by the real promtool; the spec's refusals."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from generator.builders.goodput_panels import goodput_panels
from generator.builders.guard_rules import signal_inputs
from generator.builders.rulefile import rule_file
from generator.cases.goodput_cases import goodput_groups
from generator.errors import ObsgenError
from generator.yamlio import dump_yaml
from tests.helpers_promtool import assert_ok, run_promtool
from tests.test_server_reality import firing, plan_of, promtool_passes, series, spec_data

ALERT = "GoodputBudgetBurn"
LOW = "GoodputBudgetLow"
TTFT, E2E = "vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds"
TARGETS = [{"signal": "ttft", "threshold": "2500ms"}, {"signal": "e2e", "threshold": "30s"}]
PER_MIN = 1000


def goodput_spec(targets: list[dict[str, Any]] | None = None, **slo: Any) -> dict[str, Any]:
    """vLLM 0.11 with one goodput SLO at 99 % over 30d (default tiers)."""
    item = {"name": "goodput", "objective": 99, "targets": targets or TARGETS, **slo}
    return spec_data("vllm", serverVersion="0.11", slos=[item])


def traffic(ttft_bad: int, e2e_bad: int, minutes: int = 240) -> list[dict[str, str]]:
    """``PER_MIN`` requests a minute; ``ttft_bad`` of them over 2.5 s to the first token and
    ``e2e_bad`` over 30 s end to end (each histogram's share: bad / PER_MIN)."""
    return [
        series("up", f"1x{minutes}"),
        series(TTFT + "_count", f"0+{PER_MIN}x{minutes}"),
        series(TTFT + "_bucket", f"0+{PER_MIN - ttft_bad}x{minutes}", le="2.5"),
        series(E2E + "_count", f"0+{PER_MIN}x{minutes}"),
        series(E2E + "_bucket", f"0+{PER_MIN - e2e_bad}x{minutes}", le="30.0"),
    ]


def value(record: str, eval_time: str, expected: float, **labels: str) -> dict[str, Any]:
    """An expression test: ``record`` of the service (and ``labels``) is ``expected``."""
    inner = ",".join(f'{k}="{v}"' for k, v in sorted({"service": "svc", **labels}.items()))
    return {
        "expr": f"sum({record}{{{inner}}})",
        "eval_time": eval_time,
        "exp_samples": [{"labels": "{}", "value": expected}],
    }


def burns(severity: str, eval_time: str, count: int) -> dict[str, Any]:
    """An expression test: ``count`` firing ``GoodputBudgetBurn`` tiers of ``severity``."""
    alerts = (
        f'ALERTS{{alertname="{ALERT}",alertstate="firing",service="svc",severity="{severity}"}}'
    )
    return {
        "expr": f"count({alerts}) or vector(0)",
        "eval_time": eval_time,
        "exp_samples": [{"labels": "{}", "value": count}],
    }


def alerts_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    plan = plan_of(data)
    return [r for g in rule_file(plan)["groups"] for r in g["rules"] if r.get("alert") == ALERT]


def test_one_tier_per_burn_rate_naming_the_bound_in_its_text() -> None:
    rules = alerts_of(goodput_spec())
    assert [r["labels"]["severity"] for r in rules] == [
        "critical",
        "critical",
        "warning",
        "warning",
    ]
    for rule in rules:
        assert "lower bound (union bound)" in rule["annotations"]["summary"]
        assert "lower bound (union bound)" in rule["annotations"]["description"]
        assert "ttft ≤ 2.5s, e2e ≤ 30s" in rule["annotations"]["description"]
        assert rule["labels"]["slo"] == "goodput"
    fastest = rules[0]["expr"]
    assert fastest.startswith(
        'service:slo_goodput_violation_bound:ratio_rate1h{namespace="ns",service="svc",'
        'slo="goodput"} > 0.144'
    )


def test_a_goodput_slo_stays_out_of_the_availability_and_latency_slos() -> None:
    plan = plan_of(goodput_spec())
    assert plan.slos == () and [s.name for s in plan.goodput] == ["goodput"]
    assert [t.histogram.indicator for t in plan.goodput[0].targets] == ["ttft", "e2e"]


def test_healthy_traffic_keeps_the_bound_itself_within_target(tmp_path: Path) -> None:
    # 0.4 % of requests slow to the first token, 0.3 % slow end to end: even if no request
    # missed both, goodput ≥ 99.3 % > 99 %, so the bound (not only the truth) meets the
    # objective and every tier, the 1× ticket included, stays silent.
    plan = plan_of(goodput_spec())
    at = "230m"
    tests = [
        value("service:slo_goodput_violations:ratio_rate1h", at, 0.004, indicator="ttft"),
        value("service:slo_goodput_violations:ratio_rate1h", at, 0.003, indicator="e2e"),
        value("service:slo_goodput_lower_bound:ratio_rate30d", at, 0.993),
        firing(ALERT, "30m", 0),
        firing(ALERT, at, 0),
    ]
    promtool_passes(tmp_path, plan, traffic(4, 3), tests)


def test_shares_each_below_the_page_threshold_page_once_summed(tmp_path: Path) -> None:
    # 8 % of requests miss TTFT and 8 % miss e2e: neither share alone reaches the 14.4× page
    # threshold (14.4 %), but up to 16 % of requests may miss a target — the bound pages.
    plan = plan_of(goodput_spec())
    tests = [
        value("service:slo_goodput_violation_bound:ratio_rate1h", "60m", 0.16),
        burns("critical", "60m", 2),
        burns("warning", "60m", 2),
    ]
    promtool_passes(tmp_path, plan, traffic(80, 80), tests)


def test_one_target_far_over_pages_alone(tmp_path: Path) -> None:
    plan = plan_of(goodput_spec())
    tests = [burns("critical", "20m", 2), burns("critical", "0m", 0)]
    promtool_passes(tmp_path, plan, traffic(0, 300, minutes=60), tests)


def test_a_missing_histogram_records_no_bound_rather_than_a_smaller_sum(tmp_path: Path) -> None:
    plan = plan_of(goodput_spec())
    inputs = [s for s in traffic(0, 300, minutes=60) if not s["series"].startswith(TTFT)]
    tests = [
        {
            "expr": 'count(service:slo_goodput_violation_bound:ratio_rate1h{service="svc"}) or vector(0)',
            "eval_time": "30m",
            "exp_samples": [{"labels": "{}", "value": 0}],
        },
        firing(ALERT, "30m", 0),
        # ... and the input guard says so (its `for` is 15m).
        {
            "expr": 'count(ALERTS{alertname="ModelSignalMissing",alertstate="firing",'
            f'metric="{TTFT}_count"}}) or vector(0)',
            "eval_time": "30m",
            "exp_samples": [{"labels": "{}", "value": 1}],
        },
    ]
    promtool_passes(tmp_path, plan, inputs, tests)
    (count,) = [
        i
        for i in signal_inputs(plan)
        if i.metric == TTFT + "_count" and f"{ALERT} (SLO goodput)" in i.readers
    ]
    assert count.signal == "timeToFirstToken"


def test_a_few_requests_at_night_never_page(tmp_path: Path) -> None:
    plan = plan_of(goodput_spec(alerting={"minEvents": 100}))
    inputs = [
        series("up", "1x60"),
        series(TTFT + "_count", "0+1x60"),
        series(TTFT + "_bucket", "0x60", le="2.5"),
        series(E2E + "_count", "0+1x60"),
        series(E2E + "_bucket", "0x60", le="30.0"),
    ]
    promtool_passes(tmp_path, plan, inputs, [firing(ALERT, "50m", 0)])


@pytest.mark.parametrize(
    ("targets", "slo", "where", "says"),
    [
        pytest.param([TARGETS[0]], {}, "spec.slos[0].targets", "at least 2", id="one target"),
        pytest.param(TARGETS * 2 + [TARGETS[0]], {}, "spec.slos[0].targets", "at most 4", id="five targets"),
        pytest.param([TARGETS[0], {"signal": "itl", "threshold": "100ms"}], {}, "spec.slos[0].targets[1].signal", "token gaps", id="inter-token latency"),
        pytest.param([TARGETS[0], {"signal": "ttft", "threshold": "5s"}], {}, "spec.slos[0]", "its own signal", id="a signal twice"),
        pytest.param([TARGETS[0], {"signal": "e2e", "threshold": "25s"}], {}, "spec.slos[0].targets[1].threshold", "bucket", id="not a bucket bound"),
        pytest.param(TARGETS, {"indicator": "ttft", "threshold": "2500ms"}, "spec.slos[0]", "replaces indicator", id="with an indicator"),
        pytest.param([TARGETS[0], {"signal": "tpot", "threshold": "100ms"}], {}, "spec.slos[0].targets[1].signal", "timePerOutputToken", id="no tpot histogram"),
    ],
)  # fmt: skip
def test_bad_targets_are_refused_naming_the_field(
    targets: list[dict[str, Any]], slo: dict[str, Any], where: str, says: str
) -> None:
    with pytest.raises(ObsgenError) as err:
        plan_of(goodput_spec(targets, **slo))
    text = str(err.value)
    assert f"mem.yaml: {where}" in text and says in text, text
    assert "Traceback" not in text


def test_a_declared_per_request_tpot_histogram_is_a_target(tmp_path: Path) -> None:
    # vLLM's per-request mean time per output token, declared with its bounds.
    tpot = "vllm:request_time_per_output_token_seconds"
    targets = [*TARGETS, {"signal": "tpot", "threshold": "100ms"}]
    data = goodput_spec(targets)
    data["spec"]["metrics"] = {
        "timePerOutputToken": {"name": tpot, "buckets": [0.025, 0.05, 0.1, 0.2, 0.5]}
    }
    plan = plan_of(data)
    assert [t.histogram.metric for t in plan.goodput[0].targets][-1] == tpot
    inputs = [
        *traffic(2, 2),
        series(tpot + "_count", f"0+{PER_MIN}x240"),
        series(tpot + "_bucket", f"0+{PER_MIN - 2}x240", le="0.1"),
    ]
    tests = [
        value("service:slo_goodput_lower_bound:ratio_rate30d", "200m", 0.994),
        firing(ALERT, "200m", 0),
    ]
    promtool_passes(tmp_path, plan, inputs, tests)


@pytest.mark.parametrize(
    ("objective", "targets", "body"),
    [
        pytest.param(99, TARGETS, {}, id="99 %, two targets"),
        pytest.param(99.9, [*TARGETS, {"signal": "queue", "threshold": "5s"}], {}, id="99.9 %, three targets"),
        pytest.param(99, TARGETS, {"groupBy": ["model_name"]}, id="per model"),
    ],
)  # fmt: skip
def test_generated_cases_stay_silent_within_target_and_page_on_the_sum(
    tmp_path: Path, objective: float, targets: list[dict[str, Any]], body: dict[str, Any]
) -> None:
    data = goodput_spec(targets)
    data["spec"]["slos"][0]["objective"] = objective
    data["spec"].update(body)
    plan = plan_of(data)
    groups = goodput_groups(plan)
    fired = {
        g["name"]: sorted(
            f"{t['alertname']} {a['exp_labels']['severity']}"
            + (f" {a['exp_labels']['budget_left']}" if "budget_left" in a["exp_labels"] else "")
            for t in g["alert_rule_test"]
            for a in t["exp_alerts"]
        )
        for g in groups
    }
    page, ticket = f"{ALERT} critical", f"{ALERT} warning"
    assert fired == {
        # 80 % of the budget spent: no burn, but the 25 % budget-left ticket.
        f"{ALERT} goodput: within target: no burn": [f"{LOW} warning 25"],
        f"{ALERT} goodput: each target under the page threshold, the sum over it: pages": [
            page,
            page,
            ticket,
            ticket,
            f"{LOW} warning 25",
        ],
        # The healthy control: a quarter of the budget spent, every goodput alert silent.
        f"{ALERT} goodput: budget kept: every goodput alert silent": [],
        f"{ALERT} goodput: the bound leaves 37.5% of the budget: the 50% level tickets": [
            f"{LOW} warning 50"
        ],
    }
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule_file(plan)), encoding="utf-8")
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "tests.yaml").write_text(dump_yaml(tests), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", "tests.yaml", cwd=tmp_path))


def test_native_histogram_targets_run_their_generated_cases(tmp_path: Path) -> None:
    native = {"histogram": "native", "buckets": [0.1, 1, 10]}
    data = spec_data(
        "openai-http",
        metrics={
            "requestDuration": {"name": "http_request_duration_seconds", **native},
            "timeToFirstToken": {"name": "http_time_to_first_token_seconds", **native},
        },
        slos=[
            {
                "name": "goodput",
                "objective": 99,
                "targets": [
                    {"signal": "ttft", "threshold": "1s"},
                    {"signal": "e2e", "threshold": "10s"},
                ],
            }
        ],
    )
    plan = plan_of(data)
    assert all(t.histogram.native for t in plan.goodput[0].targets)
    groups = goodput_groups(plan)
    assert [len(t["exp_alerts"]) for g in groups for t in g["alert_rule_test"]] == [
        *(0, 1),  # within target: no burn, the 25 % ticket
        *(4, 1),  # pages on the sum
        *(0, 0),  # budget kept
        *(0, 1),  # between levels: the 50 % ticket
    ]
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule_file(plan)), encoding="utf-8")
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "tests.yaml").write_text(dump_yaml(tests), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", "tests.yaml", cwd=tmp_path))


def test_the_slo_row_draws_the_bound_and_each_targets_share() -> None:
    plan = plan_of(goodput_spec())
    bound, shares = goodput_panels(plan)
    assert (
        bound.key == "slo/goodput/goodput"
        and "lower bound (union bound)" in bound.description.lower()
    )
    assert "slo_goodput_lower_bound:ratio_rate30d" in bound.queries[0].expr
    assert [q.expr.split("{")[0] for q in shares.queries] == [
        "service:slo_goodput_violations:ratio_rate1h",
        "service:slo_goodput_violation_bound:ratio_rate1h",
    ]


def test_generated_cases_check_from_the_first_tile_with_the_tiles_expectations() -> None:
    """A 30d goodput SLO sums hourly tiles for its 30d, 1d and 3d windows: its cases check at
    the first tile (1h), where every window reads the constant shares. Half an hour in, before
    any tile, the model expects only the exact page tiers and no budget-left ticket."""
    from generator.cases import goodput_cases

    plan = plan_of(goodput_spec())
    assert goodput_cases.check_ms(plan) == 3_600_000
    s = plan.goodput[0]
    over = goodput_cases._classes(s, PER_MIN * 6, Fraction(16, 100))
    early = goodput_cases.expected_burns(plan, over, 1_800_000)
    assert [a["exp_labels"]["long_window"] for a in early] == ["1h", "6h"]
    assert goodput_cases.expected_budget_lows(plan, over, 1_800_000) == []
    late = goodput_cases.expected_burns(plan, over, 3_600_000)
    assert [a["exp_labels"]["long_window"] for a in late] == ["1h", "6h", "1d", "3d"]
    assert len(goodput_cases.expected_budget_lows(plan, over, 3_600_000)) == 1
    # Every window shorter than a day (12h SLO): no tiles, the cases keep checking at 30m.
    short = goodput_spec(
        window="12h",
        alerting={
            "tiers": [
                {"budget": 0.1, "longWindow": "1h", "shortWindow": "5m", "severity": "critical"}
            ]
        },
    )
    assert goodput_cases.check_ms(plan_of(short)) == goodput_cases.CHECK_MS
