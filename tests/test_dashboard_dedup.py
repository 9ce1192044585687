"""Dashboards in ``ruler.deduplication: rules`` mode (issue 43, "Tolerate duplicates"): a panel
that sums gauges or counters read raw collapses the copies as the rules do
(generator/dedup.py ``collapse_panel``), so an HA pair (its second replica scraping early, one
sample lost) and a second scrape configuration show the single copy's value. Evaluated by the
real promtool 3.16 with the panel's own query (Grafana variables set to "All"); the panels as
``querier`` mode writes them read the copies two and three times over.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import core
from generator.cases.duplicate_cases import PHASES, copies, phased
from generator.dedup import collapse_panel
from generator.lint.dashboards import lint_dashboards, promql_for_promtool
from generator.render import load_plans
from tests import toolchain

SPEC = Path(__file__).parent / "fixtures" / "slo-duplicates.yaml"
COPY = ("endpoint", "instance", "job", "prometheus_replica", "replica")
REPLICA = ("prometheus_replica", "replica")
TARGET = 'instance="10.0.0.1:8000",job="chat",namespace="chat",pod="chat-0"'


def _outputs(root: Path, mode: str) -> dict[str, str]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "obsgen.yaml").write_text(f"ruler:\n  deduplication: {mode}\n")
    return core.build(load_plans([SPEC], root))


@pytest.fixture(scope="module")
def modes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    base = tmp_path_factory.mktemp("dash")
    return {mode: _outputs(base / mode, mode) for mode in ("querier", "rules")}


def _targets(outputs: dict[str, str], name: str) -> list[tuple[str, str]]:
    out = []
    stack: list[dict[str, Any]] = list(json.loads(outputs[f"dashboards/{name}.json"])["panels"])
    while stack:
        panel = stack.pop()
        stack.extend(panel.get("panels", []))
        out += [(panel["title"], t["expr"]) for t in panel.get("targets", []) if t.get("expr")]
    return out


def test_the_rewrite_keeps_grafana_variables() -> None:
    expr = 'sum by (status) (rate(x{namespace=~"$namespace",pod=~"${pod}"}[$__rate_interval]))'
    assert collapse_panel(expr, COPY, REPLICA) == (
        "sum by (status) (avg without (endpoint, instance, job, prometheus_replica, replica) "
        '(rate(x{namespace=~"$namespace",pod=~"${pod}"}[$__rate_interval])))'
    )
    record = 'service:x:sum{namespace=~"$namespace"}'
    assert collapse_panel(record, COPY, REPLICA) == record


def test_every_panel_query_reads_each_copy_once(modes: dict[str, dict[str, str]]) -> None:
    """Collapsing a rules-mode query again changes nothing (every raw read is collapsed),
    and querier mode leaves the dashboards as written."""
    for name in ("chat-dup", "fleet-overview"):
        for title, expr in _targets(modes["rules"], name):
            assert collapse_panel(expr, COPY, REPLICA) == expr, title
    assert "avg without" not in modes["querier"]["dashboards/chat-dup.json"]
    assert "avg without" in modes["rules"]["dashboards/chat-dup.json"]
    # and the rewritten queries still pass the dashboard lint (promtool parses each)
    dashboards = {
        f"{n}.json": json.loads(modes["rules"][f"dashboards/{n}.json"])
        for n in ("chat-dup", "fleet-overview")
    }
    assert lint_dashboards(dashboards) == []


def _series(name: str, labels: str, values: str) -> list[dict[str, str]]:
    """An HA pair (replica-1 one step early, its sample of minute 10 lost) and a second
    target of one series."""
    out = []
    for text in copies(f"{name}{{{labels}}}", "prometheus_replica"):
        early = 'prometheus_replica="replica-1"' in text
        out.append(
            {"series": text, "values": phased(values, -1 if early else 0, 10 if early else None)}
        )
    return out


_KSM = 'deployment="chat",namespace="chat"'
PANELS = [
    # (panel title, a name its query reads, {labels: value} the single copy shows)
    ("Requests/s by outcome", "http_requests_total", {'{status="200"}': 99, '{status="500"}': 1}),
    ("Scrape targets up", "up{", {"{}": 1}),
    ("Scrape targets up", "kube_deployment_status_replicas_available", {"{}": 2}),
    ("Scrape targets up", "kube_deployment_spec_replicas", {"{}": 2}),
]


def _test_file(outputs: dict[str, str]) -> dict[str, Any]:
    inputs = [
        *_series("http_requests_total", TARGET + ',status="200"', "0+5940x20"),
        *_series("http_requests_total", TARGET + ',status="500"', "0+60x20"),
        *_series("up", TARGET, "1x20"),
        *_series("kube_deployment_status_replicas_available", _KSM, "2x20"),
        *_series("kube_deployment_spec_replicas", _KSM, "2x20"),
    ]
    targets = _targets(outputs, "chat-dup")
    checks = []
    for title, reads, want in PANELS:
        (expr,) = [e for t, e in targets if t == title and reads in e]
        checks.append(
            {
                "expr": promql_for_promtool(expr),
                "eval_time": "15m",
                "exp_samples": [{"labels": k, "value": v} for k, v in want.items()],
            }
        )
    return {
        "rule_files": ["chat-dup.rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {"interval": f"{60 // PHASES}s", "input_series": inputs, "promql_expr_test": checks}
        ],
    }


def _promtool(mode: str, modes: dict[str, dict[str, str]], tmp: Path) -> str:
    (tmp / "chat-dup.rules.yaml").write_text(modes["rules"]["rules/chat-dup.rules.yaml"])
    (tmp / "panels.test.yaml").write_text(yaml.safe_dump(_test_file(modes[mode]), sort_keys=False))
    result = subprocess.run(
        [toolchain.binary("prometheus3", "promtool"), "test", "rules", "panels.test.yaml"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp,
        timeout=600,
    )
    return ("" if result.returncode == 0 else "FAILED\n") + result.stdout + result.stderr


def test_panels_show_the_single_copy_value_on_duplicated_data(
    modes: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    out = _promtool("rules", modes, tmp_path)
    assert not out.startswith("FAILED"), out[-4000:]


def test_querier_panels_read_the_copies_over_and_over(
    modes: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    """The control: the same queries as written (querier mode) fed the same copies — the
    requests three times (297/s), the target three times, the replicas twice (4)."""
    out = _promtool("querier", modes, tmp_path)
    assert out.startswith("FAILED"), out[-3000:]
    assert 'got: {status="200"} 2.97E+02' in out, out[-3000:]
    assert "got: {} 3E+00" in out and "got: {} 4E+00" in out, out[-3000:]
