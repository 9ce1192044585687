"""The dashboard lint: each check has a case that breaks exactly one thing of a generated
dashboard and asserts the finding; promtool runs for real. The public corpus dashboards
(tests/data/corpus/dashboards) lint without crashing and report their true findings."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.builders.dashboard import service_dashboard
from generator.lint.dashboards import lint_dashboards, promql_for_promtool
from generator.render import find_specs, load_plans
from tests.data_dir import data_path

ROOT = Path(__file__).resolve().parents[1]

Dashboard = dict[str, Any]


@pytest.fixture(scope="module")
def good() -> Dashboard:
    plans = load_plans(find_specs([], ROOT), ROOT)
    return service_dashboard(next(p for p in plans if p.name == "o1-preview"))


def _first(d: Dashboard, kind: str) -> dict[str, Any]:
    return next(p for p in d["panels"] if p["type"] == kind)


def _duplicate_ids(d: Dashboard) -> None:
    for i, panel in enumerate(d["panels"]):
        panel["id"] = i + 1
    d["panels"][3]["id"] = 1


def _mixed_ids(d: Dashboard) -> None:
    d["panels"][2]["id"] = None  # generated panels have ids; one lost


def _overlap(d: Dashboard) -> None:
    d["panels"][2]["gridPos"] = dict(
        d["panels"][1]["gridPos"], x=d["panels"][1]["gridPos"]["x"] + 1
    )


def _too_wide(d: Dashboard) -> None:
    d["panels"][1]["gridPos"]["w"] = 30


def _no_unit(d: Dashboard) -> None:
    del _first(d, "timeseries")["fieldConfig"]["defaults"]["unit"]


def _no_panel_datasource(d: Dashboard) -> None:
    del _first(d, "stat")["datasource"]


def _no_target_datasource(d: Dashboard) -> None:
    _first(d, "heatmap")["targets"][0]["datasource"] = None


def _fixed_range(d: Dashboard) -> None:
    target = _first(d, "heatmap")["targets"][0]
    target["expr"] = target["expr"].replace("[$__rate_interval]", "[5m]")


def _unused_variable(d: Dashboard) -> None:
    d["templating"]["list"].append(dict(d["templating"]["list"][1], name="cluster"))


def _bad_promql(d: Dashboard) -> None:
    target = _first(d, "heatmap")["targets"][0]
    target["expr"] = target["expr"].rstrip(")")


def _bad_function(d: Dashboard) -> None:
    _first(d, "stat")["targets"][0]["expr"] = "histogram_quantiel(0.99, up)"


CASES = [
    pytest.param(
        _duplicate_ids, "dashboard-panel-id: id 1 already used", id="two panels sharing an id"
    ),
    pytest.param(
        _mixed_ids, "dashboard-panel-id: null id mixed", id="one numeric id among null ids"
    ),
    pytest.param(_overlap, "dashboard-grid: gridPos overlaps", id="two panels overlapping"),
    pytest.param(_too_wide, "outside the 24-column grid", id="a panel wider than the grid"),
    pytest.param(
        _no_unit, "dashboard-unit: fieldConfig.defaults.unit is not set", id="a panel without unit"
    ),
    pytest.param(
        _no_panel_datasource, "dashboard-datasource: panel has no", id="a panel without datasource"
    ),
    pytest.param(
        _no_target_datasource,
        "dashboard-datasource: target has no",
        id="a target without datasource",
    ),
    pytest.param(
        _fixed_range, "dashboard-rate-interval: range [5m]", id="a rate over a fixed 5m range"
    ),
    pytest.param(
        _unused_variable, "dashboard-unused-variable: $cluster", id="a variable nothing uses"
    ),
    pytest.param(_bad_promql, "promql: ", id="a query missing its closing parenthesis"),
    pytest.param(_bad_function, "promql: ", id="a query calling an unknown function"),
]


def test_the_unbroken_dashboard_is_clean(good: Dashboard) -> None:
    assert lint_dashboards({"good.json": good}) == []


@pytest.mark.parametrize(("breaks", "finding"), CASES)
def test_each_check_reports_what_was_broken(
    good: Dashboard, breaks: Callable[[Dashboard], None], finding: str
) -> None:
    broken = copy.deepcopy(good)
    breaks(broken)
    found = lint_dashboards({"broken.json": broken})
    assert found, "the lint missed the break"
    assert any(finding in d.message for d in found), [str(d) for d in found]
    assert all(d.file == "broken.json" for d in found)


def test_promtool_finding_names_the_panel_and_target(good: Dashboard) -> None:
    broken = copy.deepcopy(good)
    _bad_promql(broken)
    (finding,) = lint_dashboards({"broken.json": broken})
    heatmap_index = broken["panels"].index(_first(broken, "heatmap"))
    assert finding.path.startswith(f"panels[{heatmap_index}] ")
    assert finding.path.endswith(".targets[0]")


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        pytest.param(
            'rate(x{pod=~"$pod"}[$__rate_interval])',
            'rate(x{pod=~".*"}[5m])',
            id="rate interval becomes 5m and a variable becomes .*",
        ),
        pytest.param(
            'x{a=~"${namespace}",b=~"[[model]]",c=~"${pod:regex}"}',
            'x{a=~".*",b=~".*",c=~".*"}',
            id="braced, bracketed and formatted variables are replaced",
        ),
        pytest.param(
            "sum_over_time(x[$__range]) / $__interval",
            "sum_over_time(x[5m]) / 5m",
            id="range and interval built-ins become 5m",
        ),
    ],
)
def test_variables_are_substituted_for_promtool(expr: str, expected: str) -> None:
    assert promql_for_promtool(expr) == expected


def test_brackets_inside_label_regexes_are_not_ranges(good: Dashboard) -> None:
    d = copy.deepcopy(good)
    _first(d, "stat")["targets"][0]["expr"] = 'up{pod=~"model-[a-z0-9]+-[a-z0-9]+"}'
    assert lint_dashboards({"d.json": d}) == []


def _corpus() -> Path:
    return data_path("corpus", "dashboards")


def test_corpus_dashboards_lint_with_their_true_findings() -> None:
    corpus = _corpus()
    dashboards = {p.name: json.loads(p.read_text()) for p in sorted(corpus.glob("*.json"))}
    assert len(dashboards) >= 4
    found = lint_dashboards(dashboards)
    by_file: dict[str, set[str]] = {}
    for d in found:
        by_file.setdefault(d.file, set()).add(d.message.split(":")[0])
    # TGI rates over fixed [10m]/[1m]/[5m] ranges; dcgm-exporter panels carry no unit.
    assert "dashboard-rate-interval" in by_file["tgi_grafana.json"]
    assert "dashboard-unit" in by_file["dcgm-exporter-dashboard.json"]
    # Pyrra sums a range vector: sum(x[$__rate_interval]) does not parse.
    assert any(d.file == "pyrra_slo-detail.json" and d.message.startswith("promql:") for d in found)
