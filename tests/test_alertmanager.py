"""Alertmanager outputs: routing proved by the real amtool, inhibition by a real Alertmanager,
``AlertmanagerConfig`` objects by the CRD schemas (newest and v0.65.0) and by amtool after the
operator's conversion, and every bad ``alertmanager/receivers.yaml`` refused with exit 2."""

from __future__ import annotations

import copy
import io
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import redirect_stderr
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from generator import amtool, core, naming
from generator.builders import alertmanager
from generator.builders.alertmanager_routing import (
    ALERT_ROLES,
    alert_labels,
    page_receiver,
    route_cases,
    ticket_receiver,
)
from generator.cli import main
from generator.core.prove import amtool_problems
from generator.families.base import Role
from generator.plan import ServicePlan
from generator.receivers import RECEIVERS_FILE, load_receivers, parse_receivers
from generator.render import find_specs, load_plans
from tests.alertmanager_server import AlertmanagerServer, find_alertmanager
from tests.data_dir import data_path
from tests.e2e.e2e_env import SPECS as E2E_SPECS
from tests.factories import good_spec, set_path, write_spec

ROOT = Path(__file__).resolve().parents[1]


def _amtool() -> None:
    if shutil.which("amtool") is None:
        pytest.fail("amtool is not installed; `make test` installs prometheus-alertmanager")


@pytest.fixture(scope="module")
def plans() -> list[ServicePlan]:
    return load_plans(find_specs([], ROOT), ROOT)


@pytest.fixture(scope="module")
def outputs(plans: list[ServicePlan]) -> dict[str, str]:
    return core.build(plans, receivers=load_receivers(ROOT))


# -- classification -----------------------------------------------------------------------------


def _every_plan() -> list[ServicePlan]:
    """Repository specs, the e2e specs and the fixture specs: every alert the rule builders
    emit for some spec."""
    paths = [*find_specs([], ROOT), *sorted(E2E_SPECS.glob("*.yaml"))]
    paths += sorted((ROOT / "tests" / "fixtures").glob("*.yaml"))
    return [p for path in paths for p in load_plans([path], ROOT)]


def test_every_alert_name_is_classified_in_one_table() -> None:
    reserved = {v for k, v in vars(naming).items() if k.startswith("ALERT_")}
    emitted = {labels["alertname"] for p in _every_plan() for labels in alert_labels(p)}
    assert emitted, "no alert rendered"
    assert emitted <= reserved, emitted - reserved
    assert set(ALERT_ROLES) == reserved, set(ALERT_ROLES) ^ reserved


def test_an_unclassified_alert_fails_loudly(
    plans: list[ServicePlan], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(ALERT_ROLES, naming.ALERT_QUEUE_DEPTH)
    with pytest.raises(KeyError, match=r"ModelQueueDepthHigh.*ALERT_ROLES"):
        route_cases(plans)


# -- routing, proved by amtool ------------------------------------------------------------------


def test_committed_configuration_passes_amtool_and_every_route_test(
    outputs: dict[str, str],
) -> None:
    _amtool()
    cases = yaml.safe_load(outputs[alertmanager.ROUTE_TESTS_FILE])["cases"]
    receivers = {c["receiver"] for c in cases}
    assert receivers == {"ml-platform-page", "ml-platform-ticket"}
    assert len(cases) > 40
    assert amtool_problems(outputs) == []


def test_route_cases_cover_every_alert_of_every_spec(plans: list[ServicePlan]) -> None:
    cases = route_cases(plans)
    for plan in plans:
        mine = [dict(c.labels) for c in cases if dict(c.labels)["service"] == plan.name]
        assert sorted(map(str, mine)) == sorted(map(str, alert_labels(plan)))
    for case in cases:
        labels = dict(case.labels)
        expected = "page" if labels["severity"] == "critical" else "ticket"
        assert case.receiver == f"{labels['team']}-{expected}"


def _write(tmp: Path, text: str, name: str = "alertmanager.yaml") -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_wrong_route_fails_the_route_tests(outputs: dict[str, str], tmp_path: Path) -> None:
    """Swap the page and ticket receivers: amtool must report every case as misrouted."""
    _amtool()
    text = outputs[alertmanager.CONFIG_FILE]
    swapped = text.replace("receiver: ml-platform-page", "receiver: SWAP").replace(
        "receiver: ml-platform-ticket", "receiver: ml-platform-page"
    )
    swapped = swapped.replace("receiver: SWAP", "receiver: ml-platform-ticket")
    cases = yaml.safe_load(outputs[alertmanager.ROUTE_TESTS_FILE])["cases"][:4]
    problems = amtool.test_routes(
        _write(tmp_path, swapped), "routes", [(c["labels"], c["receiver"]) for c in cases]
    )
    assert [p.path for p in problems] == [f"cases[{i}]" for i in range(4)]
    assert "reaches" in problems[0].message and "expected ml-platform" in problems[0].message


def test_route_tests_run_once_per_case_the_routing_tree_can_tell_apart(
    outputs: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = yaml.safe_load(outputs[alertmanager.CONFIG_FILE])
    assert amtool.routing_labels(config) == {"team", "severity"}
    tested: list[list[int]] = []
    real = amtool.test_routes

    def recording(path: Path, name: str, cases: Any, indices: Any = None) -> Any:
        tested.append(list(indices))
        return real(path, name, cases, indices)

    monkeypatch.setattr(amtool, "test_routes", recording)
    assert amtool_problems(outputs) == []
    cases = yaml.safe_load(outputs[alertmanager.ROUTE_TESTS_FILE])["cases"]
    # page, ticket and info (GPUXidApplicationError) of the one team
    assert len(tested[0]) == 3 < len(cases)
    assert {cases[i]["labels"]["severity"] for i in tested[0]} == {"critical", "warning", "info"}


def test_a_route_that_reads_a_label_keeps_its_values_apart() -> None:
    config = {
        "route": {
            "receiver": "default",
            "routes": [
                {"receiver": "a", "matchers": ['service=~"chat-.*"', "team = t"]},
                {"receiver": "b", "match": {"slo": "x"}, "routes": [{"match_re": {"job": "j"}}]},
            ],
        }
    }
    labels = amtool.routing_labels(config)
    assert labels == {"service", "team", "slo", "job"}
    cases = [
        ({"service": "chat-1", "team": "t", "alertname": "A"}, "a"),
        ({"service": "chat-1", "team": "t", "alertname": "B"}, "a"),  # alertname: not read
        ({"service": "chat-2", "team": "t", "alertname": "A"}, "a"),
        ({"service": "chat-1", "team": "t", "alertname": "A"}, "b"),  # another receiver
    ]
    assert amtool.distinct_cases(cases, labels) == [0, 2, 3]
    assert amtool.distinct_cases(cases, None) == [0, 1, 2, 3]


def test_a_routing_tree_it_cannot_read_keeps_every_case() -> None:
    assert amtool.routing_labels({"route": {"matchers": [{"not": "a string"}]}}) is None
    assert amtool.routing_labels({"route": {"routes": ["nonsense"]}}) is None
    assert amtool.routing_labels({}) is None


def test_a_misrouted_case_is_named_by_its_place_in_the_route_test_file(
    outputs: dict[str, str], tmp_path: Path
) -> None:
    _amtool()
    cases = yaml.safe_load(outputs[alertmanager.ROUTE_TESTS_FILE])["cases"]
    wrong = [(c["labels"], "nobody") for c in cases[:3]]
    problems = amtool.test_routes(
        _write(tmp_path, outputs[alertmanager.CONFIG_FILE]), "routes", wrong, [7, 8, 9]
    )
    assert [p.path for p in problems] == ["cases[7]", "cases[8]", "cases[9]"]


def test_check_config_names_the_broken_file(tmp_path: Path) -> None:
    _amtool()
    broken = _write(tmp_path, "route: {receiver: nowhere}\nreceivers: [{name: somewhere}]\n")
    problems = amtool.check_config([broken], ["alertmanager/alertmanager.yaml"])
    assert len(problems) == 1
    assert problems[0].file == "alertmanager/alertmanager.yaml"
    assert "nowhere" in problems[0].message


def test_teams_with_spaces_and_commas_route_apart(tmp_path: Path) -> None:
    """Team names are free text: receivers get distinct slugs and the matchers stay quoted."""
    _amtool()
    plans = []
    for name, team in (("a", "ML Platform, EU"), ("b", "ml-platform-eu"), ("c", "Ops (GPU)")):
        spec = set_path(set_path(good_spec(), "metadata.name", name), "metadata.team", team)
        plans += load_plans([write_spec(tmp_path / "specs", spec, f"{name}.yaml")], tmp_path)
    assert len({page_receiver(p.team) for p in plans}) == 3
    receivers = parse_receivers(
        {
            "apiVersion": "obsgen/v1alpha1",
            "kind": "AlertReceivers",
            "teams": [
                {
                    "name": p.team,
                    "page": [{"webhook": {"url": f"https://pager.example.com/{p.name}"}}],
                    "ticket": [{"webhook": {"url": f"https://tickets.example.com/{p.name}"}}],
                }
                for p in plans
            ],
        }
    )
    outputs = alertmanager.alertmanager_outputs(plans, receivers)
    assert amtool_problems(outputs) == []


# -- inhibition, proved by a real Alertmanager --------------------------------------------------


@pytest.fixture(scope="module")
def server(plans: list[ServicePlan]) -> Iterator[AlertmanagerServer]:
    binary = find_alertmanager()
    if binary is None:
        pytest.fail("the Alertmanager server is not installed; `make test` installs it")
    with tempfile.TemporaryDirectory(prefix="obsgen-am-") as tmp:
        am = AlertmanagerServer(binary, Path(tmp))
        try:
            am.start(alertmanager.config_text(plans, load_receivers(ROOT)))
            yield am
        finally:
            am.stop()


def _alert(service: str, alertname: str, severity: str, **labels: str) -> dict[str, Any]:
    base = {"namespace": "ns-" + service, "service": service, "team": "ml-platform"}
    return {"labels": {**base, "alertname": alertname, "severity": severity, **labels}}


INHIBITION_CASES: dict[str, tuple[list[dict[str, Any]], set[str]]] = {
    # scenario: (alerts posted, alertnames that must be inhibited; all others active)
    "all targets down holds back the service's symptoms and guards, not its memory alerts": (
        [
            _alert("s1", "ModelTargetDown", "critical", job="s1"),
            _alert("s1", "ModelLatencyP99High", "critical", indicator="e2e"),
            _alert("s1", "ModelErrorRatioHigh", "critical"),
            _alert("s1", "ModelSlowRequestsHigh", "critical", indicator="e2e"),
            _alert("s1", "ErrorBudgetBurn", "critical", slo="availability", burn_rate="14.4"),
            _alert("s1", "ModelQueueDepthHigh", "warning"),
            _alert("s1", "ModelSignalMissing", "warning", signal="requests", metric="x_total"),
            _alert("s1", "ModelReplicasUnavailable", "critical"),
            _alert("s1", "ModelMemoryHeadroomLow", "critical", pod="s1-a", container="m"),
            _alert("s1", "ModelContainerOOMKilled", "warning", pod="s1-a", container="m"),
            _alert("s1", "GPUXidErrors", "critical", pod="s1-a", uuid="GPU-1", xid="79"),
        ],
        {
            "ModelLatencyP99High",
            "ModelErrorRatioHigh",
            "ModelSlowRequestsHigh",
            "ErrorBudgetBurn/availability/14.4",
            "ModelQueueDepthHigh",
            "ModelSignalMissing/requests",
            "ModelReplicasUnavailable",
        },
    ),
    "some targets down (warning) holds nothing back": (
        [
            _alert("s2", "ModelTargetDown", "warning", job="s2", pod="s2-a"),
            _alert("s2", "ModelLatencyP99High", "critical", indicator="e2e"),
            _alert("s2", "ModelErrorRatioHigh", "critical"),
        ],
        set(),
    ),
    "one service's targets down holds back nothing of another service": (
        [
            _alert("s3", "ModelTargetDown", "critical", job="s3"),
            {
                "labels": {
                    **_alert("s4", "ModelLatencyP99High", "critical")["labels"],
                    "namespace": "ns-s3",
                }
            },
        ],
        set(),
    ),
    "a down GPU exporter holds back its own pod's GPU alerts only": (
        [
            _alert("s5", "GPUExporterDown", "warning", pod="s5-a"),
            _alert("s5", "GPUTemperatureHigh", "warning", pod="s5-a", uuid="GPU-1"),
            _alert("s5", "GPUDeviceLost", "critical", pod="s5-a", uuid="GPU-2"),
            _alert("s5", "GPUMemoryHeadroomLow", "warning", pod="s5-b", uuid="GPU-3"),
            _alert("s5", "ModelLatencyP99High", "critical", indicator="e2e"),
        ],
        {"GPUTemperatureHigh", "GPUDeviceLost"},
    ),
    "a critical burn holds back the warning burn of the same SLO, not of another SLO": (
        [
            _alert("s6", "ErrorBudgetBurn", "critical", slo="availability", burn_rate="14.4"),
            _alert("s6", "ErrorBudgetBurn", "warning", slo="availability", burn_rate="3"),
            _alert("s6", "ErrorBudgetBurn", "warning", slo="latency", burn_rate="3"),
        ],
        {"ErrorBudgetBurn/availability/3"},
    ),
    "a fast-burn page holds back the budget-left ticket of its SLO, not of another SLO": (
        [
            _alert("s9", "ErrorBudgetBurn", "critical", slo="availability", burn_rate="14.4"),
            _alert("s9", "ErrorBudgetLow", "warning", slo="availability", budget_left="50"),
            _alert("s9", "ErrorBudgetLow", "warning", slo="latency", budget_left="50"),
            _alert("s9", "ErrorBudgetBurn", "warning", slo="latency", burn_rate="1"),
        ],
        {"ErrorBudgetLow/availability"},
    ),
    "the service's burn page holds back the per-model burns of its SLO, not of another": (
        [
            _alert("s10", "ErrorBudgetBurn", "critical", slo="availability", burn_rate="14.4"),
            _alert(
                "s10",
                "ErrorBudgetBurnByModel",
                "critical",
                slo="availability",
                burn_rate="14.4",
                model_name="m1",
            ),
            _alert(
                "s10",
                "ErrorBudgetBurnByModel",
                "critical",
                slo="latency",
                burn_rate="14.4",
                model_name="m1",
            ),
        ],
        {"ErrorBudgetBurnByModel/availability/14.4"},
    ),
    "a critical guard holds back nothing of another missing signal": (
        [
            _alert("s8", "ModelSignalMissing", "critical", signal="requests", metric="a"),
            _alert("s8", "ModelSignalMissing", "warning", signal="kvCache", metric="b"),
        ],
        set(),
    ),
    "a critical alert holds back nothing of another model (groupBy label)": (
        [
            _alert(
                "s7", "ErrorBudgetBurn", "critical", slo="availability", burn_rate="6", model="a"
            ),
            _alert(
                "s7", "ErrorBudgetBurn", "warning", slo="availability", burn_rate="1", model="b"
            ),
        ],
        set(),
    ),
}


def _key(alert: dict[str, Any]) -> str:
    """``alertname`` plus the SLO and burn rate of a burn alert, or the missing signal."""
    labels = alert["labels"]
    parts = [labels.get(k) for k in ("slo", "burn_rate", "signal") if labels.get(k)]
    return "/".join([labels["alertname"], *parts])


# Seconds the Alertmanager may take to read posted alerts into its inhibitor (a loaded CI
# machine took more than none).
INHIBITOR_READ_S = 20


def _read_by_inhibitor(server: AlertmanagerServer, sentinel: str) -> None:
    """Wait until ``sentinel``'s symptom shows as inhibited. The inhibitor reads the alerts of
    one POST in order, after the POST has returned; the sentinel's ModelTargetDown, posted
    last, is read last, so every source posted with it has been read too."""
    deadline = time.monotonic() + INHIBITOR_READ_S
    while not any(a["status"]["inhibitedBy"] for a in server.alerts(service=sentinel)):
        assert time.monotonic() < deadline, f"the inhibitor did not read {sentinel}'s alerts"
        time.sleep(0.05)


@pytest.mark.parametrize("scenario", list(INHIBITION_CASES))
def test_inhibition_on_a_real_alertmanager(server: AlertmanagerServer, scenario: str) -> None:
    alerts, inhibited = INHIBITION_CASES[scenario]
    sentinel = f"sentinel-{list(INHIBITION_CASES).index(scenario)}"
    server.post_alerts(
        [
            *alerts,
            _alert(sentinel, "ModelErrorRatioHigh", "critical"),
            _alert(sentinel, "ModelTargetDown", "critical", job=sentinel),
        ]
    )
    _read_by_inhibitor(server, sentinel)
    services = {a["labels"]["service"] for a in alerts}
    state = {
        _key(a): bool(a["status"]["inhibitedBy"])
        for service in services
        for a in server.alerts(service=service)
    }
    assert len(state) == len(alerts), state
    assert {k for k, held in state.items() if held} == inhibited


# -- Kubernetes: AlertmanagerConfig ------------------------------------------------------------


class _CrdLoader(yaml.SafeLoader):
    """SafeLoader without the YAML 1.1 ``value`` tag, which a plain ``=`` resolves to (see
    tests/data/schemas/README.md)."""


_CrdLoader.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != "tag:yaml.org,2002:value"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _strict(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


@pytest.mark.parametrize(
    "schema_file",
    [
        "monitoring.coreos.com_alertmanagerconfigs.yaml",
        "v0.65.0/monitoring.coreos.com_alertmanagerconfigs.yaml",
    ],
)
def test_alertmanager_configs_validate_against_the_crd(
    schema_file: str, plans: list[ServicePlan], tmp_path: Path
) -> None:
    crd = yaml.load(data_path("schemas", *schema_file.split("/")).read_text(), Loader=_CrdLoader)
    schema = _strict(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    validator = jsonschema.Draft7Validator(schema)
    every_kind = parse_receivers(yaml.safe_load(EVERY_KIND))
    for receivers in (load_receivers(ROOT), every_kind, None):
        outputs = alertmanager.alertmanager_outputs(plans, receivers)
        objects = [yaml.safe_load(t) for p, t in outputs.items() if p.startswith("manifests/")]
        assert len(objects) == len(plans)
        for obj in objects:
            errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(obj)]
            assert not errors, errors


EVERY_KIND = """
apiVersion: obsgen/v1alpha1
kind: AlertReceivers
default:
  - email: {to: oncall@example.com, from: am@example.com, smarthost: smtp.example.com:587,
            authUsername: am, authPassword: {secret: smtp, key: password}}
teams:
  - name: ml-platform
    page:
      - pagerduty: {routingKey: {secret: pd, key: ml-platform}}
      - opsgenie: {apiKey: {secret: og, key: key}, apiURL: "https://api.eu.opsgenie.com/"}
    ticket:
      - slack: {apiURL: {secret: slack, key: url}, channel: "#ml"}
      - webhook: {url: "https://tickets.example.com/hook", maxAlerts: 20}
"""


def test_every_receiver_kind_passes_amtool(plans: list[ServicePlan]) -> None:
    _amtool()
    receivers = parse_receivers(yaml.safe_load(EVERY_KIND))
    outputs = alertmanager.alertmanager_outputs(plans, receivers)
    assert amtool_problems(outputs) == []
    values = yaml.safe_load(outputs[alertmanager.VALUES_FILE])["alertmanager"]
    assert values["alertmanagerSpec"]["secrets"] == ["og", "pd", "slack", "smtp"]
    text = outputs[alertmanager.CONFIG_FILE]
    assert "routing_key_file: /etc/alertmanager/secrets/pd/ml-platform" in text
    assert "auth_password_file: /etc/alertmanager/secrets/smtp/password" in text


def operator_config(objects: list[dict[str, Any]], base: dict[str, Any]) -> dict[str, Any]:
    """What prometheus-operator makes of ``objects`` merged into ``base`` (pkg/alertmanager
    amcfg.go): per object, its top route gets ``namespace=<ns>`` and ``continue: true`` and
    goes before the base's routes; receiver names get ``<ns>/<name>/``; both sides of each
    inhibit rule get ``namespace=<ns>``."""
    config = copy.deepcopy(base)
    routes = []
    for obj in objects:
        ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        prefix = f"{ns}/{name}/"

        def convert(route: dict[str, Any], top: bool, prefix: str = prefix, ns: str = ns) -> Any:
            out: dict[str, Any] = {"receiver": prefix + route["receiver"]}
            matchers = [f'{m["name"]}{m["matchType"]}"{m["value"]}"' for m in route["matchers"]]
            if top:
                matchers.append(f'namespace="{ns}"')
                out["continue"] = True
                out["group_by"] = route["groupBy"]
            out["matchers"] = matchers
            for key, target in (
                ("groupWait", "group_wait"),
                ("groupInterval", "group_interval"),
                ("repeatInterval", "repeat_interval"),
            ):
                out[target] = route[key]
            if "routes" in route:
                out["routes"] = [convert(r, False) for r in route["routes"]]
            return out

        routes.append(convert(obj["spec"]["route"], True))
        for receiver in obj["spec"]["receivers"]:
            assert set(receiver) == {"name"}, "placeholders only in this test"
            config["receivers"].append({"name": prefix + receiver["name"]})
        for rule in obj["spec"]["inhibitRules"]:
            ns_matcher = [f'namespace="{ns}"']
            config.setdefault("inhibit_rules", []).append(
                {
                    "source_matchers": [
                        f'{m["name"]}{m["matchType"]}"{m["value"]}"' for m in rule["sourceMatch"]
                    ]
                    + ns_matcher,
                    "target_matchers": [
                        f'{m["name"]}{m["matchType"]}"{m["value"]}"' for m in rule["targetMatch"]
                    ]
                    + ns_matcher,
                    "equal": rule["equal"],
                }
            )
    config["route"]["routes"] = routes + config["route"].get("routes", [])
    return config


# kube-prometheus-stack's default configuration (values.yaml, alertmanager.config).
CHART_BASE = {
    "route": {
        "receiver": "null",
        "group_by": ["namespace"],
        "routes": [{"receiver": "null", "matchers": ['alertname="Watchdog"']}],
    },
    "receivers": [{"name": "null"}],
}


def test_alertmanager_configs_route_like_the_standalone_file_once_the_operator_merges_them(
    plans: list[ServicePlan], tmp_path: Path
) -> None:
    """Convert the objects the way prometheus-operator does, over the chart's default config,
    then check every route case with amtool: each alert reaches its team's page or ticket
    receiver of its own namespace's object, and nothing else."""
    _amtool()
    outputs = alertmanager.alertmanager_outputs(plans, None)
    objects = [yaml.safe_load(t) for p, t in outputs.items() if p.startswith("manifests/")]
    path = _write(tmp_path, yaml.safe_dump(operator_config(objects, CHART_BASE)))
    assert amtool.check_config([path], ["operator"]) == []
    cases = []
    for case in route_cases(plans):
        labels = dict(case.labels)
        prefix = f"{labels['namespace']}/{naming.k8s_name(labels['service'])}/"
        cases.append((labels, prefix + case.receiver))
    assert amtool.test_routes(path, "operator", cases) == []


# -- receivers.yaml: placeholders and bad input --------------------------------------------------


def _project(tmp_path: Path, receivers: str | None) -> Path:
    write_spec(tmp_path / "specs", good_spec(), "o1-preview.yaml")
    # The route tests too (amtool's proof is run on the written files below).
    (tmp_path / "obsgen.yaml").write_text("render: {writeTests: true}\n", encoding="utf-8")
    if receivers is not None:
        (tmp_path / "alertmanager").mkdir()
        (tmp_path / RECEIVERS_FILE).write_text(receivers, encoding="utf-8")
    return tmp_path


def _render(root: Path) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stderr(err):
        code = main(["render", "--skip-promtool", "--out", str(root), str(root / "specs")])
    return code, err.getvalue()


def test_without_receivers_every_team_gets_placeholders_and_a_warning(tmp_path: Path) -> None:
    root = _project(tmp_path, None)
    code, err = _render(root)
    assert code == 0, err
    assert "no receivers for team 'ml-platform'" in err
    assert "placeholder receivers ml-platform-page and ml-platform-ticket" in err
    config = yaml.safe_load((root / alertmanager.CONFIG_FILE).read_text())
    assert {"name": "ml-platform-page"} in config["receivers"]
    _amtool()
    outputs = {
        p: (root / p).read_text() for p in (alertmanager.CONFIG_FILE, alertmanager.ROUTE_TESTS_FILE)
    }
    assert amtool_problems(outputs) == []


GOOD_TEAM = (
    "  - name: ml-platform\n"
    "    page: [{pagerduty: {routingKey: {secret: pd, key: ml}}}]\n"
    "    ticket: [{webhook: {url: 'https://tickets.example.com/ml'}}]\n"
)
HEAD = "apiVersion: obsgen/v1alpha1\nkind: AlertReceivers\n"

BAD_RECEIVERS = {
    "team without receivers": (
        HEAD + "teams:\n  - name: ml-platform\n    page: []\n    ticket: []\n",
        [
            "alertmanager/receivers.yaml: teams[0].page: a team without receivers is never reached",
            "alertmanager/receivers.yaml: teams[0].ticket: a team without receivers",
        ],
    ),
    "team with no receiver lists at all": (
        HEAD + "teams:\n  - name: ml-platform\n",
        ["alertmanager/receivers.yaml: teams[0].page: required field is missing"],
    ),
    "receiver URL that is not a URL": (
        HEAD + "teams:\n" + GOOD_TEAM.replace("https://tickets.example.com/ml", "tickets/ml"),
        ["alertmanager/receivers.yaml: teams[0].ticket[0].webhook.url: 'tickets/ml' is not a URL"],
    ),
    "receiver URL of another scheme": (
        HEAD
        + "teams:\n"
        + GOOD_TEAM.replace("https://tickets.example.com/ml", "ftp://tickets.example.com"),
        ["teams[0].ticket[0].webhook.url: 'ftp://tickets.example.com' is not a URL"],
    ),
    "receiver URL with credentials": (
        HEAD + "teams:\n" + GOOD_TEAM.replace("https://tickets", "https://bot:hunter2@tickets"),
        ["teams[0].ticket[0].webhook.url: ", "carries credentials"],
    ),
    "duplicate team routes": (
        HEAD + "teams:\n" + GOOD_TEAM + GOOD_TEAM,
        [
            "alertmanager/receivers.yaml: teams[1].name: team 'ml-platform' is already routed "
            "by teams[0]"
        ],
    ),
    "duplicate key": (
        HEAD + "teams: []\nteams: []\n",
        ["alertmanager/receivers.yaml: line 4: invalid YAML: duplicate key 'teams'"],
    ),
    "two integrations in one receiver": (
        HEAD
        + "teams:\n"
        + GOOD_TEAM.replace(
            "[{pagerduty: {routingKey: {secret: pd, key: ml}}}]",
            "[{pagerduty: {routingKey: {secret: pd, key: ml}}, webhook: {url: 'https://x.io/'}}]",
        ),
        ["teams[0].page[0]: expected exactly one of webhook, pagerduty, slack, opsgenie, email"],
    ),
    "secret name that Kubernetes refuses": (
        HEAD + "teams:\n" + GOOD_TEAM.replace("secret: pd", "secret: PD_Keys"),
        ["teams[0].page[0].pagerduty.routingKey.secret: 'PD_Keys' is not a Kubernetes Secret"],
    ),
    "secret value instead of a reference": (
        HEAD + "teams:\n" + GOOD_TEAM.replace("{secret: pd, key: ml}", "abc123"),
        ["teams[0].page[0].pagerduty.routingKey: expected a mapping"],
    ),
    "unknown field": (
        HEAD + "teams:\n" + GOOD_TEAM.replace("    ticket:", "    tickets: []\n    ticket:"),
        ["teams[0].tickets: unknown field"],
    ),
    "repeat interval shorter than group interval": (
        HEAD + "timing:\n  page: {groupWait: 30s, groupInterval: 1h, repeatInterval: 5m}\n",
        ["timing.page: repeatInterval 5m is shorter than groupInterval 1h"],
    ),
    "another kind of file": (
        "apiVersion: obsgen/v1alpha1\nkind: ModelService\n",
        ["alertmanager/receivers.yaml: not a receivers file"],
    ),
}


@pytest.mark.parametrize("case", list(BAD_RECEIVERS))
def test_bad_receivers_exit_2_and_write_nothing(case: str, tmp_path: Path) -> None:
    text, expected = BAD_RECEIVERS[case]
    root = _project(tmp_path, text)
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    code, err = _render(root)
    assert code == 2, err
    for line in expected:
        assert line in err, err
    assert "Traceback" not in err
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before


def test_unknown_team_in_receivers_warns(tmp_path: Path) -> None:
    root = _project(
        tmp_path, HEAD + "teams:\n" + GOOD_TEAM + GOOD_TEAM.replace("ml-platform", "ml-platfrom")
    )
    code, err = _render(root)
    assert code == 0, err
    assert "teams[1].name: warning: team 'ml-platfrom' owns no spec" in err
    assert "no receivers for team" not in err


# -- runbooks and docs ---------------------------------------------------------------------------


def test_runbooks_say_where_each_alert_routes(
    outputs: dict[str, str], plans: list[ServicePlan]
) -> None:
    for case in route_cases(plans):
        labels = dict(case.labels)
        page = outputs[f"docs/runbooks/{labels['alertname']}.md"]
        row = f"| `{labels['service']}` | `{labels['severity']}` | `{case.receiver}` |"
        assert row in page, (labels["alertname"], row)
    held = outputs["docs/runbooks/ModelLatencyP99High.md"]
    assert "Held back while `ModelTargetDown` (`critical`) fires" in held
    assert "holds back that pod's `GPUDeviceLost`" in outputs["docs/runbooks/GPUExporterDown.md"]
    roles = {Role.RESOURCE: "Never held back"}
    assert roles[Role.RESOURCE] in outputs["docs/runbooks/ModelContainerOOMKilled.md"]


def test_documented_receivers_example_is_valid() -> None:
    text = (ROOT / "docs" / "alerting.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    examples = [b for b in blocks if "kind: AlertReceivers" in b]
    assert examples, "docs/alerting.md has no receivers example"
    for block in examples:
        parse_receivers(yaml.safe_load(block), "docs/alerting.md")


def test_page_and_ticket_receiver_names() -> None:
    assert page_receiver("ml-platform") == "ml-platform-page"
    assert ticket_receiver("ml-platform") == "ml-platform-ticket"
    assert page_receiver("ML Platform") != page_receiver("ml-platform")
    assert re.fullmatch(r"ml-platform-[0-9a-f]{6}-page", page_receiver("ML Platform"))
