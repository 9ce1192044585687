"""Alerts reach the right receiver once, are held back while their cause fires, resolve, and
stay quiet under the runbook's silence: the real Prometheus sends the rendered rules' alerts to
a real Alertmanager running the rendered configuration; see ``e2e_alerting``."""

from __future__ import annotations

import pytest

from tests.e2e.e2e_env import Env

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(
            "incident",
            id="the o1-preview incident pages the team once per alert group with runbook and "
            "dashboard links, opens no ticket, and every page is resolved after recovery",
        ),
        pytest.param(
            "inhibit",
            id="with every target down only ModelTargetDown is delivered; latency and error "
            "pages are inhibited",
        ),
        pytest.param(
            "silence",
            id="the silence the runbook prints mutes the alert until it is expired",
        ),
    ],
)
def test_delivery(e2e: Env, scenario: str) -> None:
    e2e.result(scenario)
