"""Copies scraped at different phases (issue 43, "Tolerate duplicates"): the two Prometheus of
an HA pair scrape a target at their own times, and one of them may lose a sample on its way to
the ruler. In ``ruler.deduplication: rules`` mode

- every generated case of every family is fed such a pair: replica-1 one step of a grid six
  times finer than the scrape interval *early* (10 s at 1 m), its middle scrape lost
  (generator/cases/duplicate_cases.py), and the suites still pass the real promtool;
- a replica scraping *late* (the ruler evaluates between the two replicas' scrapes, so that
  copy reads one scrape older) neither doubles nor errors the SLO increments, the error ratio
  or a summed gauge: their window sums are the single copy's, and a failure still pages while
  a healthy control stays silent (promtool 3.16 and 2.53). The rules as written (``querier``)
  fail on the same data.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from generator import core
from generator.cases.duplicate_cases import PHASES, copies, phased, steps
from generator.render import load_plans
from tests import toolchain
from tests.factories import good_spec, write_spec
from tests.helpers_promtool import render_to

SPEC = Path(__file__).parent / "fixtures" / "slo-duplicates.yaml"
REPLICA = "prometheus_replica"
PROMTOOLS = ("prometheus3", "prometheus2")


def _promtool(tool: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [toolchain.binary(tool, "promtool"), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        timeout=600,
    )


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Path]]:
    out = {}
    for mode in ("querier", "rules"):
        root = tmp_path_factory.mktemp(mode)
        (root / "obsgen.yaml").write_text(f"ruler:\n  deduplication: {mode}\n")
        out[mode] = render_to(SPEC, root, root)
    return out


# --- the shape -----------------------------------------------------------------------------------


def test_steps_expand_promtool_notation() -> None:
    assert steps("0+6000x2 _x2 stale 1.8e+06-1x1 5") == [
        "0",
        "6000",
        "12000",
        "_",
        "_",
        "stale",
        "1.8e+06",
        "1.799999e+06",
        "5",
    ]
    with pytest.raises(ValueError, match="histogram"):
        steps("{{schema:0 sum:1 count:1}}x3")


def test_phased_values_sit_off_the_scrape_grid_with_a_sample_lost() -> None:
    assert PHASES == 6
    # in phase: each sample at 6k; early: at 6k - 1 (the first at 0); late: at 6k + 1
    assert phased("0+1x2") == "0 _x5 1 _x5 2"
    assert phased("0+1x3", -1, lose=2) == "0 _x4 1 _x11 3"
    assert phased("0+1x2 stale", 1) == "_ 0 _x5 1 _x5 2 _x5 stale"
    assert phased("_x2 7", -1) == "_x11 7"


def test_generated_cases_feed_every_family_a_phased_pair(tmp_path: Path) -> None:
    """The o1-preview spec (GPU, memory, target, SLO, latency, queue families): every group of
    its generated suites in ``rules`` mode steps at a sixth of its querier-mode interval, and
    every scraped series' replica-1 copy sits one step before replica-0's, one sample lost.
    (test_duplicate_series runs the whole suite through promtool.)"""
    (tmp_path / "obsgen.yaml").write_text("ruler:\n  deduplication: rules\n")
    spec = write_spec(tmp_path / "specs", good_spec(), "o1.yaml")
    outputs = core.build(load_plans([spec], tmp_path))
    checked = 0
    for rel, text in outputs.items():
        if not (rel.startswith("rules/") and rel.endswith(".test.yaml")):
            continue
        for group in yaml.safe_load(text)["tests"]:
            if any("{" in e["values"] for e in group["input_series"]):
                continue  # native histograms stay in phase
            pairs: dict[str, dict[str, str]] = {}
            for entry in group["input_series"]:
                series = entry["series"]
                for r in ("replica-0", "replica-1"):
                    if f'{REPLICA}="{r}"' in series and "-copy" not in series:
                        key = series.replace(f'{REPLICA}="{r}"', "")
                        pairs.setdefault(key, {})[r] = entry["values"]
            assert pairs, group["name"]
            for key, pair in pairs.items():
                zero, one = steps(pair["replica-0"]), steps(pair["replica-1"])
                samples = [i for i, v in enumerate(zero) if v != "_"]
                late = [i for i, v in enumerate(one) if v != "_"]
                assert all(i % PHASES == 0 for i in samples), (group["name"], key)
                assert all(i % PHASES == PHASES - 1 for i in late if i), (group["name"], key)
                if len(samples) >= 3:
                    assert len(late) == len(samples) - 1, (group["name"], key)
                checked += 1
    assert checked > 100


# --- a replica scraping late ---------------------------------------------------------------------


def _series(name: str, labels: str, values: str) -> list[dict[str, str]]:
    """The HA pair and second target of one series: replica-1 one step late, its scrape at
    minute 20 lost; the others in phase."""
    out = []
    for text in copies(f"{name}{{{labels}}}", REPLICA):
        late = f'{REPLICA}="replica-1"' in text
        out.append(
            {"series": text, "values": phased(values, 1 if late else 0, 20 if late else None)}
        )
    return out


_TARGET = 'instance="10.0.0.1:8000",job="chat",namespace="chat",pod="chat-0"'


def _case(ok: str, bad: str) -> dict[str, object]:
    inputs = [
        *_series("http_requests_total", _TARGET + ',status="200"', ok),
        *_series("http_requests_total", _TARGET + ',status="500"', bad),
        *_series("up", _TARGET, "1x60"),
        *_series("inference_queue_depth", _TARGET, "30x60"),
    ]
    return {"interval": f"{60 // PHASES}s", "input_series": inputs}


def _expr(expr: str, at: str, value: float, labels: str) -> dict[str, object]:
    return {"expr": expr, "eval_time": at, "exp_samples": [{"labels": labels, "value": value}]}


_S = 'namespace="chat",service="chat-dup"'


def _test_file() -> dict[str, object]:
    steady = _case("0+5940x60", "0+60x60")  # 6000 requests a minute, 1 % failing
    steady["promql_expr_test"] = [
        # minutes 21..30 hold the lost sample and the late copy: their sum is still exact
        # (9m30s: Prometheus 2 ranges include their left end, 3's do not; the records of 21..30)
        _expr(
            'sum_over_time(service:slo_outcomes:increase1m{events="total"}[9m30s])',
            "30m",
            60000,
            f'{{events="total",{_S},slo="availability"}}',
        ),
        _expr(
            'sum_over_time(service:slo_outcomes:increase1m{events="bad"}[9m30s])',
            "30m",
            600,
            f'{{events="bad",{_S},slo="availability"}}',
        ),
        _expr(
            "service:model_request_errors:ratio_rate5m",
            "30m",
            0.01,
            f"service:model_request_errors:ratio_rate5m{{{_S}}}",
        ),
        _expr(
            "service:slo_sli_error:ratio_rate30m",
            "55m",
            0.01,
            f'service:slo_sli_error:ratio_rate30m{{{_S},slo="availability"}}',
        ),
        _expr(
            "service:model_queue_depth:sum",
            "30m",
            30,
            f"service:model_queue_depth:sum{{{_S}}}",
        ),
    ]
    healthy = _case("0+6000x60", "0x60")
    healthy["alert_rule_test"] = [
        {"eval_time": t, "alertname": name, "exp_alerts": []}
        for t in ("21m", "22m", "40m", "59m")
        for name in (
            "ErrorBudgetBurn",
            "ModelErrorRatioHigh",
            "ModelQueueDepthHigh",
            "ModelTargetDown",
        )
    ]
    failing = _case("0+5940x30 178200+3000x30", "0+60x30 1800+3000x30")  # half failing from 30m
    failing["promql_expr_test"] = [
        _expr(
            'max by (alertname) (ALERTS{alertname="ErrorBudgetBurn",alertstate="firing",'
            'severity="critical"})',
            "45m",
            1,
            '{alertname="ErrorBudgetBurn"}',
        ),
        _expr(
            'max by (alertname) (ALERTS{alertname="ModelErrorRatioHigh",alertstate="firing"})',
            "45m",
            1,
            '{alertname="ModelErrorRatioHigh"}',
        ),
    ]
    return {
        "rule_files": ["chat-dup.rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [steady, healthy, failing],
    }


@pytest.mark.parametrize("tool", PROMTOOLS)
def test_a_late_replica_neither_doubles_nor_errors(
    tool: str, rules: dict[str, dict[str, Path]], tmp_path: Path
) -> None:
    (tmp_path / "chat-dup.rules.yaml").write_text(
        rules["rules"]["rules/chat-dup.rules.yaml"].read_text()
    )
    (tmp_path / "late.test.yaml").write_text(yaml.safe_dump(_test_file(), sort_keys=False))
    result = _promtool(tool, "test", "rules", "late.test.yaml", cwd=tmp_path)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]


def test_the_rules_as_written_fail_on_the_late_pair(
    rules: dict[str, dict[str, Path]], tmp_path: Path
) -> None:
    (tmp_path / "chat-dup.rules.yaml").write_text(
        rules["querier"]["rules/chat-dup.rules.yaml"].read_text()
    )
    (tmp_path / "late.test.yaml").write_text(yaml.safe_dump(_test_file(), sort_keys=False))
    result = _promtool("prometheus3", "test", "rules", "late.test.yaml", cwd=tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "found duplicate series for the match group" in out, out[-3000:]
