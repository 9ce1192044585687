"""A message about many specs, teams or files names three and counts the rest (issue 19: at
1,000 specs one warning listed all 1,000 paths on one line)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from generator import cli
from generator.builders.alertmanager_routing import routing_warnings
from generator.builders.fleet import fleet_cluster_label
from generator.errors import ObsgenError, capped_list
from generator.plan import ServicePlan
from generator.receivers import RECEIVERS_FILE, parse_receivers
from generator.render import find_specs, load_plans
from generator.spec import parse_yaml

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def plan() -> ServicePlan:
    plans = load_plans(find_specs([str(REPO / "specs" / "o1-preview.yaml")], REPO), REPO)
    return plans[0]


def _fleet(plan: ServicePlan, count: int, **fields: Any) -> list[ServicePlan]:
    """``count`` services like ``plan``, ``specs/s00.yaml`` …, with ``fields`` formatted by i."""
    return [
        dataclasses.replace(
            plan,
            name=f"s{i:02d}",
            source=f"specs/s{i:02d}.yaml",
            **{key: value.format(i=i) for key, value in fields.items()},
        )
        for i in range(count)
    ]


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (0, ""),
        (1, "s00"),
        (3, "s00, s01, s02"),
        (4, "s00, s01, s02 and 1 more"),
        (50, "s00, s01, s02 and 47 more"),
        (2000, "s00, s01, s02 and 1,997 more"),
    ],
)
def test_capped_list_names_three_and_counts_the_rest(count: int, expected: str) -> None:
    assert capped_list([f"s{i:02d}" for i in range(count)]) == expected


def test_no_receivers_for_a_team_of_50_specs_names_three(plan: ServicePlan) -> None:
    plans = _fleet(plan, 50, team="ml-platform")
    [warning] = [w for w in routing_warnings(plans, None, True) if "no receivers" in w.message]
    assert (
        "no receivers for team 'ml-platform' (specs/s00.yaml, specs/s01.yaml, specs/s02.yaml "
        "and 47 more): its pages and tickets go to placeholder receivers" in warning.message
    )
    assert "specs/s03.yaml" not in warning.message


def test_a_receivers_team_that_owns_no_spec_names_three_teams_and_the_near_one(
    plan: ServicePlan,
) -> None:
    plans = _fleet(plan, 50, team="team-{i:02d}")
    text = (
        "apiVersion: obsgen/v1alpha1\nkind: AlertReceivers\nteams:\n  - name: taem-07\n"
        "    page: [{webhook: {url: 'https://pages.example.com'}}]\n"
        "    ticket: [{webhook: {url: 'https://tickets.example.com'}}]\n"
    )
    receivers = parse_receivers(parse_yaml(text, RECEIVERS_FILE))
    [warning] = [w for w in routing_warnings(plans, receivers, True) if "owns no spec" in w.message]
    assert warning.message == (
        "team 'taem-07' owns no spec (teams of the specs: team-00, team-01, team-02 and 47 "
        "more); did you mean 'team-07'?"
    )


def test_fifty_cluster_labels_are_refused_with_three_named(plan: ServicePlan) -> None:
    with pytest.raises(ObsgenError) as raised:
        fleet_cluster_label(_fleet(plan, 50, cluster_label="cluster_{i:02d}"))
    messages = {d.message for d in raised.value.diagnostics}
    assert messages == {
        "every spec of one fleet must name the same cluster label (cluster_00 in "
        "specs/s00.yaml, cluster_01 in specs/s01.yaml, cluster_02 in specs/s02.yaml and 47 "
        "more); the fleet overview filters all services by one cluster variable"
    }


def test_an_internal_error_over_50_specs_names_three(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(args: argparse.Namespace) -> int:
        raise RuntimeError("boom")  # before any spec is read: no input is tagged

    monkeypatch.setattr(cli._load("check"), "run", run)
    paths = [f"specs/s{i:02d}.yaml" for i in range(50)]
    assert cli.main(["check", *paths]) == 70
    assert (
        "obsgen check: internal error on specs/s00.yaml, specs/s01.yaml, specs/s02.yaml and 47 "
        "more: RuntimeError: boom" in capsys.readouterr().err
    )
