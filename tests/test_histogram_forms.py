"""The forms of a latency histogram (``spec.metrics.<key>.histogram``: classic, native, nhcb,
both; docs/spec.md, "Histogram forms"), each proved on promtool 3.16 with its own series:

- native proper: promtool 3's native-histogram notation at schema 0 (exponential buckets,
  ``{{schema:0 sum:… count:… offset:… buckets:[…]}}``); a threshold needs no bucket bound, and
  one between bounds is off by at most the bucket holding it (``histogram_fraction``
  interpolates);
- both (a migration): classic and native series of the same target at once, native switched
  on while the target runs, classic switched off later, pods of either form side by side —
  every request counted once;
- guards: the form that is missing is named; one form present is enough for ``both``;
- spec: nhcb and both keep the boundary rule, native does not, an unknown form is refused with
  its field path; ``classic`` renders exactly what no field renders.

The NHCB form read off a real Prometheus 3 scrape: tests/test_histogram_forms_nhcb.py.
"""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import toolchain
from tests.factories import write_spec
from tests.helpers_promtool import render_to

SPEC: dict[str, Any] = {
    "apiVersion": "obsgen/v1alpha1",
    "kind": "ModelService",
    "metadata": {"name": "lat", "team": "ml-platform"},
    "spec": {
        "server": "openai-http",
        "selector": {"namespace": "llm", "job": "lat"},
        "prometheus": {"version": "3", "scrapeInterval": "15s"},
        "metrics": {
            "requests": {"name": "http_requests_total", "errorMatchers": {"status": "5.."}},
            # Schema 0's bounds (powers of 2), so classic, NHCB and exponential agree exactly.
            "requestDuration": {
                "name": "http_request_duration_seconds",
                "buckets": [0.25, 0.5, 1, 2, 4],
            },
        },
        "slos": [
            {
                "name": "latency",
                "indicator": "requestDuration",
                "threshold": "1s",
                "objective": 99,
                "window": "30d",
            }
        ],
        "alerts": {"slowRequests": {"maxRatio": 0.1}},
        "gpu": {"exporter": "none"},
        "deployment": {"name": "lat", "container": "lat", "replicas": 1, "memoryLimit": "8Gi"},
    },
}
HIST = "http_request_duration_seconds"
POD_A = 'job="lat",namespace="llm",instance="10.0.0.1:8000"'
POD_B = 'job="lat",namespace="llm",instance="10.0.0.2:8000"'
FAST_S, SLOW_S = 0.3, 3.0  # in (0.25, 0.5] and (2, 4]: schema 0 bucket indexes -1 and 2
MINUTES = 90


def _spec(form: str | None, threshold: str = "1s") -> dict[str, Any]:
    data = copy.deepcopy(SPEC)
    if form is not None:
        data["spec"]["metrics"]["requestDuration"]["histogram"] = form
    data["spec"]["slos"][0]["threshold"] = threshold
    return data


def _rules(tmp: Path, form: str | None, threshold: str = "1s") -> Path:
    files = render_to(write_spec(tmp, _spec(form, threshold), "lat.yaml"), tmp / "out")
    return files["rules/lat.rules.yaml"]


def _native(fast: int, slow: int, start: int = 0, end: int = MINUTES) -> str:
    """Values of one native series (schema 0) gaining ``fast`` and ``slow`` observations a
    minute from minute ``start`` (its first sample, already holding ``start`` minutes of
    them: native ingestion switched on while the target runs) to ``end``."""

    def h(k: int) -> str:
        count, total = (fast + slow) * k, fast * FAST_S * k + slow * SLOW_S * k
        return (
            f"{{{{schema:0 sum:{total:g} count:{count} offset:-1 "
            f"buckets:[{fast * k} 0 0 {slow * k}]}}}}"
        )

    step = (
        f"{{{{schema:0 sum:{fast * FAST_S + slow * SLOW_S:g} count:{fast + slow} offset:-1 "
        f"buckets:[{fast} 0 0 {slow}]}}}}"
    )
    return " ".join(["_"] * start) + f" {h(start)}+{step}x{end - start - 1}"


def _classic(target: str, fast: int, slow: int, end: int = MINUTES) -> list[dict[str, str]]:
    """The classic series of one target gaining ``fast`` and ``slow`` observations a minute
    until minute ``end`` (then stale: classic scraping switched off)."""
    tail = " stale" if end < MINUTES else ""
    n = end - 1
    out = []
    # ``le`` as Prometheus 3 stores it (``1.0``), which the rules of prometheus.version 3 read.
    for le, per in (("0.25", 0), ("0.5", fast), ("1.0", fast), ("2.0", fast), ("4.0", fast + slow)):
        out.append(
            {"series": f'{HIST}_bucket{{{target},le="{le}"}}', "values": f"0+{per}x{n}{tail}"}
        )
    out.append(
        {"series": f'{HIST}_bucket{{{target},le="+Inf"}}', "values": f"0+{fast + slow}x{n}{tail}"}
    )
    out.append({"series": f"{HIST}_count{{{target}}}", "values": f"0+{fast + slow}x{n}{tail}"})
    per_sum = fast * FAST_S + slow * SLOW_S
    out.append({"series": f"{HIST}_sum{{{target}}}", "values": f"0+{per_sum:g}x{n}{tail}"})
    return out


def _common(*targets: str) -> list[dict[str, str]]:
    out = []
    for target in targets:
        out.append({"series": f"up{{{target}}}", "values": f"1x{MINUTES}"})
        out.append(
            {
                "series": f'http_requests_total{{{target},status="200"}}',
                "values": f"0+600x{MINUTES}",
            }
        )
    return out


def _run(rules: Path, series: list[dict[str, str]], tests: list[dict[str, Any]]) -> str:
    doc = {
        "rule_files": [rules.name],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": tests}],
    }
    path = rules.parent / "forms.test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, width=10_000), encoding="utf-8")
    out = subprocess.run(
        [toolchain.binary("prometheus3", "promtool"), "test", "rules", path.name],
        cwd=rules.parent,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    return "" if out.returncode == 0 else out.stdout + out.stderr


def _holds(expr: str, at: str = "80m") -> dict[str, Any]:
    """``expr`` (a comparison) holds at ``at``: exactly one sample, labels dropped."""
    return {
        "expr": f"count({expr})",
        "eval_time": at,
        "exp_samples": [{"labels": "{}", "value": 1}],
    }


def _empty(expr: str, at: str = "80m") -> dict[str, Any]:
    return {"expr": expr, "eval_time": at, "exp_samples": []}


def _events(kind: str, window: str = "59m30s") -> str:
    return (
        f'sum(sum_over_time(service:slo_outcomes:increase1m{{events="{kind}",service="lat",'
        f'slo="latency"}}[{window}]))'
    )


def _near(expr: str, value: float, tolerance: float = 1e-6) -> str:
    return f"abs({expr} - {value}) <= {tolerance * max(1.0, abs(value))}"


PAGE = 'ALERTS{alertname="ErrorBudgetBurn",alertstate="firing",slo="latency",long_window="1h"}'
SLOW = 'service:model_slow_requests:ratio_rate5m{service="lat"}'
P50 = 'service:model_latency_seconds:quantile_rate5m{service="lat",quantile="0.5"}'
P99 = 'service:model_latency_seconds:quantile_rate5m{service="lat",quantile="0.99"}'
SIGNAL = 'ALERTS{alertname="ModelSignalMissing",signal="requestDuration"}'


def _firing_signal() -> str:
    return f'{SIGNAL[:-1]},alertstate="firing",metric="{HIST}"}}'


# --- native proper (exponential buckets) -------------------------------------------------------


def test_native_rules_read_the_native_series_alone(tmp_path: Path) -> None:
    groups = yaml.safe_load(_rules(tmp_path, "native").read_text())["groups"]
    text = "\n".join(r["expr"] for g in groups for r in g["rules"])
    assert f"{HIST}_bucket" not in text and f"{HIST}_count" not in text
    assert f"histogram_fraction(0, 1, {HIST}" in text and f"histogram_count({HIST}" in text


def test_native_schema0_healthy_is_exact_and_silent(tmp_path: Path) -> None:
    """594 requests at 0.3 s and 6 at 3 s a minute: 1 % slower than 1 s, the objective's
    budget exactly (burn rate 1): the SLI is exact on a schema bound, nothing pages."""
    rules = _rules(tmp_path, "native")
    series = [*_common(POD_A), {"series": f"{HIST}{{{POD_A}}}", "values": _native(594, 6)}]
    failures = _run(
        rules,
        series,
        [
            _holds(_near(_events("total"), 600 * 60)),
            _holds(_near(_events("bad"), 6 * 60)),
            _holds(_near(SLOW, 0.01)),
            _holds(f"{P50} > 0.25 <= 0.5"),
            _holds(f"{P50} > 0.25 <= 0.5"),
            _holds(f"{P99} > 0.25 <= 4"),
            _empty(PAGE),
            _empty(SIGNAL),
        ],
    )
    assert not failures, failures


def test_native_schema0_slow_requests_page(tmp_path: Path) -> None:
    rules = _rules(tmp_path, "native")
    series = [*_common(POD_A), {"series": f"{HIST}{{{POD_A}}}", "values": _native(300, 300)}]
    failures = _run(
        rules,
        series,
        [_holds(_near(_events("bad"), 300 * 60)), _holds(_near(SLOW, 0.5)), _holds(PAGE)],
    )
    assert not failures, failures


def test_native_threshold_between_bounds_is_off_by_at_most_its_bucket(tmp_path: Path) -> None:
    """A threshold of 1.5 s sits inside schema 0's bucket (1, 2]: ``histogram_fraction``
    interpolates there (docs/spec.md, "Histogram forms"). 100 requests a minute at 1.2 s
    (good: under 1.5 s) and 500 at 0.3 s: the SLI books between 0 and all 100 of that bucket
    as bad, never more — the error is bounded by the bucket holding the threshold."""
    rules = _rules(tmp_path, "native", threshold="1500ms")

    def h(k: int) -> str:
        return f"{{{{schema:0 sum:{(500 * 0.3 + 100 * 1.2) * k:g} count:{600 * k} offset:-1 buckets:[{500 * k} 0 {100 * k}]}}}}"

    values = f"{h(0)}+{h(1)}x{MINUTES - 1}"
    series = [*_common(POD_A), {"series": f"{HIST}{{{POD_A}}}", "values": values}]
    bad = _events("bad")
    failures = _run(rules, series, [_holds(f"{bad} >= 0 <= {100 * 60}"), _holds(f"{bad} > 0")])
    assert not failures, failures


# --- both forms (a migration) -----------------------------------------------------------------


BOTH_CASES = [
    pytest.param(
        [*_classic(POD_A, 594, 6), {"series": f"{HIST}{{{POD_A}}}", "values": _native(594, 6)}],
        600,
        id="both forms of one target all along",
    ),
    pytest.param(
        [
            *_classic(POD_A, 594, 6),
            {"series": f"{HIST}{{{POD_A}}}", "values": _native(594, 6, start=40)},
        ],
        600,
        id="native switched on at 40m, its history not counted",
    ),
    pytest.param(
        [
            *_classic(POD_A, 594, 6, end=35),
            {"series": f"{HIST}{{{POD_A}}}", "values": _native(594, 6, start=30)},
        ],
        600,
        id="native on at 30m, classic off at 35m",
    ),
    pytest.param(
        [*_classic(POD_A, 594, 6), {"series": f"{HIST}{{{POD_B}}}", "values": _native(594, 6)}],
        1200,
        id="a classic pod beside a native pod",
    ),
]


@pytest.mark.parametrize(("series", "per_min"), BOTH_CASES)
def test_both_forms_count_every_request_once(
    series: list[dict[str, str]], per_min: int, tmp_path: Path
) -> None:
    """Whatever mix of forms the targets expose, each request is counted once: total and bad
    events over the last hour are exactly the traffic's (double counting would double them;
    counting a native series' history when it appears would add 40 minutes' worth), the slow
    ratio stays 1 %, nothing pages and no input is reported missing."""
    rules = _rules(tmp_path, "both")
    pods = (POD_A, POD_B) if per_min == 1200 else (POD_A,)
    failures = _run(
        rules,
        [*_common(*pods), *series],
        [
            # Every minute of the migration, each minute's increments are exact.
            *(
                _holds(_near(_events("total", "30s"), per_min), at=f"{m}m")
                for m in (29, 30, 31, 35, 36, 40, 41, 60)
            ),
            _holds(_near(_events("total"), per_min * 60)),
            _holds(_near(_events("bad"), per_min / 100 * 60)),
            _holds(_near(SLOW, 0.01)),
            _holds(f"{P50} > 0.25 <= 0.5"),
            _holds(f"{P99} > 0.25 <= 4"),
            _empty(PAGE),
            _empty(SIGNAL),
        ],
    )
    assert not failures, failures


def test_both_forms_page_on_slow_requests_in_either_form(tmp_path: Path) -> None:
    rules = _rules(tmp_path, "both")
    series = [
        *_common(POD_A, POD_B),
        *_classic(POD_A, 300, 300),
        {"series": f"{HIST}{{{POD_B}}}", "values": _native(300, 300)},
    ]
    failures = _run(
        rules,
        series,
        [_holds(_near(_events("bad"), 600 * 60)), _holds(_near(SLOW, 0.5)), _holds(PAGE)],
    )
    assert not failures, failures


# --- guards ----------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["native", "nhcb"])
def test_a_native_form_missing_beside_the_classic_one_is_named(form: str, tmp_path: Path) -> None:
    """The target exposes only the classic form: the guard names the native series (no
    suffix), and its description says which form and which scrape setting makes it."""
    rules = _rules(tmp_path, form)
    guard = next(
        r
        for g in yaml.safe_load(rules.read_text())["groups"]
        for r in g["rules"]
        if r.get("alert") == "ModelSignalMissing" and r["labels"].get("signal") == "requestDuration"
    )
    assert guard["labels"]["metric"] == HIST
    setting = "convert_classic_histograms_to_nhcb" if form == "nhcb" else "scrape_native_histograms"
    text = yaml.safe_dump(guard["annotations"], width=10_000)
    assert f"The {form} form of {HIST}" in text and setting in text, text
    series = [*_common(POD_A), *_classic(POD_A, 594, 6)]
    failures = _run(rules, series, [_holds(_firing_signal())])
    assert not failures, failures


def test_both_forms_missing_is_reported_and_one_form_is_enough(tmp_path: Path) -> None:
    rules = _rules(tmp_path, "both")
    assert not _run(rules, _common(POD_A), [_holds(_firing_signal())])
    native = [{"series": f"{HIST}{{{POD_A}}}", "values": _native(594, 6)}]
    assert not _run(rules, [*_common(POD_A), *native], [_empty(SIGNAL)])


# --- spec ------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["nhcb", "both", "classic"])
def test_bounded_forms_keep_the_boundary_rule(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator.cli import main

    code = main(["check", str(write_spec(tmp_path, _spec(form, "1500ms"), "lat.yaml"))])
    err = capsys.readouterr().err
    assert code == 2 and "spec.slos[0].threshold" in err and "not a bucket bound" in err, err
    assert "Traceback" not in err


def test_native_needs_no_bucket_bound(tmp_path: Path) -> None:
    from generator.cli import main

    assert main(["check", str(write_spec(tmp_path, _spec("native", "1500ms"), "lat.yaml"))]) == 0


def test_an_unknown_form_is_refused_with_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator.cli import main

    code = main(["check", str(write_spec(tmp_path, _spec("exponential"), "lat.yaml"))])
    err = capsys.readouterr().err
    assert code == 2 and "spec.metrics.requestDuration.histogram" in err, err
    assert "Traceback" not in err


def test_classic_renders_what_no_form_renders(tmp_path: Path) -> None:
    def body(path: Path) -> str:  # the header names the spec's path
        return "\n".join(line for line in path.read_text().splitlines() if not line.startswith("#"))

    plain = body(_rules(tmp_path / "plain", None))
    assert body(_rules(tmp_path / "classic", "classic")) == plain
