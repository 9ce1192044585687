"""Goodput SLOs beside the other SLOs (issue 45): the budget-left tickets (``GoodputBudgetLow``,
read from the union bound and saying so), the fleet records, ``obsgen verify`` and
``obsgen explain``. Rules proved by the real promtool, with a healthy control that stays silent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator import verify
from generator.builders import fleet_rules, goodput_rules
from generator.builders.alertmanager import config
from generator.builders.alertmanager_routing import inhibit_rules, inhibition_note
from generator.builders.rulefile import rule_file
from generator.builders.runbooks import service_runbook
from generator.commands.explain import format_plan
from generator.receivers import EMPTY
from tests.test_goodput import ALERT, E2E, TTFT, goodput_spec, traffic
from tests.test_server_reality import firing, plan_of, promtool_passes, series, spec_data

LOW = "GoodputBudgetLow"
BOUND = "lower bound (union bound)"


def _lows(data: dict[str, Any]) -> list[dict[str, Any]]:
    plan = plan_of(data)
    return [r for g in rule_file(plan)["groups"] for r in g["rules"] if r.get("alert") == LOW]


def approx(record: str, eval_time: str, expected: float) -> dict[str, Any]:
    """An expression test: ``record`` of the service is ``expected`` to 6 decimals (the ratios
    of k / 1000 shares are not exact in float64)."""
    return {
        "expr": f'round(sum({record}{{service="svc"}}) * 1e6)',
        "eval_time": eval_time,
        "exp_samples": [{"labels": "{}", "value": round(expected * 1e6)}],
    }


def _left(level: str, eval_time: str, count: int) -> dict[str, Any]:
    """An expression test: ``count`` firing ``GoodputBudgetLow`` tickets at ``level`` % left."""
    alerts = f'ALERTS{{alertname="{LOW}",alertstate="firing",service="svc",budget_left="{level}"}}'
    return {
        "expr": f"count({alerts}) or vector(0)",
        "eval_time": eval_time,
        "exp_samples": [{"labels": "{}", "value": count}],
    }


# --- budget left -----------------------------------------------------------------------------


def test_one_ticket_per_budget_level_naming_the_bound() -> None:
    rules = _lows(goodput_spec())
    assert [(r["labels"]["severity"], r["labels"]["budget_left"]) for r in rules] == [
        ("warning", "50"),
        ("warning", "25"),
    ]
    for rule in rules:
        assert BOUND in rule["annotations"]["summary"]
        assert BOUND in rule["annotations"]["description"]
        assert "ttft ≤ 2.5s, e2e ≤ 30s" in rule["annotations"]["description"]
        assert "never reads more left than the truth" in rule["annotations"]["description"]
    assert rules[0]["expr"].startswith(
        '(service:slo_goodput_budget_remaining:ratio{namespace="ns",service="svc",'
        'slo="goodput"} < 0.5) >= 0.25'
    )


def test_budget_levels_are_the_specs_and_none_without_alerting() -> None:
    custom = goodput_spec(alerting={"budgetLeft": [0.75]})
    assert [r["labels"]["budget_left"] for r in _lows(custom)] == ["75"]
    assert _lows(goodput_spec(alerting={"budgetLeft": []})) == []
    assert _lows(goodput_spec(alerting={"enabled": False})) == []


def test_a_kept_budget_stays_silent(tmp_path: Path) -> None:
    # 0.1 % + 0.1 % of requests slow: the bound spends 20 % of the 1 % budget, 80 % left.
    plan = plan_of(goodput_spec())
    tests = [
        approx("service:slo_goodput_budget_remaining:ratio", "230m", 0.8),
        _left("50", "230m", 0),
        _left("25", "230m", 0),
        firing(LOW, "60m", 0),
    ]
    promtool_passes(tmp_path, plan, traffic(1, 1), tests)


def test_the_bound_leaving_30_percent_tickets_the_50_percent_level(tmp_path: Path) -> None:
    # 0.4 % + 0.3 %: the bound spends 70 % of the budget (the truth may spend less), 30 % left.
    plan = plan_of(goodput_spec())
    tests = [
        approx("service:slo_goodput_budget_remaining:ratio", "230m", 0.3),
        _left("50", "230m", 1),
        _left("25", "230m", 0),
        firing("GoodputBudgetBurn", "230m", 0),
    ]
    promtool_passes(tmp_path, plan, traffic(4, 3), tests)


def test_a_spent_budget_tickets_the_lowest_level_only(tmp_path: Path) -> None:
    plan = plan_of(goodput_spec())
    tests = [_left("50", "230m", 0), _left("25", "230m", 1)]
    promtool_passes(tmp_path, plan, traffic(6, 6), tests)


def test_a_new_service_below_min_events_gets_no_ticket(tmp_path: Path) -> None:
    plan = plan_of(goodput_spec(alerting={"minEvents": 10_000_000}))
    promtool_passes(tmp_path, plan, traffic(6, 6), [firing(LOW, "230m", 0)])


# --- hourly tiles ------------------------------------------------------------------------------

TILES = "service:slo_goodput_outcomes:increase1h_hourly"
EVERY = "service:slo_goodput_outcomes:increase1m"


def test_windows_of_a_day_or_more_read_the_tiles_and_page_tiers_the_increments() -> None:
    """The 30d bound (so budget left and the lower bound), the tickets' 1d and 3d long windows
    and every ``minEvents`` count of those windows sum the hourly tiles; the page tiers' 1h/5m
    and 6h/30m and the tickets' short windows sum the per-evaluation increments (exact)."""
    rules = [r for g in rule_file(plan_of(goodput_spec()))["groups"] for r in g["rules"]]
    records = {
        r["record"]: r["expr"] for r in rules if "record" in r and "violations" in r["record"]
    }
    for window in ("1d", "3d", "30d"):
        expr = records[f"service:slo_goodput_violations:ratio_rate{window}"]
        assert TILES in expr and EVERY not in expr, window
    for window in ("5m", "30m", "1h", "2h", "6h"):
        expr = records[f"service:slo_goodput_violations:ratio_rate{window}"]
        assert EVERY in expr and TILES not in expr, window
    (tiles,) = [r for r in rules if r.get("record") == TILES]
    assert tiles["expr"].startswith(f"sum_over_time({EVERY}{{")
    assert "[59m30s])\nand on () (vector(time() % 3600) < 60)" in tiles["expr"]
    burns = {r["labels"]["long_window"]: r["expr"] for r in rules if r.get("alert") == ALERT}
    assert all(TILES not in burns[w] for w in ("1h", "6h"))
    assert all(TILES in burns[w] for w in ("1d", "3d"))
    assert "[2d23h59m30s])) >= 10" in burns["3d"]
    for low in _lows(goodput_spec()):
        assert f"sum_over_time({TILES}{{" in low["expr"] and "[29d23h59m30s])) >= 10" in low["expr"]
        assert EVERY not in low["expr"]


def test_a_goodput_slo_of_a_few_hours_keeps_every_window_exact() -> None:
    """A 12h window has no window of a day or more: no tiles record, nothing reads one."""
    data = goodput_spec(
        window="12h",
        alerting={
            "tiers": [
                {"budget": 0.1, "longWindow": "1h", "shortWindow": "5m", "severity": "critical"}
            ]
        },
    )
    rules = [r for g in rule_file(plan_of(data))["groups"] for r in g["rules"]]
    assert not any(TILES in r.get("record", "") + r["expr"] for r in rules)


def test_budget_left_is_the_exact_bound_at_each_tile_and_holds_until_the_next(
    tmp_path: Path,
) -> None:
    """1 % of requests slow to the first token for the first hour, none after; 1000 requests
    a minute. At a tile boundary (120m, 180m) the budget left equals the one the raw counters
    give (the bound over everything since 0); between tiles it holds the newest tile's value
    (150m: 0.5, where per-evaluation increments would read 0.6); the 1h window, a page tier's,
    stays exact to the evaluation (90m: half the hour slow)."""
    plan = plan_of(goodput_spec())
    minutes = 240
    inputs = [
        series("up", f"1x{minutes}"),
        series(TTFT + "_count", f"0+1000x{minutes}"),
        series(TTFT + "_bucket", f"0+990x60 60400+1000x{minutes - 61}", le="2.5"),
        series(E2E + "_count", f"0+1000x{minutes}"),
        series(E2E + "_bucket", f"0+1000x{minutes}", le="30.0"),
    ]
    share = " + ".join(
        f'(sum({h}_count) - sum({h}_bucket{{le="{le}"}})) / sum({h}_count)'
        for h, le in ((TTFT, "2.5"), (E2E, "30.0"))
    )
    budget = "service:slo_goodput_budget_remaining:ratio"
    exact = {
        # The budget left the rules record minus the exact one, in parts per billion.
        "expr": f'round((sum({budget}{{service="svc"}}) - (1 - ({share}) / 0.01)) * 1e9)',
        "exp_samples": [{"labels": "{}", "value": 0}],
    }
    tests = [
        {**exact, "eval_time": "120m"},
        {**exact, "eval_time": "180m"},
        approx(budget, "120m", 0.5),  # 600 slow of 120,000: 0.5 % of a 1 % budget
        approx(budget, "150m", 0.5),  # the newest tile is 120m's
        approx(budget, "180m", 1 - 600 / 180_000 / 0.01),
        approx("service:slo_goodput_violations:ratio_rate1h", "90m", 0.005),
        approx("service:slo_goodput_violations:ratio_rate1h", "120m", 0),
        {"expr": f'{budget}{{service="svc"}}', "eval_time": "30m", "exp_samples": []},
    ]
    promtool_passes(tmp_path, plan, inputs, tests)


def test_the_goodput_page_holds_back_its_ticket_only_where_goodput_exists() -> None:
    plain = inhibit_rules(())
    with_goodput = inhibit_rules((), goodput=True)
    assert len(with_goodput) == len(plain) + 1
    (added,) = [r for r in with_goodput if "GoodputBudgetBurn" in r.source[0].value]
    assert [m.render() for m in added.source] == [
        'alertname="GoodputBudgetBurn"',
        'severity="critical"',
    ]
    assert [m.render() for m in added.target] == [f'alertname="{LOW}"']
    assert "slo" in added.equal
    assert "GoodputBudgetBurn" in inhibition_note(LOW)
    # ModelTargetDown holds the ticket back too, named only where goodput exists.
    (down, *_) = with_goodput
    assert LOW in down.target[-1].value and LOW not in plain[0].target[-1].value
    assert LOW in inhibition_note("ModelTargetDown", goodput=True)
    assert LOW not in inhibition_note("ModelTargetDown")
    # A configuration without goodput is the same as before.
    other = plan_of(spec_data("vllm", serverVersion="0.11"))
    assert len(config([other], EMPTY)["inhibit_rules"]) == len(plain)
    assert len(config([plan_of(goodput_spec())], EMPTY)["inhibit_rules"]) == len(plain) + 1


# --- fleet -----------------------------------------------------------------------------------


def test_fleet_records_read_the_bound(tmp_path: Path) -> None:
    plan = plan_of(goodput_spec())
    records = {r["record"]: r["expr"] for r in fleet_rules.fleet_records(plan)}
    assert "slo_goodput_lower_bound:ratio_rate30d" in records["service:fleet_slo_sli:min"]
    assert (
        "slo_goodput_budget_remaining:ratio"
        in records["service:fleet_slo_error_budget_remaining:min"]
    )
    tests = [
        approx("service:fleet_slo_sli:min", "230m", 0.993),
        approx("service:fleet_slo_error_budget_remaining:min", "230m", 0.3),
    ]
    promtool_passes(tmp_path, plan, traffic(4, 3), tests)


def test_the_fleet_row_shows_the_worse_of_goodput_and_latency(tmp_path: Path) -> None:
    data = goodput_spec()
    data["spec"]["slos"].append(
        {"name": "ttft", "objective": 99, "indicator": "ttft", "threshold": "2500ms"}
    )
    plan = plan_of(data)
    assert [s.name for s in plan.slos] == ["ttft"] and plan.goodput
    # TTFT alone: 0.4 % slow, SLI 99.6 %, 60 % of its budget left; the bound is worse.
    tests = [
        approx("service:fleet_slo_sli:min", "230m", 0.993),
        approx("service:fleet_slo_error_budget_remaining:min", "230m", 0.3),
    ]
    promtool_passes(tmp_path, plan, traffic(4, 3), tests)


def test_fleet_records_without_goodput_are_unchanged() -> None:
    plan = plan_of(spec_data("vllm", serverVersion="0.11", slos=[{"name": "a", "objective": 99}]))
    records = {r["record"]: r["expr"] for r in fleet_rules.fleet_records(plan)}
    assert "goodput" not in "".join(records.values())


# --- verify ----------------------------------------------------------------------------------


class _Has:
    """A Prometheus API holding series of the metric names in ``names`` only."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def query(self, expr: str) -> list[dict[str, Any]]:
        if any(expr.startswith(f"count({n}{{") for n in self.names):
            return [{"metric": {}, "value": [0, "3"]}]
        return []


def _goodput_rows(api: _Has) -> list[verify.Row]:
    report = verify._Report(plan_of(goodput_spec()), api)  # type: ignore[arg-type]
    verify._goodput(report)
    return report.rows


def test_verify_says_every_target_histogram_is_there() -> None:
    (row,) = _goodput_rows(_Has(TTFT + "_count", E2E + "_count"))
    assert (row.check, row.subject, row.status) == ("goodput", "slo goodput", verify.Status.OK)
    assert f"ttft ≤ 2.5s ({TTFT}_count: 3 series)" in row.detail
    assert f"e2e ≤ 30s ({E2E}_count: 3 series)" in row.detail


def test_verify_fails_on_a_missing_target_histogram_and_says_what_stays_silent() -> None:
    (row,) = _goodput_rows(_Has(TTFT + "_count"))
    assert row.status is verify.Status.MISSING
    assert f"e2e ≤ 30s ({E2E}_count)" in row.detail
    assert "ttft" not in row.detail.split(":")[0]
    assert "GoodputBudgetBurn and GoodputBudgetLow stay silent" in row.detail


def test_verify_checks_goodput_thresholds_and_tier_windows() -> None:
    plan = plan_of(goodput_spec())
    ttft = plan.goodput[0].targets[0].histogram
    assert ("slo goodput targets[0].threshold", 2.5) in verify._thresholds(plan, ttft)
    assert ("slo goodput shortWindow", 300_000) in verify._windows(plan)
    assert verify._goodput in verify.CHECKS


# --- explain ---------------------------------------------------------------------------------


def test_explain_prints_the_goodput_tiers_and_the_bound() -> None:
    text = format_plan(plan_of(goodput_spec()))
    assert f"SLO goodput (goodput: ttft ≤ 2.5s, e2e ≤ 30s, read from the {BOUND})" in text
    assert "  1h/5m   critical  14.4×" in text
    assert goodput_rules.BOUND_NAME == BOUND


def test_the_ticket_has_a_runbook_page_with_the_bound_and_its_query() -> None:
    plan = plan_of(goodput_spec())
    page = service_runbook(LOW, plan, [])
    assert "lower bound (union bound)" in page
    assert 'service:slo_goodput_budget_remaining:ratio{namespace="ns",service="svc"}' in page
    assert "service:slo_goodput_violations:ratio_rate1h{" in page
