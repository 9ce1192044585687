"""The dashboard's ``Efficiency`` row (:mod:`generator.builders.efficiency_panels`): its two
panels read the efficiency records the rule file defines, each beside its value a week before,
pass the dashboard lint (promtool parses every query), and the "now" query, as Grafana sends it
with every variable at "All", holds the record's value in real promtool 3.16 on both GPU
sources (350 W at 1,000 output tokens a second: 350 J and 1,000 GPU-seconds). No row without a
GPU source or a generation-token counter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.builders import efficiency_rules
from generator.builders.dashboard import service_dashboard
from generator.builders.rulefile import rule_file
from generator.lint.dashboards import lint_dashboards
from generator.plan import ServicePlan
from tests.helpers_promtool import promtool_groups
from tests.test_efficiency import SPECS, _group
from tests.test_server_reality import plan_of, spec_data

CASES = ["vLLM, sidecar", "vLLM, dcgm-exporter", "SGLang, sidecar, cluster label"]


def _row(plan: ServicePlan) -> list[dict[str, Any]]:
    """The panels under the dashboard's ``Efficiency`` row panel (none when it has no row)."""
    panels = service_dashboard(plan)["panels"]
    titles = [p["title"] for p in panels]
    if "Efficiency" not in titles:
        return []
    start = titles.index("Efficiency") + 1
    end = next((i for i in range(start, len(panels)) if panels[i]["type"] == "row"), len(panels))
    return panels[start:end]


def _all(expr: str) -> str:
    """``expr`` as Grafana sends it with every multi-value variable at "All" (``.*``)."""
    return expr.replace("$namespace", ".*").replace("$cluster", ".*")


@pytest.mark.parametrize("spec", CASES)
def test_the_row_reads_both_records_now_and_a_week_before(spec: str) -> None:
    plan = plan_of(SPECS[spec])
    panels = _row(plan)
    assert [p["title"] for p in panels] == [
        "Energy per 1,000 output tokens",
        "GPU-seconds per million output tokens",
    ]
    defined = {r["record"] for g in rule_file(plan)["groups"] for r in g["rules"] if "record" in r}
    for panel, record, unit in zip(
        panels,
        (efficiency_rules.ENERGY_PER_1K, efficiency_rules.GPU_SECONDS_PER_1M),
        ("joule", "s"),
        strict=True,
    ):
        assert record in defined
        now, before = (t["expr"] for t in panel["targets"])
        assert now.startswith(f"{record}{{") and before == f"{now} offset 1w"
        assert panel["fieldConfig"]["defaults"]["unit"] == unit
        assert "GPUHardwareSlowdown" in json.dumps(panel["links"])
        assert "$model_name" not in now  # GPU series carry no model label


@pytest.mark.parametrize("spec", CASES)
def test_the_dashboard_passes_its_lint(spec: str) -> None:
    plan = plan_of(SPECS[spec])
    assert lint_dashboards({"d.json": service_dashboard(plan)}) == []


@pytest.mark.parametrize("spec", ["vLLM, sidecar", "vLLM, dcgm-exporter"])
def test_the_panel_query_holds_the_records_value(tmp_path: Path, spec: str) -> None:
    plan = plan_of(SPECS[spec])
    group = _group(plan, "1,000 tokens a second", 1000.0)
    for test, panel in zip(group["promql_expr_test"], _row(plan), strict=True):
        test["expr"] = f"round({_all(panel['targets'][0]['expr'])}, 0.001)"
    result = promtool_groups("prometheus3", tmp_path, plan, [group])
    assert result.startswith("PASS"), result


def test_no_row_without_a_gpu_source_or_a_token_counter() -> None:
    assert _row(plan_of(spec_data("vllm"))) == []
    assert _row(plan_of(spec_data("triton", gpu={"exporter": "sidecar"}))) == []
