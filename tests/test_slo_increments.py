"""The SLO rules' per-evaluation increments, checked by promtool's PromQL engine: window ratios
are exact at every evaluation (no rate ramp), a counter reset loses nothing, and a histogram
known by two names (a preset rename) counts every pod once, whichever name it exposes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import promql_parser as P
import pytest
import yaml

from generator.lint import promql
from tests.helpers_promtool import ROOT, assert_ok, render_to, run_promtool

ITL = "interTokenLatency"
SPEC = (ROOT / "specs" / "llama3-70b-vllm.yaml").read_text()
# An SLO on inter-token latency: vLLM renamed that histogram in 0.11, so the rules read both.
ITL_SLO = "    - {name: itl, indicator: itl, threshold: 200ms, objective: 99, window: 30d}\n"
SELECTOR = 'job="llama3-70b",namespace="llm-serving"'


def _render(tmp_path: Path) -> Path:
    spec = tmp_path / "llama.yaml"
    spec.write_text(SPEC.replace("  alerts:\n", "    " + ITL_SLO.lstrip() + "  alerts:\n", 1))
    return render_to(spec, tmp_path)["rules/llama3-70b.rules.yaml"]


def _ratio(window: str, slo: str) -> str:
    return f'service:slo_sli_error:ratio_rate{window}{{service="llama3-70b",slo="{slo}"}}'


def _expect(at: str, window: str, slo: str, value: float) -> dict[str, Any]:
    return {
        "expr": _ratio(window, slo),
        "eval_time": at,
        "exp_samples": [
            {
                "labels": f"{_ratio(window, slo).split('{')[0]}"
                f'{{namespace="llm-serving",service="llama3-70b",slo="{slo}"}}',
                "value": value,
            }
        ],
    }


def _run(rules: Path, tests: list[dict[str, Any]]) -> None:
    doc = {"rule_files": [rules.name], "evaluation_interval": "1m", "tests": tests}
    path = rules.parent / "increments.test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, width=1_000_000))
    assert_ok(run_promtool("test", "rules", path))


def _itl(name: str, pod: str, le: str, values: str) -> dict[str, str]:
    return {
        "series": f'{name}_bucket{{{SELECTOR},pod="{pod}",le="{le}"}}',
        "values": values,
    }


def test_two_names_of_a_renamed_histogram_count_every_pod_once(tmp_path: Path) -> None:
    """Pod a exposes the 0.11 name, pod b the older one; pod a's 40 slow tokens a minute and
    pod b's 10 make 50 of 200 bad (0.25) — neither pod dropped nor counted twice."""
    rules = _render(tmp_path)
    new, old = "vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"
    series = []
    for name, pod, fast, slow in ((new, "a", 60, 40), (old, "b", 90, 10)):
        series += [
            _itl(name, pod, "0.2", f"0+{fast}x20"),
            _itl(name, pod, "+Inf", f"0+{fast + slow}x20"),
            {
                "series": f'{name}_count{{{SELECTOR},pod="{pod}"}}',
                "values": f"0+{fast + slow}x20",
            },
        ]
    _run(
        rules,
        [
            {
                "interval": "1m",
                "input_series": series,
                "promql_expr_test": [_expect("10m", w, "itl", 0.25) for w in ("5m", "1h")],
            }
        ],
    )


def test_windows_are_exact_at_every_evaluation_and_across_a_restart(tmp_path: Path) -> None:
    """Two pods, 1000 requests a minute each at a 15s scrape, fast for 1h, then all slower than
    the 60s threshold: the 1h ratio is k/60 exactly k minutes in (summed 5m rates showed 0.1,
    0.3, 0.6 … of that), and stays exact though pod b restarts 3 minutes into it."""
    rules = _render(tmp_path)
    # Pod a runs through; pod b restarts. The latency SLO reads the e2e histogram's count and
    # its 60s bucket.
    series = []
    for pod, reset in (("a", False), ("b", True)):
        counts = _outage_counts(reset)
        series += [
            {
                "series": f'vllm:e2e_request_latency_seconds_count{{{SELECTOR},pod="{pod}"}}',
                "values": counts["all"],
            },
            {
                "series": f'vllm:e2e_request_latency_seconds_bucket{{{SELECTOR},pod="{pod}",le="60"}}',
                "values": counts["good"],
            },
            {
                "series": f'vllm:e2e_request_latency_seconds_bucket{{{SELECTOR},pod="{pod}",le="+Inf"}}',
                "values": counts["all"],
            },
        ]
    checks = [_expect(f"{60 + k}m", "1h", "latency-e2e", k / 60) for k in (1, 2, 3, 4, 5, 8)]
    _run(
        rules,
        [
            {
                "interval": "15s",
                "input_series": series,
                "promql_expr_test": checks,
            }
        ],
    )


def _outage_counts(reset: bool) -> dict[str, str]:
    """promtool values, 15s apart: 250 requests a scrape, all fast for 1h, then all slow (over
    the 60s threshold); with ``reset`` the process restarts 3m into the outage, just after a
    scrape, and its counters start again from 0 (the first scrape after it holds 250)."""
    hour = 240
    if not reset:
        return {
            "all": f"0+250x{hour + 40}",
            "good": f"0+250x{hour} {250 * hour}+0x39",
        }
    before = 12  # scrapes of the outage before the restart
    return {
        "all": f"0+250x{hour + before} 250+250x{40 - before - 1}",
        "good": f"0+250x{hour} {250 * hour}+0x{before - 1} 0+0x{40 - before - 1}",
    }


SLO_SPECS = [
    ROOT / "specs" / "o1-preview.yaml",
    ROOT / "specs" / "triton-trtllm.yaml",
    ROOT / "tests" / "fixtures" / "slo-28d.yaml",
    ROOT / "tests" / "fixtures" / "slo-native.yaml",
]


@pytest.mark.parametrize("spec", SLO_SPECS, ids=lambda p: p.stem)
def test_good_and_total_events_are_read_by_one_query(spec: Path, tmp_path: Path) -> None:
    """Each SLO's good and total increments are one rule's two series: one query reads one
    snapshot, so a scrape stored while the group evaluates counts in both or in neither. (Two
    rules counted such a scrape as good only, hiding its errors: the e2e incident's missing
    page on a loaded machine.) Every window ratio and guard reads that one record."""
    (rules,) = [p for r, p in render_to(spec, tmp_path).items() if r.endswith(".rules.yaml")]
    groups = yaml.safe_load(rules.read_text())["groups"]
    slo_groups = [g for g in groups if ".slo." in g["name"]]
    assert slo_groups
    for group in slo_groups:
        records = {r["record"]: r["expr"] for r in group["rules"] if "record" in r}
        events = [name for name in records if ":slo_events:" in name]
        raw_readers = [name for name, expr in records.items() if " offset " in expr]
        assert raw_readers == events, group["name"]  # one rule reads the counters
        (record,) = events
        produced = {
            m.val
            for node, _ in promql.walk(promql.parse(records[record]))
            if isinstance(node, P.Call) and node.func.name == "label_replace"
            for m in [node.args[2]]
            if isinstance(m, P.StringLiteral)
        }
        assert produced == {"good", "total"}
        read = {
            (promql.selector_name(node), m.value)
            for rule in group["rules"]
            for node, _ in promql.walk(promql.parse(rule["expr"]))
            if isinstance(node, P.VectorSelector)
            for m in promql.matchers(node)
            if m.name == "events"
        }
        assert read == {(record, "good"), (record, "total")}, group["name"]
