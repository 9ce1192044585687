"""Alertmanager 0.35's UTF-8 matcher parser, strict (``--enable-feature=utf8-strict-mode``), on
every generated configuration: alertmanager/alertmanager.yaml of the repository's specs and of
specs whose teams use the letters of any language and every punctuation a team name may hold,
and what prometheus-operator makes of the generated AlertmanagerConfig objects. Each loads in
amtool and in a running Alertmanager; every route case, its alert carrying values with spaces,
``=``, ``"``, ``,``, ``{``, ``\\`` and UTF-8, reaches its receiver in ``amtool config routes
test`` and as a real alert; real alerts are held back exactly as the generated inhibit rules
say. A matcher only the classic parser reads is refused, so the strict parser is the one at
work."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import amtool, core, naming
from generator.builders import alertmanager
from generator.builders.alertmanager_routing import (
    InhibitRule,
    cluster_labels,
    group_by_labels,
    inhibit_rules,
    page_receiver,
    route_cases,
    ticket_receiver,
)
from generator.plan import ServicePlan
from generator.promql import Matcher
from generator.receivers import ReceiversConfig, load_receivers, parse_receivers
from generator.render import find_specs, load_plans
from tests.alertmanager_server import AlertmanagerServer, WebhookRecorder, find_alertmanager
from tests.e2e.e2e_clock import (
    GROUP_INTERVAL_S,
    GROUP_WAIT_S,
    POLL_S,
    bound,
)
from tests.e2e.e2e_prometheus import hold, seconds, wait_for
from tests.factories import good_spec, set_path, write_spec

ROOT = Path(__file__).resolve().parents[1]
STRICT = ("utf8-strict-mode",)
TEAMS = ("Équipe ML, Paris (GPU) / 日本 + ops.v2-x_y", "ML Platform")
"""Team names using every character class a team name may hold (spec.md: letters of any
language, digits, spaces and ``_ . , / ( ) + -``); they reach route matchers."""
VALUE = 'meta/llama-3 {70b}, "q=4" \\ é 日本 a!~b}'
"""A label value alerts carry (``groupBy`` and cluster labels are compared by inhibit rules):
spaces, ``=``, ``"``, ``,``, ``{``, ``}``, ``\\``, ``!``, ``~`` and UTF-8."""
NOTIFY_S = bound(GROUP_WAIT_S + GROUP_INTERVAL_S + POLL_S)
"""Bound for a posted alert to reach its webhook."""
SETTLE_S = GROUP_WAIT_S + 2 * GROUP_INTERVAL_S + POLL_S
"""Seconds to keep watching once every alert was notified: a second notification arrives."""


def _am() -> str:
    found = find_alertmanager()
    assert found, "alertmanager not on PATH: run `make tools`"
    return found


@pytest.fixture(scope="module")
def webhook() -> Iterator[WebhookRecorder]:
    recorder = WebhookRecorder()
    recorder.start()
    yield recorder
    recorder.stop()


def _receivers(webhook: WebhookRecorder) -> ReceiversConfig:
    """Every team's page and ticket receiver a webhook of the recorder (its path the receiver
    name), notified at once."""
    fast = {
        "groupWait": seconds(GROUP_WAIT_S),
        "groupInterval": seconds(GROUP_INTERVAL_S),
        "repeatInterval": "1h",
    }
    return parse_receivers(
        {
            "apiVersion": "obsgen/v1alpha1",
            "kind": "AlertReceivers",
            "timing": {"page": fast, "ticket": fast},
            "default": [{"webhook": {"url": webhook.url("obsgen-default")}}],
            "teams": [
                {
                    "name": team,
                    "page": [{"webhook": {"url": webhook.url(page_receiver(team))}}],
                    "ticket": [{"webhook": {"url": webhook.url(ticket_receiver(team))}}],
                }
                for team in TEAMS
            ],
        }
    )


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> list[ServicePlan]:
    """Two services of the two teams: one per model (``groupBy: [model_name]``), one per
    cluster (``clusterLabel: cluster``)."""
    folder = tmp_path_factory.mktemp("utf8-specs")
    per_model = set_path(set_path(good_spec(), "metadata.name", "svc-a"), "metadata.team", TEAMS[0])
    per_model["spec"]["groupBy"] = ["model_name"]
    clustered = set_path(set_path(good_spec(), "metadata.name", "svc-b"), "metadata.team", TEAMS[1])
    set_path(clustered, "spec.prometheus.clusterLabel", "cluster")
    paths = [write_spec(folder, per_model, "a.yaml"), write_spec(folder, clustered, "b.yaml")]
    return load_plans(paths, folder)


def _cases(plans: Sequence[ServicePlan]) -> list[tuple[dict[str, str], str]]:
    """Every route case of ``plans``, its alert also carrying :data:`VALUE` in the labels
    inhibit rules compare (``model_name``, ``cluster``) and in a label nothing reads."""
    extra = {"model_name": VALUE, "cluster": VALUE, "instance": VALUE}
    return [({**dict(c.labels), **extra}, c.receiver) for c in route_cases(plans)]


def _am_matcher(m: Mapping[str, str]) -> str:
    """A CRD matcher as prometheus-operator writes it into the configuration (Alertmanager's
    ``labels.Matcher.String``: the value quoted, ``\\``, newline and ``"`` escaped)."""
    value = m["value"].replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return f'{m["name"]}{m["matchType"]}"{value}"'


def operator_config(outputs: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """What prometheus-operator makes of the generated AlertmanagerConfig objects over an empty
    base (pkg/alertmanager amcfg.go): per object, its route gets ``namespace=<ns>`` and
    ``continue: true``, receiver names ``<ns>/<name>/``, each inhibit rule's sides
    ``namespace=<ns>``. Returns the configuration and each plain receiver name's prefixed
    one."""
    config: dict[str, Any] = {
        "route": {"receiver": "null", "routes": []},
        "receivers": [{"name": "null"}],
        "inhibit_rules": [],
    }
    renamed: dict[str, str] = {}
    objects = [yaml.safe_load(t) for p, t in sorted(outputs.items()) if p.startswith("manifests/")]
    assert objects, "no AlertmanagerConfig rendered"
    for obj in objects:
        ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        prefix = f"{ns}/{name}/"

        def convert(route: dict[str, Any], top: bool, prefix: str = prefix, ns: str = ns) -> Any:
            out: dict[str, Any] = {"receiver": prefix + route["receiver"]}
            matchers = [_am_matcher(m) for m in route.get("matchers", [])]
            if top:
                matchers.append(_am_matcher({"name": "namespace", "matchType": "=", "value": ns}))
                out["continue"] = True
                out["group_by"] = route["groupBy"]
            out["matchers"] = matchers
            if "routes" in route:
                out["routes"] = [convert(r, False) for r in route["routes"]]
            return out

        config["route"]["routes"].append(convert(obj["spec"]["route"], True))
        for receiver in obj["spec"]["receivers"]:
            renamed[receiver["name"]] = prefix + receiver["name"]
            config["receivers"].append({"name": prefix + receiver["name"]})
        ns_matcher = _am_matcher({"name": "namespace", "matchType": "=", "value": ns})
        for rule in obj["spec"]["inhibitRules"]:
            config["inhibit_rules"].append(
                {
                    "source_matchers": [_am_matcher(m) for m in rule["sourceMatch"]] + [ns_matcher],
                    "target_matchers": [_am_matcher(m) for m in rule["targetMatch"]] + [ns_matcher],
                    "equal": rule["equal"],
                }
            )
    return config, renamed


def _configs(plans: list[ServicePlan], webhook: WebhookRecorder) -> dict[str, str]:
    """Every generated Alertmanager configuration, by what it is."""
    repository = load_plans(find_specs([], ROOT), ROOT)
    rendered = core.build(repository, receivers=load_receivers(ROOT))
    hostile = alertmanager.alertmanager_outputs(plans, _receivers(webhook))
    return {
        "alertmanager.yaml of the repository's specs": rendered[alertmanager.CONFIG_FILE],
        "alertmanager.yaml of teams in any language": hostile[alertmanager.CONFIG_FILE],
        "AlertmanagerConfig objects of the repository's specs, merged by the operator": yaml.dump(
            operator_config(alertmanager.alertmanager_outputs(repository))[0]
        ),
        "AlertmanagerConfig objects of teams in any language, merged by the operator": yaml.dump(
            operator_config(alertmanager.alertmanager_outputs(plans))[0], allow_unicode=True
        ),
    }


CONFIGS = (
    "alertmanager.yaml of the repository's specs",
    "alertmanager.yaml of teams in any language",
    "AlertmanagerConfig objects of the repository's specs, merged by the operator",
    "AlertmanagerConfig objects of teams in any language, merged by the operator",
)


@pytest.mark.parametrize("which", CONFIGS)
def test_every_generated_configuration_loads_with_the_strict_utf8_parser(
    which: str, plans: list[ServicePlan], webhook: WebhookRecorder, tmp_path: Path
) -> None:
    text = _configs(plans, webhook)[which]
    path = tmp_path / "alertmanager.yaml"
    path.write_text(text, encoding="utf-8")
    assert amtool.check_config([path], [which], STRICT) == []
    server = AlertmanagerServer(_am(), tmp_path)
    try:
        server.start(text, STRICT)  # raises when the configuration is refused
    finally:
        server.stop()
    assert "UTF-8 strict mode enabled" in server.log()


def test_a_matcher_only_the_classic_parser_reads_is_refused(tmp_path: Path) -> None:
    text = yaml.safe_dump(
        {
            "route": {"receiver": "r", "routes": [{"receiver": "r", "matchers": ["team=ML Ops"]}]},
            "receivers": [{"name": "r"}],
        }
    )
    path = tmp_path / "alertmanager.yaml"
    path.write_text(text, encoding="utf-8")
    assert amtool.check_config([path], ["classic"]) == []  # the default falls back
    refused = amtool.check_config([path], ["classic"], STRICT)
    assert refused and "unexpected Ops" in refused[0].message, refused
    with pytest.raises(RuntimeError, match="did not become ready"):
        AlertmanagerServer(_am(), tmp_path).start(text, STRICT)


@pytest.mark.parametrize("operator", [False, True], ids=["alertmanager.yaml", "operator"])
def test_every_route_case_reaches_its_receiver_in_strict_amtool(
    operator: bool, plans: list[ServicePlan], webhook: WebhookRecorder, tmp_path: Path
) -> None:
    cases = _cases(plans)
    if operator:
        config, renamed = operator_config(alertmanager.alertmanager_outputs(plans))
        text = yaml.dump(config, allow_unicode=True)
        cases = [(labels, renamed[receiver]) for labels, receiver in cases]
    else:
        text = alertmanager.alertmanager_outputs(plans, _receivers(webhook))[
            alertmanager.CONFIG_FILE
        ]
    path = tmp_path / "alertmanager.yaml"
    path.write_text(text, encoding="utf-8")
    assert {receiver for _, receiver in cases} >= {
        renamed[page_receiver(t)] if operator else page_receiver(t) for t in TEAMS
    }
    assert amtool.test_routes(path, "routes", cases, features=STRICT) == []
    # and reach another receiver when a label the tree reads is off by one character
    read = naming.SERVICE if operator else naming.TEAM
    wrong = [({**labels, read: labels[read] + "."}, receiver) for labels, receiver in cases]
    assert len(amtool.test_routes(path, "routes", wrong[:4], features=STRICT)) == 4


def test_the_repositorys_route_tests_pass_with_the_strict_utf8_parser(tmp_path: Path) -> None:
    outputs = core.build(load_plans(find_specs([], ROOT), ROOT), receivers=load_receivers(ROOT))
    path = tmp_path / "alertmanager.yaml"
    path.write_text(outputs[alertmanager.CONFIG_FILE], encoding="utf-8")
    cases = yaml.safe_load(outputs[alertmanager.ROUTE_TESTS_FILE])["cases"]
    pairs = [(c["labels"], c["receiver"]) for c in cases]
    assert amtool.test_routes(path, "routes.test.yaml", pairs, features=STRICT) == []


@pytest.fixture(scope="module")
def strict_alertmanager(
    plans: list[ServicePlan], webhook: WebhookRecorder
) -> Iterator[AlertmanagerServer]:
    """A strict-mode Alertmanager running the teams' generated configuration, without its
    inhibit rules (routing alone: a critical case holds back its warning twin)."""
    config = yaml.safe_load(
        alertmanager.alertmanager_outputs(plans, _receivers(webhook))[alertmanager.CONFIG_FILE]
    )
    config.pop("inhibit_rules")
    with tempfile.TemporaryDirectory(prefix="obsgen-am-utf8-") as tmp:
        server = AlertmanagerServer(_am(), Path(tmp))
        try:
            server.start(yaml.dump(config, allow_unicode=True), STRICT)
            yield server
        finally:
            server.stop()


def test_real_alerts_reach_the_receivers_the_route_cases_name(
    strict_alertmanager: AlertmanagerServer, plans: list[ServicePlan], webhook: WebhookRecorder
) -> None:
    cases = _cases(plans)
    strict_alertmanager.post_alerts([{"labels": labels} for labels, _ in cases])

    def reached() -> list[set[str]]:
        got: list[set[str]] = [set() for _ in cases]
        for note in webhook.received():
            for alert in note.alerts:
                for i, (labels, _) in enumerate(cases):
                    if alert["labels"] == labels:
                        got[i].add(note.receiver)
        return got

    wait_for("every case notified", reached, lambda got: all(got), NOTIFY_S)
    hold(
        "each case at its own receiver only",
        reached,
        lambda got: all(r == {c[1]} for r, c in zip(got, cases, strict=True)),
        SETTLE_S,
    )


def _satisfies(matchers: Sequence[Matcher], labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` match every matcher (``=``, ``=~`` anchored, as Alertmanager)."""
    for m in matchers:
        value = labels.get(m.label, "")
        ok = value == m.value if m.op == "=" else re.fullmatch(m.value, value) is not None
        if not ok:
            return False
    return True


def _expected_inhibited(rules: Sequence[InhibitRule], alerts: Sequence[dict[str, str]]) -> set[int]:
    """Indexes of ``alerts`` the generated ``rules`` hold back (Alertmanager's semantics: a
    target with a source whose ``equal`` labels have its values, a label both lack counting
    as equal; an alert on both sides of a rule is held back only by a source on one side)."""
    held = set()
    for t, target in enumerate(alerts):
        for rule in rules:
            if not _satisfies(rule.target, target):
                continue
            two_sided = _satisfies(rule.source, target)
            if any(
                s != t
                and _satisfies(rule.source, source)
                and not (two_sided and _satisfies(rule.target, source))
                and all(source.get(k, "") == target.get(k, "") for k in rule.equal)
                for s, source in enumerate(alerts)
            ):
                held.add(t)
    return held


def _side(matchers: Sequence[Matcher]) -> dict[str, str]:
    """Labels that satisfy ``matchers`` (a regex of alternatives: its first one)."""
    return {m.label: m.value.split("|")[0] if m.op == "=~" else m.value for m in matchers}


def test_real_alerts_are_held_back_as_the_generated_inhibit_rules_say(
    plans: list[ServicePlan], webhook: WebhookRecorder, tmp_path: Path
) -> None:
    rules = inhibit_rules(group_by_labels(plans), cluster_labels=cluster_labels(plans))
    alerts: list[dict[str, str]] = []
    for i, rule in enumerate(rules):
        shared = {k: f"{VALUE} {k} {i}" for k in rule.equal} | {naming.TEAM: TEAMS[0]}
        source = {**shared, **_side(rule.source)}
        target = {**shared, **_side(rule.target)}
        # the same pair with the target's last equal label off by one character
        off = {**target, rule.equal[-1]: target[rule.equal[-1]] + "}"}
        alerts += [source, target, {**off, naming.TEAM: TEAMS[1]}]
    expected = _expected_inhibited(rules, alerts)
    assert expected and len(expected) < len(alerts), expected
    sentinel = {naming.SERVICE: "sentinel", "namespace": VALUE}
    sentinels = [
        {**sentinel, "alertname": naming.ALERT_TARGET_DOWN, naming.SEVERITY: "critical"},
        {**sentinel, "alertname": naming.ALERT_ERROR_RATIO, naming.SEVERITY: "critical"},
    ]
    assert _expected_inhibited(rules, sentinels) == {1}
    text = alertmanager.alertmanager_outputs(plans, _receivers(webhook))[alertmanager.CONFIG_FILE]
    server = AlertmanagerServer(_am(), tmp_path)
    try:
        server.start(text, STRICT)
        server.post_alerts([{"labels": a} for a in alerts])
        server.post_alerts([{"labels": a} for a in sentinels])
        wait_for(
            "the inhibitor to read the sentinel",
            lambda: [a["status"]["inhibitedBy"] for a in server.alerts(service="sentinel")],
            lambda held: any(held),
            NOTIFY_S,
        )
        state = {
            tuple(sorted(a["labels"].items())): bool(a["status"]["inhibitedBy"])
            for a in server.alerts()
        }
    finally:
        server.stop()
    got = {i for i, a in enumerate(alerts) if state[tuple(sorted(a.items()))]}
    assert got == expected, (sorted(got - expected), sorted(expected - got))
