"""Counters born at their first event: a series created while its target is up counts its
first value; one that comes with its target (a new pod, a scrape gap) does not.

prometheus-fastapi-instrumentator, TGI and most client libraries create a labelled series
(``status="5xx"``) at its first event, already at its value. A pod at 2 req/s that fails 300
requests inside one scrape must page the 1h/5m tier of a 99.9 % availability SLO; the same
300 on a pod that has just appeared must not be counted (they may be from before it was
scraped). Each case runs the real promtool on the o1-preview rules, with healthy controls.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers_promtool import assert_ok, render_to, run_promtool

REPO = Path(__file__).resolve().parent.parent
TARGET = 'job="o1-preview",namespace="ai-inference"'
COUNT = "http_requests_total"


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("birth")
    return render_to(REPO / "specs" / "o1-preview.yaml", out)["rules/o1-preview.rules.yaml"]


def _series(instance: str, up: str, ok: str, failed: str | None) -> list[dict[str, str]]:
    """One target's ``up``, its 2xx count and (when given) its 5xx count, one value a minute."""
    labels = f'{TARGET},instance="{instance}"'
    out = [
        {"series": f"up{{{labels}}}", "values": up},
        {"series": f'{COUNT}{{{labels},handler="/v1/chat",status="2xx"}}', "values": ok},
    ]
    if failed is not None:
        out.append(
            {"series": f'{COUNT}{{{labels},handler="/v1/chat",status="5xx"}}', "values": failed}
        )
    return out


def _run(tmp_path: Path, rules: Path, series: list[dict[str, str]], checks: list[Any]) -> None:
    test = {
        "rule_files": [str(rules)],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": checks}],
    }
    path = tmp_path / "birth.test.yaml"
    path.write_text(yaml.safe_dump(test, sort_keys=False), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", path), [path.name])


BAD_1H = 'sum_over_time(service:slo_outcomes:increase1m{events="bad",slo="availability"}[59m30s])'
TOTAL_1H = (
    'sum_over_time(service:slo_outcomes:increase1m{events="total",slo="availability"}[59m30s])'
)
PAGE = 'ALERTS{alertname="ErrorBudgetBurn",alertstate="firing",long_window="1h",slo="availability"}'
IDENTITY = 'namespace="ai-inference",service="o1-preview",slo="availability"'
BAD = f'{{events="bad",{IDENTITY}}}'
TOTAL = f'{{events="total",{IDENTITY}}}'


def _bad(at: str, value: float) -> dict[str, Any]:
    return {"expr": BAD_1H, "eval_time": at, "exp_samples": [{"labels": BAD, "value": value}]}


def _pages(at: str, fires: bool) -> dict[str, Any]:
    samples = [{"labels": "{}", "value": 1}] if fires else []
    return {"expr": f"count({PAGE})", "eval_time": at, "exp_samples": samples}


# Two hours at 2 req/s (120 a minute); "_" is no sample, "stale" a staleness marker.
UP = "1x120"
OK = "0+120x120"


def test_a_burst_on_a_series_born_while_its_target_is_up_pages(tmp_path: Path, rules: Path) -> None:
    # The 5xx series appears at 60m at 300 (one scrape's burst) and stays there.
    failed = "_x59 300x60"
    checks = [
        _bad("62m", 300),
        {
            "expr": TOTAL_1H,
            "eval_time": "62m",
            "exp_samples": [{"labels": TOTAL, "value": 120 * 60 + 300}],
        },
        _pages("62m", True),
        # The error-ratio record saw the burst too (300 over 5m on 120 a minute).
        {
            "expr": "service:model_request_errors:ratio_rate5m",
            "eval_time": "62m",
            "exp_samples": [
                {
                    "labels": 'service:model_request_errors:ratio_rate5m{namespace="ai-inference",'
                    'service="o1-preview"}',
                    "value": 1 / 3,
                }
            ],
        },
    ]
    _run(tmp_path, rules, _series("10.0.0.1:8000", UP, OK, failed), checks)


def test_a_series_that_existed_at_zero_counts_the_same(tmp_path: Path, rules: Path) -> None:
    failed = "0x59 300x60"
    _run(
        tmp_path,
        rules,
        _series("10.0.0.1:8000", UP, OK, failed),
        [_bad("62m", 300), _pages("62m", True)],
    )


def test_a_series_that_comes_with_its_pod_is_not_counted(tmp_path: Path, rules: Path) -> None:
    # A steady pod, and a new pod from 60m whose 5xx series is at 300 on its first scrape.
    new_up, new_ok = "_x59 1x60", "_x59 0+120x60"
    series = [
        *_series("10.0.0.1:8000", UP, OK, None),
        *_series("10.0.0.2:8000", new_up, new_ok, "_x59 300x60"),
    ]
    _run(tmp_path, rules, series, [_bad("62m", 0), _pages("62m", False)])


def test_a_series_that_reappears_after_a_scrape_gap_is_not_counted(
    tmp_path: Path, rules: Path
) -> None:
    # The target is down 60m–62m (its series go stale); after it, the 5xx series is at 300.
    up = "1x59 0 0 0 1x57"
    ok = "0+120x59 stale stale stale 7560+120x57"
    failed = "_x59 stale stale stale 300x57"
    _run(
        tmp_path,
        rules,
        _series("10.0.0.1:8000", up, ok, failed),
        [_bad("65m", 0), _pages("65m", False)],
    )


def test_a_healthy_pod_stays_silent(tmp_path: Path, rules: Path) -> None:
    _run(
        tmp_path,
        rules,
        _series("10.0.0.1:8000", UP, OK, "0x120"),
        [_bad("90m", 0), _pages("90m", False)],
    )


GPU = 'container="nvml-exporter",job="obsgen-o1-preview-gpu",namespace="ai-inference",pod="p-0"'
XID = 'ALERTS{alertname="GPUXidErrors",alertstate="firing"}'


@pytest.mark.parametrize(
    ("up", "xid", "fires"),
    [
        pytest.param("1x60", "_x29 2x30", True, id="born while the sidecar is up: fires"),
        pytest.param("_x29 1x30", "_x29 2x30", False, id="born with the sidecar (restart): silent"),
        pytest.param("1x60", "0x60", False, id="healthy: silent"),
    ],
)
def test_xid_counts_a_series_born_during_the_sidecars_life(
    tmp_path: Path, rules: Path, up: str, xid: str, fires: bool
) -> None:
    series = [
        {"series": f'up{{{GPU},instance="10.0.0.1:9445"}}', "values": up},
        {
            "series": f'gpu_xid_errors_total{{{GPU},instance="10.0.0.1:9445",uuid="GPU-1",xid="79"}}',
            "values": xid,
        },
    ]
    samples = [{"labels": "{}", "value": 1}] if fires else []
    _run(
        tmp_path,
        rules,
        series,
        [{"expr": f"count({XID})", "eval_time": "32m", "exp_samples": samples}],
    )


def test_the_linter_reads_a_born_term_as_part_of_an_exact_increase() -> None:
    from generator.lint import promql as q

    x, then = 'c{job="a"}', 'c{job="a"} offset 1m'
    plain = f"({x} - {then}) >= 0 or ({x} and {then})"
    assert q.exact_increase(q.parse(plain))
    born = f'{plain} or ({x} and on (instance, job) (up{{job="a"}} offset 1m == 1))'
    assert q.exact_increase(q.parse(born))
    # Anything but the target's up is the raw counter added in: not an increase.
    assert not q.exact_increase(q.parse(f'{plain} or ({x} and on (job) other{{job="a"}})'))
