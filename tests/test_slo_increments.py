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
def test_bad_and_total_events_are_read_by_one_query(spec: Path, tmp_path: Path) -> None:
    """Each SLO's bad and total increments are one rule's two series: one query reads one
    snapshot, so a scrape stored while the group evaluates counts in both or in neither. (Two
    rules counted such a scrape as good only, hiding its errors: the e2e incident's missing
    page on a loaded machine.) Every window ratio and guard reads that one record, or its
    hourly tiles (windows of a day or more), which read that record alone, both series at
    once."""
    (rules,) = [p for r, p in render_to(spec, tmp_path).items() if r.endswith(".rules.yaml")]
    groups = yaml.safe_load(rules.read_text())["groups"]
    slo_groups = [g for g in groups if ".slo." in g["name"]]
    assert slo_groups
    for group in slo_groups:
        records = {r["record"]: r["expr"] for r in group["rules"] if "record" in r}
        tiles = [name for name in records if name.endswith(":increase1h_hourly")]
        events = [name for name in records if ":slo_outcomes:" in name and name not in tiles]
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
        assert produced == {"bad", "total"}
        read = {
            (promql.selector_name(node), m.value)
            for rule in group["rules"]
            for node, _ in promql.walk(promql.parse(rule["expr"]))
            if isinstance(node, P.VectorSelector)
            for m in promql.matchers(node)
            if m.name == "events"
        }
        pairs = {(name, e) for name in (record, *tiles) for e in ("bad", "total")}
        assert {(record, "bad"), (record, "total")} <= read <= pairs, group["name"]
        for name in tiles:
            sources = {
                (promql.selector_name(node), tuple(m.name for m in promql.matchers(node)))
                for node, _ in promql.walk(promql.parse(records[name]))
                if isinstance(node, P.VectorSelector)
            }
            assert {n for n, _ in sources} == {record}, name
            assert all("events" not in names for _, names in sources), name


AVAILABILITY = f'http_requests_total{{handler="/v1/chat/completions",{SELECTOR}'
LATENCY = "vllm:e2e_request_latency_seconds"
SLOS = ("availability", "latency-e2e")


def _events(at: str, slo: str, total: float, bad: float | None) -> dict[str, Any]:
    """The events record of ``slo`` at ``at``: its total series, and its bad one unless None."""
    name = "service:slo_outcomes:increase1m"
    base = f'namespace="llm-serving",service="llama3-70b",slo="{slo}"'
    found = [{"labels": f'{name}{{events="total",{base}}}', "value": total}]
    if bad is not None:
        found.append({"labels": f'{name}{{events="bad",{base}}}', "value": bad})
    return {"expr": f'{name}{{slo="{slo}"}}', "eval_time": at, "exp_samples": found}


def _absent(at: str, window: str, slo: str) -> dict[str, Any]:
    return {"expr": _ratio(window, slo), "eval_time": at, "exp_samples": []}


def test_edge_inputs_give_exact_ratios_or_none(tmp_path: Path) -> None:
    """Edge inputs of the one events record, each checked by promtool (1m evaluation):

    - zero traffic: both series 0 and every ratio 0 (an idle service is healthy, not NaN);
    - the threshold bucket missing while ``_count`` exists: a total but no bad series and no
      latency ratio at all, never a healthy 0;
    - a 5xx series born at 10m holding 5: its first value drops out of total and bad alike, so
      at 20m the 5m ratio is 25 / 525 and the 1h one 50 / 2050, bad / total exactly;
    - the 5xx counter alone resets (45 → 2): that minute counts 2 bad of 102, not −43.
    """
    rules = _render(tmp_path)
    ok, err = f'{AVAILABILITY},status="200"}}', f'{AVAILABILITY},status="500"}}'
    idle = [
        {"series": ok, "values": "100+0x90"},
        {"series": f'{LATENCY}_count{{{SELECTOR},pod="a"}}', "values": "50+0x90"},
        {"series": f'{LATENCY}_bucket{{{SELECTOR},pod="a",le="60"}}', "values": "50+0x90"},
    ]
    no_bucket = [
        {"series": f'{LATENCY}_count{{{SELECTOR},pod="a"}}', "values": "0+100x90"},
        {"series": f'{LATENCY}_bucket{{{SELECTOR},pod="a",le="+Inf"}}', "values": "0+100x90"},
    ]
    late = [{"series": ok, "values": "0+100x40"}, {"series": err, "values": "_x10 5+5x30"}]
    reset = [{"series": ok, "values": "0+100x40"}, {"series": err, "values": "0+5x9 2+5x30"}]
    _run(
        rules,
        [
            {
                "name": "zero traffic",
                "interval": "1m",
                "input_series": idle,
                "promql_expr_test": [
                    _events("30m", "availability", 0, 0),
                    _events("30m", "latency-e2e", 0, 0),
                    *(_expect("30m", w, s, 0) for w in ("5m", "1h") for s in SLOS),
                    # The 30d window sums hourly tiles: the first is written at 60m.
                    *(_expect("60m", "30d", s, 0) for s in SLOS),
                ],
            },
            {
                "name": "threshold bucket missing",
                "interval": "1m",
                "input_series": no_bucket,
                "promql_expr_test": [
                    _events("30m", "latency-e2e", 100, None),
                    *(_absent("30m", w, "latency-e2e") for w in ("5m", "1h")),
                    _absent("60m", "30d", "latency-e2e"),
                ],
            },
            {
                "name": "a 5xx series born late",
                "interval": "1m",
                "input_series": late,
                "promql_expr_test": [
                    _events("10m", "availability", 100, 0),
                    _events("11m", "availability", 105, 5),
                    _expect("20m", "5m", "availability", 25 / 525),
                    _expect("20m", "1h", "availability", 50 / 2050),
                ],
            },
            {
                "name": "a reset of the 5xx counter alone",
                "interval": "1m",
                "input_series": reset,
                "promql_expr_test": [
                    _events("10m", "availability", 102, 2),
                    _expect("12m", "5m", "availability", 22 / 522),
                ],
            },
        ],
    )


def test_events_stay_apart_per_model_and_cluster(tmp_path: Path) -> None:
    """Triton per model (groupBy) with ``clusterLabel``: the events record's ``or`` keeps one
    total and one bad series per cluster and model, and each window's ``sum without (events)``
    merges nothing else — model m healthy in cluster x and 10 % failing in y, an idle model at
    0, and a model whose requests all fail (no success series at all) at 1."""
    text = (ROOT / "specs" / "triton-trtllm.yaml").read_text()
    # The example's prometheus block goes on after scrapeInterval (its retention): insert the
    # cluster label right after it, and fail loudly rather than render without it.
    anchor = "scrapeInterval: 15s"
    assert text.count(anchor) == 1, anchor
    spec = tmp_path / "triton.yaml"
    spec.write_text(text.replace(anchor, f"{anchor}, clusterLabel: c"))
    rules = render_to(spec, tmp_path)["rules/triton-trtllm.rules.yaml"]
    sel = 'job="triton-trtllm",namespace="llm-serving",version="1"'
    counts = {  # (cluster, model): (successes, failures) a minute, None: no such series
        ("x", "m"): (100, 0),
        ("y", "m"): (90, 10),
        ("x", "idle"): (0, 0),
        ("x", "broken"): (None, 4),
    }
    series = [
        {
            "series": f'nv_inference_request_{kind}{{{sel},c="{c}",model="{m}"}}',
            "values": f"7+{n}x90",
        }
        for (c, m), pair in counts.items()
        for kind, n in zip(("success", "failure"), pair, strict=True)
        if n is not None
    ]
    record = "service_model:slo_sli_error:ratio_rate1h"
    ratios = {("x", "m"): 0, ("y", "m"): 0.1, ("x", "idle"): 0, ("x", "broken"): 1}
    expected = [
        {
            "labels": f'{record}{{c="{c}",model="{m}",namespace="llm-serving",'
            f'service="triton-trtllm",slo="availability"}}',
            "value": value,
        }
        for (c, m), value in ratios.items()
    ]
    events = "service_model:slo_outcomes:increase1m"
    _run(
        rules,
        [
            {
                "interval": "1m",
                "input_series": series,
                "promql_expr_test": [
                    {
                        "expr": f'{record}{{slo="availability"}}',
                        "eval_time": "80m",
                        "exp_samples": expected,
                    },
                    {
                        "expr": f'count({events}{{slo="availability"}})',
                        "eval_time": "80m",
                        "exp_samples": [{"labels": "{}", "value": 2 * len(counts)}],
                    },
                ],
            }
        ],
    )
