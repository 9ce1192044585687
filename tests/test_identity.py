"""Service identity: (cluster label, namespace, service) in every record, alert and query.

Two teams run a service named ``chat`` in namespaces ``team-a`` and ``team-b`` (two
repositories, two renders, one Prometheus): team b's incident must fire once, for team b.
A metric scraped in another namespace must not give its alerts that namespace (the service's
AlertmanagerConfig matches only its own). The scans read every selector of a recorded series
or of ``ALERTS`` in every rendered rule, dashboard query and runbook query.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import promql_parser as P
import pytest
import yaml

from generator import core, naming
from generator.builders.alertmanager_routing import alert_labels
from generator.cli import main
from generator.errors import ObsgenError
from generator.lint import promql
from generator.project_config import CONFIG_FILE, FULL_OUTPUTS
from generator.render import load_plans
from tests.factories import good_spec, set_path, write_spec
from tests.helpers_promtool import assert_ok, run_promtool
from tests.test_cluster_label import rendered_expressions

REPO = Path(__file__).resolve().parent.parent


def _chat(team: str) -> dict[str, Any]:
    """The o1-preview spec as service ``chat`` of ``team``, in namespace ``team``."""
    data = good_spec()
    data["metadata"] = {"name": "chat", "team": team}
    data["spec"]["selector"] = {"namespace": team, "job": "chat"}
    data["spec"]["metrics"]["queueDepth"]["selector"] = {"job": "chat-jobs"}
    return data


def _names_without_identity(
    expr: str, service: str, namespace: str, records: frozenset[str]
) -> list[str]:
    """Selectors in ``expr`` of a recorded series (a name in ``records``) or of ``ALERTS``
    that do not fix both ``service`` and ``namespace`` by equality."""
    found = []
    for node, _ in promql.walk(promql.parse(expr)):
        if not isinstance(node, P.VectorSelector) or node.name is None:
            continue
        if node.name not in records and node.name != "ALERTS":
            continue
        fixed = {
            (m.name, m.value) for m in node.matchers.matchers if str(m.op) in ("=", "MatchOp.Equal")
        }
        if not {("service", service), ("namespace", namespace)} <= fixed:
            found.append(str(node))
    return found


def test_the_scan_finds_a_selector_by_service_alone() -> None:
    expr = 'a:b:c{service="chat"} > 1 and on (namespace) ALERTS{namespace="x",service="chat"}'
    assert _names_without_identity(expr, "chat", "x", frozenset({"a:b:c"})) == [
        'a:b:c{service="chat"}'
    ]


@pytest.fixture(scope="module")
def spec_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every committed and e2e spec with a namespace, rendered together."""
    paths = [
        p
        for p in [
            *sorted((REPO / "specs").glob("*.yaml")),
            *sorted((REPO / "tests/e2e/specs").glob("*.yaml")),
        ]
        if yaml.safe_load(p.read_text())["spec"]["selector"].get("namespace")
    ]
    return core.build(load_plans(paths, REPO))


def _identities(outputs: dict[str, str]) -> dict[str, str]:
    """``{service: namespace}`` from the rendered rule files."""
    found = {}
    for path, text in outputs.items():
        if path.startswith("rules/") and path.endswith(".rules.yaml"):
            rule = yaml.safe_load(text)["groups"][0]["rules"][0]
            found[rule["labels"]["service"]] = rule["labels"]["namespace"]
    return found


def test_every_query_of_a_service_fixes_its_namespace_and_name(
    spec_outputs: dict[str, str],
) -> None:
    identities = _identities(spec_outputs)
    assert len(identities) >= 4, identities
    records = frozenset(
        rule["record"]
        for path, text in spec_outputs.items()
        if path.endswith(".rules.yaml")
        for group in yaml.safe_load(text)["groups"]
        for rule in group["rules"]
        if "record" in rule
    )
    problems, seen = [], 0
    for where, expr in rendered_expressions(spec_outputs):
        owner = next(
            (s for s in identities if f"/{s}." in where or f"/{s}/" in where or f" {s}" in where),
            None,
        )
        if owner is None or "fleet-overview" in where:
            continue
        seen += 1
        problems += [
            f"{where}: {s}"
            for s in _names_without_identity(expr, owner, identities[owner], records)
        ]
    assert not problems, "\n".join(problems)
    assert seen > 300


def test_every_record_and_alert_carries_the_service_namespace(
    spec_outputs: dict[str, str],
) -> None:
    identities = _identities(spec_outputs)
    for path, text in spec_outputs.items():
        if not (path.startswith("rules/") and path.endswith(".rules.yaml")):
            continue
        for group in yaml.safe_load(text)["groups"]:
            for rule in group["rules"]:
                service = rule["labels"]["service"]
                assert rule["labels"]["namespace"] == identities[service], (path, rule)


def test_the_fleet_overview_keeps_two_services_of_one_name_apart(
    spec_outputs: dict[str, str],
) -> None:
    board = json.loads(spec_outputs["dashboards/fleet-overview.json"])
    table = next(p for p in board["panels"] if p.get("type") == "table")
    for target in table["targets"][1:]:
        assert "on (namespace, service)" in target["expr"], target["expr"]
    assert "count by (namespace, service)" in table["targets"][-1]["expr"]


def _render(root: Path, *specs: dict[str, Any]) -> int:
    """``obsgen render --skip-promtool`` of ``specs`` as ``specs/<i>.yaml`` in ``root``."""
    for i, data in enumerate(specs):
        write_spec(root / "specs", data, f"s{i}.yaml")
    # Every install path: the names of each are what is asserted.
    (root / CONFIG_FILE).write_text(f"render: {{outputs: [{', '.join(FULL_OUTPUTS)}]}}\n")
    return main(["render", "--skip-promtool", "--quiet", "--out", str(root), str(root / "specs")])


def _files(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not p.relative_to(root).as_posix().startswith(("specs/", "."))
    }


@pytest.fixture(scope="module")
def two_chats(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One repository holding ``chat`` of team-a and ``chat`` of team-b, rendered."""
    root = tmp_path_factory.mktemp("two-chats")
    assert _render(root, _chat("team-a"), _chat("team-b")) == 0
    return root


def test_one_render_holds_two_services_of_one_name(two_chats: Path) -> None:
    files = _files(two_chats)
    for stem in ("chat--team-a", "chat--team-b"):
        assert f"rules/{stem}.rules.yaml" in files
        assert f"dashboards/{stem}.json" in files
        assert f"helm/values-{stem}.yaml" in files
        assert f"manifests/{stem}/prometheusrule.yaml" in files
        assert f"docs/runbooks/{stem}/ModelLatencyP99High.md" in files
    assert not [f for f in files if "/chat." in f or "/chat/" in f or f.endswith("-chat.yaml")]
    uids, titles, groups, objects = set(), set(), set(), set()
    for team in ("team-a", "team-b"):
        stem = f"chat--{team}"
        board = json.loads((two_chats / f"dashboards/{stem}.json").read_text())
        assert board["uid"] == naming.dashboard_uid("chat", team)
        assert len(board["uid"]) <= naming.UID_MAX
        uids.add(board["uid"])
        titles.add(board["title"])
        rules = yaml.safe_load((two_chats / f"rules/{stem}.rules.yaml").read_text())
        groups.update(g["name"] for g in rules["groups"])
        for rule in (r for g in rules["groups"] for r in g["rules"] if "alert" in r):
            assert rule["labels"]["service"] == "chat"
            assert rule["labels"]["namespace"] == team
            page = rule["annotations"]["runbook_url"]
            assert page.startswith(f"docs/runbooks/{stem}/"), page
            assert (two_chats / page).is_file(), page
            assert board["uid"] in rule["annotations"]["dashboard_url"]
        for kind in ("prometheusrule", "dashboard", "alertmanagerconfig"):
            obj = yaml.safe_load((two_chats / f"manifests/{stem}/{kind}.yaml").read_text())
            assert obj["metadata"]["namespace"] == team
            objects.add((obj["kind"], obj["metadata"]["name"]))
        values = yaml.safe_load((two_chats / f"helm/values-{stem}.yaml").read_text())
        assert list(values["additionalPrometheusRulesMap"]) == [naming.k8s_name(stem)]
    assert len(uids) == 2 and len(titles) == 2
    assert len(groups) == 2 * len(rules["groups"])
    assert len(objects) == 6
    # The page of every service links each to its own folder.
    shared = (two_chats / "docs/runbooks/ModelLatencyP99High.md").read_text()
    assert "(chat--team-a/ModelLatencyP99High.md)" in shared
    assert "(chat--team-b/ModelLatencyP99High.md)" in shared
    # Each team's alerts route to its own receivers.
    cases = yaml.safe_load((two_chats / "alertmanager/routes.test.yaml").read_text())["cases"]
    for case in cases:
        assert case["receiver"].startswith(case["labels"]["namespace"] + "-"), case


def test_rendering_one_spec_file_names_its_files_as_the_full_render(
    two_chats: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``obsgen render specs/s0.yaml`` reads the names in specs/: it writes chat--team-a's
    files, byte for byte the full render's, never a ``chat`` the next full render removes."""
    for i, data in enumerate((_chat("team-a"), _chat("team-b"))):
        write_spec(tmp_path / "specs", data, f"s{i}.yaml")
    (tmp_path / CONFIG_FILE).write_text(f"render: {{outputs: [{', '.join(FULL_OUTPUTS)}]}}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["render", "--skip-promtool", "--quiet", "specs/s0.yaml"]) == 0
    files = _files(tmp_path)
    assert "rules/chat--team-a.rules.yaml" in files
    assert not [f for f in files if "team-b" in f or "/chat." in f or "/chat/" in f]
    for rel in ("rules/chat--team-a.rules.yaml", "helm/values-chat--team-a.yaml"):
        assert (tmp_path / rel).read_bytes() == (two_chats / rel).read_bytes(), rel


def test_a_name_no_other_spec_shares_keeps_its_files_and_uid(tmp_path: Path) -> None:
    """Existing single-namespace repositories: the names and uids of before (a contract)."""
    assert _render(tmp_path, _chat("team-a")) == 0
    files = _files(tmp_path)
    assert {"rules/chat.rules.yaml", "dashboards/chat.json", "helm/values-chat.yaml"} <= files
    assert "manifests/chat/prometheusrule.yaml" in files
    assert not [f for f in files if "--" in f]
    board = json.loads((tmp_path / "dashboards/chat.json").read_text())
    assert board["uid"] == "obsgen-chat-team-a-ad6d0a74"
    rules = yaml.safe_load((tmp_path / "rules/chat.rules.yaml").read_text())
    assert rules["groups"][0]["name"].startswith("obsgen.chat.")


def test_one_name_twice_in_one_namespace_is_refused(tmp_path: Path) -> None:
    a = write_spec(tmp_path, _chat("team-a"), "a.yaml")
    b = write_spec(tmp_path, _chat("team-a"), "b.yaml")
    with pytest.raises(ObsgenError) as err:
        load_plans([a, b], REPO)
    assert "service 'chat' in namespace 'team-a' is already defined in" in str(err.value)


def test_a_shared_name_without_a_namespace_is_refused(tmp_path: Path) -> None:
    """Told apart by the ``service`` label alone, it would read the other's records."""
    bare = _chat("team-b")
    del bare["spec"]["selector"]["namespace"]
    a = write_spec(tmp_path, _chat("team-a"), "a.yaml")
    b = write_spec(tmp_path, bare, "b.yaml")
    with pytest.raises(ObsgenError) as err:
        load_plans([a, b], REPO)
    assert f"{b}: spec.selector.namespace: not set, and another spec's service is named" in str(
        err.value
    )
    assert str(a) not in str(err.value)


def test_a_shared_name_too_long_with_its_namespace_is_refused(tmp_path: Path) -> None:
    """``<name>--<namespace>`` names Kubernetes objects and folders: at most 63 characters."""
    name, team = "c" * 40, "t" * 30
    paths = [
        write_spec(tmp_path, set_path(_chat(ns), "metadata.name", name), f"{ns}.yaml")
        for ns in (team, "team-b")
    ]
    with pytest.raises(ObsgenError) as err:
        load_plans(paths, REPO)
    assert f"{tmp_path / (team + '.yaml')}: metadata.name:" in str(err.value)
    assert "longer than 63 characters" in str(err.value)


def test_a_name_that_is_another_services_stem_is_refused(tmp_path: Path) -> None:
    other = set_path(_chat("team-a"), "metadata.name", "chat--team-a")
    other["spec"]["selector"]["namespace"] = "team-c"
    paths = [
        write_spec(tmp_path, data, f"{i}.yaml")
        for i, data in enumerate([_chat("team-a"), _chat("team-b"), other])
    ]
    with pytest.raises(ObsgenError) as err:
        load_plans(paths, REPO)
    assert "files named 'chat--team-a' are already those of" in str(err.value)
    assert "metadata.name" in str(err.value)


def _rules_of(data: dict[str, Any], out: Path) -> Path:
    outputs = core.build(load_plans([write_spec(out, data, "chat.yaml")], REPO))
    path = out / "chat.rules.yaml"
    path.write_text(outputs["rules/chat.rules.yaml"], encoding="utf-8")
    return path


def _latency_series(namespace: str, slow: bool) -> list[dict[str, str]]:
    """An hour of 1 req/s in ``namespace``: all slower than 60s (``slow``) or all under 0.1s."""
    base = f'job="chat",namespace="{namespace}",instance="10.0.0.1:8000"'
    out = [{"series": f"up{{{base}}}", "values": "1x60"}]
    for le in ("0.1", "0.25", "0.5", "1", "2.5", "5", "10", "20", "30", "60", "120", "+Inf"):
        count = "0+0x60" if slow and le != "+Inf" else "0+60x60"
        out.append(
            {
                "series": f'http_request_duration_seconds_bucket{{{base},le="{le}"}}',
                "values": count,
            }
        )
    out.append({"series": f"http_request_duration_seconds_count{{{base}}}", "values": "0+60x60"})
    return out


def _alert_series(alert: str, labels: dict[str, str]) -> str:
    """The ``ALERTS`` series of ``alert`` firing with ``labels``."""
    inner = {"alertname": alert, "alertstate": "firing", **labels}
    return "ALERTS{" + ",".join(f'{k}="{v}"' for k, v in sorted(inner.items())) + "}"


def test_one_render_of_one_name_fires_once_for_the_right_team(
    two_chats: Path, tmp_path: Path
) -> None:
    a = two_chats / "rules/chat--team-a.rules.yaml"
    b = two_chats / "rules/chat--team-b.rules.yaml"
    labels = {
        "indicator": "e2e",
        "quantile": "0.99",
        "namespace": "team-b",
        "service": "chat",
        "severity": "critical",
        "team": "team-b",
    }
    test = {
        "rule_files": [str(a), str(b)],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    *_latency_series("team-a", slow=False),
                    *_latency_series("team-b", slow=True),
                ],
                "promql_expr_test": [
                    {
                        "expr": 'ALERTS{alertname="ModelLatencyP99High",alertstate="firing"}',
                        "eval_time": "30m",
                        "exp_samples": [
                            {"labels": _alert_series("ModelLatencyP99High", labels), "value": 1}
                        ],
                    },
                    {
                        "expr": 'count by (namespace) (service:fleet_latency_p99_seconds:max{service="chat"})',
                        "eval_time": "30m",
                        "exp_samples": [
                            {"labels": '{namespace="team-a"}', "value": 1},
                            {"labels": '{namespace="team-b"}', "value": 1},
                        ],
                    },
                ],
            }
        ],
    }
    path = tmp_path / "two-teams.test.yaml"
    path.write_text(yaml.safe_dump(test, sort_keys=False), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", path), ["two teams"])


def test_an_alert_on_a_metric_scraped_elsewhere_carries_the_service_namespace(
    tmp_path: Path,
) -> None:
    data = set_path(
        good_spec(), "spec.metrics.queueDepth.selector", {"namespace": "queue-system", "job": "q"}
    )
    plan = load_plans([write_spec(tmp_path, data)], REPO)[0]
    queue = [lb for lb in alert_labels(plan) if lb["alertname"] == "ModelQueueDepthHigh"]
    assert queue and all(lb["namespace"] == "ai-inference" for lb in queue), queue
    rules = _rules_of(set_path(data, "metadata.name", "chat"), tmp_path)
    fired = {"namespace": "ai-inference", "service": "chat", "severity": "warning"}
    fired["team"] = "ml-platform"
    test = {
        "rule_files": [str(rules)],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {
                        "series": 'inference_queue_depth{job="q",namespace="queue-system",pod="q-0"}',
                        "values": "500x30",
                    }
                ],
                "promql_expr_test": [
                    {
                        "expr": 'ALERTS{alertname="ModelQueueDepthHigh",alertstate="firing"}',
                        "eval_time": "20m",
                        "exp_samples": [
                            {"labels": _alert_series("ModelQueueDepthHigh", fired), "value": 1}
                        ],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "queue.test.yaml"
    path.write_text(yaml.safe_dump(test, sort_keys=False), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", path), ["queue elsewhere"])


def test_route_cases_carry_the_namespace_of_the_alertmanager_config(
    spec_outputs: dict[str, str],
) -> None:
    cases = yaml.safe_load(spec_outputs["alertmanager/routes.test.yaml"])["cases"]
    for path, text in spec_outputs.items():
        if not path.endswith("/alertmanagerconfig.yaml"):
            continue
        config = yaml.safe_load(text)
        service = config["metadata"]["labels"]["obsgen/service"]
        own = [c["labels"] for c in cases if c["labels"]["service"] == service]
        assert own, service
        # The operator adds namespace=<metadata.namespace> to the route: every alert must hold it.
        assert {c["namespace"] for c in own} == {config["metadata"]["namespace"]}, service
