"""Every query of a generated dashboard returns data on the real Prometheus and on the real
VictoriaMetrics ("No data" fails)."""

from __future__ import annotations

import pytest

from tests.e2e.e2e_env import ENGINES, Env
from tests.e2e.e2e_scenarios import RATE_INTERVAL, dashboard_queries

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("engine", ENGINES)
def test_every_dashboard_query_returns_data_after_warm_up(e2e: Env, engine: str) -> None:
    e2e.result("dashboard", engine)


@pytest.mark.parametrize(
    ("board", "expected"),
    [
        pytest.param(
            {
                "templating": {
                    "list": [
                        {
                            "name": "pod",
                            "type": "query",
                            "query": {"query": 'label_values(up{pod=~"$pod"}, pod)'},
                        }
                    ]
                },
                "panels": [
                    {"panels": [{"targets": [{"expr": 'rate(x{pod=~"$pod"}[$__rate_interval])'}]}]}
                ],
            },
            [f'rate(x{{pod=~".*"}}[{RATE_INTERVAL}])', 'up{pod=~".*"}'],
            id="nested panel targets and label_values variables are expanded",
        ),
    ],
)
def test_dashboard_queries_are_extracted_and_expanded(board: dict, expected: list[str]) -> None:
    assert dashboard_queries(board) == expected


def test_an_undefined_variable_is_reported() -> None:
    with pytest.raises(AssertionError, match="unexpanded variable"):
        dashboard_queries({"panels": [{"targets": [{"expr": 'x{pod=~"$missing"}'}]}]})
