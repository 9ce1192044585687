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

from generator.builders.alertmanager_routing import alert_labels
from generator.errors import ObsgenError
from generator.lint import promql
from generator.render import build_outputs, load_plans
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
    return build_outputs(load_plans(paths, REPO))


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


def test_one_render_refuses_two_services_of_one_name(tmp_path: Path) -> None:
    a = write_spec(tmp_path, _chat("team-a"), "a.yaml")
    b = write_spec(tmp_path, _chat("team-b"), "b.yaml")
    with pytest.raises(ObsgenError) as err:
        load_plans([a, b], REPO)
    assert "service 'chat' is already defined in" in str(err.value)


def _rules_of(data: dict[str, Any], out: Path) -> Path:
    outputs = build_outputs(load_plans([write_spec(out, data, "chat.yaml")], REPO))
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


def test_two_renders_of_one_name_fire_once_for_the_right_team(tmp_path: Path) -> None:
    a = _rules_of(_chat("team-a"), tmp_path / "a")
    b = _rules_of(_chat("team-b"), tmp_path / "b")
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
