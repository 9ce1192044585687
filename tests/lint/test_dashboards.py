"""`obsgen lint` on Grafana dashboard JSON: the dashboard checks and the PromQL checks on every
panel query, on the lines of the file, next to rule files in one run."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.cli import main
from generator.lint import LintConfig, Severity, lint_paths
from generator.lint.dashboards import grafana_to_promql
from tests import test_dashboard_lint as dashboard_cases
from tests.data_dir import data_path

from .helpers import needs_promtool

ROOT = Path(__file__).resolve().parents[2]


def _dashboard(name: str = "o1-preview.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "dashboards" / name).read_text())
    return data


def _write(tmp: Path, data: Any, name: str = "d.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(data, indent=2))
    return path


def _target_line(path: Path, expr: str) -> int:
    """Line of the `{` opening the target whose expr is ``expr`` (as json.dumps indents)."""
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.dumps(expr) in line)
    while lines[at].strip() != "{":
        at -= 1
    return at + 1


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        pytest.param(
            'rate(x{pod=~"$pod"}[$__rate_interval])',
            'rate(x{pod=~".*"}[2m])',
            id="rate interval is 4 x scrape; a variable in a regex matcher is .*",
        ),
        pytest.param(
            'x{namespace="$namespace",a!="${b}"}',
            'x{namespace=~".*",a!~".*"}',
            id="an equality on a variable becomes a regex (multi-value variables are)",
        ),
        pytest.param(
            "histogram_quantile($quantile, sum by (le, $group) (rate(x_bucket[$window])))",
            "histogram_quantile(1, sum by (le, grafana_variable) (rate(x_bucket[2m])))",
            id="number, label and range positions",
        ),
        pytest.param(
            "sum_over_time(x[$__range]) / $__range_s",
            "sum_over_time(x[1h]) / 3600",
            id="range built-ins",
        ),
    ],
)
def test_grafana_variables_are_replaced_by_what_their_place_expects(
    expr: str, expected: str
) -> None:
    assert grafana_to_promql(expr, 30.0) == expected


def test_generated_service_dashboards_lint_clean_at_every_level(tmp_path: Path) -> None:
    paths = [str(ROOT / "dashboards" / f"{s}.json") for s in ("o1-preview", "mistral-7b")]
    for versions in (("2",), ("3",), ("2", "3")):
        report = lint_paths(paths, LintConfig(versions=versions), promtool=False)
        assert report.findings == (), [f.message for f in report.findings]
        assert report.rules > 20


def test_the_committed_dashboards_have_no_findings() -> None:
    """The fleet table's p99 column used to be `max by (service)` of per-model p99s in the
    dashboard (flagged: no p99 of the service). It now reads the fleet record
    `service:fleet_latency_p99_seconds:max`, documented as the highest p99 among the
    service's `groupBy` series (docs/dashboards.md), and no dashboard query aggregates a
    quantile."""
    report = lint_paths([str(ROOT / "dashboards")], LintConfig(), promtool=False)
    assert [(Path(f.file).name, f.check) for f in report.findings] == []
    fleet = (ROOT / "dashboards" / "fleet-overview.json").read_text(encoding="utf-8")
    assert "service:fleet_latency_p99_seconds:max" in fleet
    assert "quantile_rate5m" not in fleet


def test_dashboard_findings_are_on_the_line_of_their_target(tmp_path: Path) -> None:
    data = _dashboard()
    heatmap = next(p for p in data["panels"] if p["type"] == "heatmap")
    target = heatmap["targets"][0]
    target["expr"] = target["expr"].replace("[$__rate_interval]", "[5m]")
    quantile = next(p for p in data["panels"] if p.get("targets") and p is not heatmap)
    quantile["targets"][0]["expr"] = (
        "avg by (namespace) (service_pod:http_request_duration_seconds:p99_rate5m)"
    )
    path = _write(tmp_path, data)
    report = lint_paths([str(path)], LintConfig(), promtool=False)
    found = {(f.check, f.line) for f in report.findings}
    assert ("dashboard-rate-interval", _target_line(path, target["expr"])) in found
    expected = ("quantile-aggregated", _target_line(path, quantile["targets"][0]["expr"]))
    assert expected in found
    rule = next(f.rule for f in report.findings if f.check == "quantile-aggregated")
    assert rule.startswith(f"panels[{data['panels'].index(quantile)}] ")


@pytest.mark.parametrize(
    ("breaks", "check"),
    [
        pytest.param(dashboard_cases._duplicate_ids, "dashboard-panel-id", id="panel-id"),
        pytest.param(dashboard_cases._overlap, "dashboard-grid", id="grid"),
        pytest.param(dashboard_cases._no_unit, "dashboard-unit", id="unit"),
        pytest.param(dashboard_cases._no_panel_datasource, "dashboard-datasource", id="datasource"),
        pytest.param(dashboard_cases._fixed_range, "dashboard-rate-interval", id="rate-interval"),
        pytest.param(dashboard_cases._unused_variable, "dashboard-unused-variable", id="variable"),
    ],
)
def test_each_dashboard_check_is_a_lint_finding(
    tmp_path: Path, breaks: Callable[[dict[str, Any]], None], check: str
) -> None:
    clean = lint_paths([str(_write(tmp_path, _dashboard()))], LintConfig(), promtool=False)
    assert clean.findings == ()
    data = _dashboard()
    breaks(data)
    report = lint_paths([str(_write(tmp_path, data))], LintConfig(), promtool=False)
    assert check in {f.check for f in report.findings}, [f.message for f in report.findings]
    assert all(f.line > 0 for f in report.findings if f.check == check)


def test_a_panel_query_promtool_rejects_is_a_promtool_finding(tmp_path: Path) -> None:
    needs_promtool()
    data = _dashboard()
    panel = next(p for p in data["panels"] if p.get("targets"))
    panel["targets"][0]["expr"] = "histogram_quantiel(0.99, up)"
    path = _write(tmp_path, data)
    report = lint_paths([str(path)], LintConfig(), promtool=True)
    [finding] = [f for f in report.findings if f.check == "promtool"]
    assert finding.line == _target_line(path, "histogram_quantiel(0.99, up)")
    assert finding.severity is Severity.ERROR


def test_dashboards_and_rule_files_lint_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "bundle"
    folder.mkdir()
    data = _dashboard()
    data["panels"][1]["fieldConfig"]["defaults"].pop("unit", None)
    _write(folder, data)
    (folder / "package.json").write_text('{"name": "not a dashboard"}')
    (folder / "r.yaml").write_text(
        "groups:\n- name: g\n  rules:\n  - record: job:x:rate5m\n"
        '    expr: sum(rate(x_bucket{le="1"}[5m]))\n'
    )
    assert main(["lint", "--no-promtool", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "[dashboard-unit]" in out and "[le-spelling]" in out
    assert "package.json" not in out


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        pytest.param('{"panels": [1, 2,\n  ]', 2, "not valid JSON", id="invalid JSON"),
        pytest.param('{"name": "x"}', 0, "not a Grafana dashboard", id="not a dashboard"),
        pytest.param('{"panels": ' + "[" * 200 + "]" * 200 + "}", 1, "nests deeper", id="deep"),
    ],
)
def test_unreadable_dashboards_named_explicitly(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    path = tmp_path / "d.json"
    path.write_text(text)
    report = lint_paths([str(path)], LintConfig(), promtool=False)
    [finding] = report.findings
    assert (finding.check, finding.line) == ("unreadable-input", line)
    assert words in finding.message


def test_odd_dashboard_shapes_are_findings_not_tracebacks(tmp_path: Path) -> None:
    data = _dashboard()
    data["panels"][0]["gridPos"] = {"x": "left", "y": 0, "w": 3, "h": 3}
    data["templating"] = {"list": "nope"}
    report = lint_paths([str(_write(tmp_path, data))], LintConfig(), promtool=False)
    assert any(f.check == "rule-shape" for f in report.findings)


# Reviewed per file (tests/data/corpus/dashboards/README.md, "Lint findings"): dcgm panels 5
# and 7 share gridPos y=24 x=0; panels without a unit; targets naming no datasource (they
# inherit the panel's: a style finding, kept because obsgen's own dashboards name it on every
# target); TGI rates over fixed [1m]/[5m]/[10m] ranges, three increase(...[1m]) with two
# samples at a 30s scrape; Pyrra's `sum(x[$__rate_interval])` does not parse; the vLLM stack's
# two "distribution" bar gauges sum raw `vllm:…_bucket` counters (the whole uptime's
# distribution: a scraped vLLM name, not a recorded one).
CORPUS_EXPECTED: dict[str, dict[str, int]] = {
    "dcgm-exporter-dashboard.json": {
        "dashboard-datasource": 8,
        "dashboard-grid": 1,
        "dashboard-unit": 8,
    },
    "pyrra_slo-detail.json": {"promtool": 1},
    "tgi_grafana.json": {"dashboard-rate-interval": 53, "dashboard-unit": 13, "range-too-short": 3},
    "vllm-production-stack_vllm-dashboard.json": {
        "bucket-without-rate": 2,
        "dashboard-datasource": 14,
        "dashboard-unit": 12,
    },
    "vllm-production-stack_vllm-model-metrics-dashboard.json": {"dashboard-unit": 7},
}


def test_corpus_dashboards_findings_are_the_reviewed_ones() -> None:
    needs_promtool()
    report = lint_paths([str(data_path("corpus", "dashboards"))], LintConfig(), promtool=True)
    found: dict[str, Counter[str]] = {}
    for finding in report.findings:
        found.setdefault(Path(finding.file).name, Counter())[finding.check] += 1
    assert {name: dict(sorted(c.items())) for name, c in found.items()} == CORPUS_EXPECTED
