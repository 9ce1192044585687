"""``spec.prometheus.clusterLabel``: every rendered expression keeps the cluster label.

A multi-cluster engine (Thanos, Mimir, VictoriaMetrics) evaluates one rule over every cluster's
series; an aggregation or join that drops the cluster label adds up or matches series of
different clusters. These tests parse every expression a clusterLabel spec renders — rules,
dashboard queries and variables, runbook queries — with the PromQL parser the linter uses, and
fail on any ``by``/``on`` clause without the label, any ``without``/``ignoring`` clause with it,
and any aggregation with no clause at all. Unset, the outputs are byte for byte those of a spec
without the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import promql_parser as P
import pytest
import yaml

from generator import amtool, core, promtool
from generator.builders.alertmanager import CONFIG_FILE
from generator.errors import ObsgenError
from generator.lint import promql
from generator.plan import ServicePlan, resolve
from generator.proof_split import split_test_file
from generator.render import load_plans
from generator.spec import parse_spec
from tests.e2e.e2e_scenarios import dashboard_queries
from tests.factories import good_spec, set_path, write_spec
from tests.promql_checks import is_label_less_filter

REPO = Path(__file__).resolve().parent.parent
CLUSTER = "cluster"

ABSENT_OK = "absent"
"""``absent()`` answers for the whole selector: its series carries no cluster label. obsgen uses
it only as an ``or`` branch for "no target of this service exists anywhere"
(docs/scale-out.md says what that means across clusters)."""
HEATMAP = "heatmap"
"""A latency heatmap is a distribution: its query adds the buckets of the clusters the
``cluster`` variable selects (``sum by (le)``, or ``sum`` of a native histogram), which is
their combined distribution. The one kind of query allowed to aggregate over clusters."""


def _spec_files() -> list[Path]:
    return [
        *sorted((REPO / "specs").glob("*.yaml")),
        *sorted((REPO / "tests" / "e2e" / "specs").glob("*.yaml")),
        *sorted((REPO / "tests" / "fixtures").glob("*.yaml")),
    ]


@pytest.fixture(scope="module")
def cluster_specs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Every spec of the repository with ``clusterLabel: cluster``, and a per-model variant."""
    folder = tmp_path_factory.mktemp("cluster-specs")
    paths = []
    for path in _spec_files():
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        set_path(data, "spec.prometheus.clusterLabel", CLUSTER)
        paths.append(write_spec(folder, data, path.name))
    per_model = set_path(good_spec(), "spec.prometheus.clusterLabel", CLUSTER)
    per_model["metadata"]["name"] = "o1-preview-per-model"
    per_model["spec"]["groupBy"] = ["model_name"]
    paths.append(write_spec(folder, per_model, "per-model.yaml"))
    return paths


@pytest.fixture(scope="module")
def outputs(cluster_specs: list[Path]) -> dict[str, str]:
    return core.build(load_plans(cluster_specs, REPO))


def rendered_expressions(outputs: dict[str, str]) -> Iterator[tuple[str, str]]:
    """``(where, expression)`` for every rule expression, dashboard query and variable query
    (variables expanded as the e2e suite runs them), and every runbook ``promql`` block line."""
    for path, content in sorted(outputs.items()):
        if path.startswith("rules/") and path.endswith(".rules.yaml"):
            for group in yaml.safe_load(content)["groups"]:
                for rule in group["rules"]:
                    yield f"{path} {rule.get('record') or rule.get('alert')}", rule["expr"]
        elif path.startswith("dashboards/") and path.endswith(".json"):
            board = json.loads(content)
            yield from ((path, e) for e in dashboard_queries({**board, "panels": []}))
            for panel in _panels(board):
                kind = f"{path} {HEATMAP}" if panel.get("type") == HEATMAP else path
                one = {"templating": board.get("templating", {}), "panels": [panel]}
                yield from ((kind, e) for e in dashboard_queries(one))
        elif path.startswith("docs/runbooks/") and path.endswith(".md"):
            for block in re.findall(r"```promql\n(.*?)```", content, re.S):
                for line in block.strip().splitlines():
                    if line.strip() and not line.lstrip().startswith("#"):
                        yield path, line


def _panels(board: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel with queries, rows' nested panels included."""
    for panel in board.get("panels", []):
        yield from _panels(panel)
        if panel.get("targets"):
            yield {**panel, "panels": []}


def cluster_problems(expr: str, label: str, heatmap: bool = False) -> list[str]:
    """How ``expr`` loses ``label``: each ``by``/``on`` clause without it, each
    ``without``/``ignoring`` clause with it, each aggregation without a clause (it merges every
    cluster), outside ``absent()``. Empty when every part keeps it.

    Raises:
        ValueError: ``expr`` does not parse.
    """
    found = []
    for node, ancestors in promql.walk(promql.parse(expr)):
        if any(promql.func_name(a) == ABSENT_OK for a in ancestors):
            continue
        if isinstance(node, P.AggregateExpr):
            modifier = node.modifier
            op = str(node.op)
            labels = [] if modifier is None else list(modifier.labels)
            if heatmap and op == "sum" and labels in ([], ["le"]):
                continue
            if modifier is None:
                found.append(f"{op}(…) without by: merges every cluster")
            elif modifier.type == P.AggModifierType.By and label not in modifier.labels:
                found.append(f"{op} by ({', '.join(modifier.labels)}) lacks {label}")
            elif modifier.type == P.AggModifierType.Without and label in modifier.labels:
                found.append(f"{op} without ({', '.join(modifier.labels)}) drops {label}")
        elif isinstance(node, P.BinaryExpr) and node.modifier is not None:
            matching = node.modifier.matching
            if matching is None:
                continue
            labels = list(matching.labels)
            if is_label_less_filter(node):
                continue  # a filter on a vector with no labels at all (an hourly tile's hour)
            if matching.type == P.LabelModifierType.Include and label not in labels:
                found.append(f"{node.op} on ({', '.join(labels)}) lacks {label}")
            elif matching.type != P.LabelModifierType.Include and label in labels:
                found.append(f"{node.op} ignoring ({', '.join(labels)}) drops {label}")
    return found


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        pytest.param("sum by (cluster, namespace) (rate(x[5m]))", [], id="by with the label"),
        pytest.param(
            "sum by (namespace) (rate(x[5m]))",
            ["sum by (namespace) lacks cluster"],
            id="by without the label",
        ),
        pytest.param("sum(rate(x[5m]))", ["sum(…) without by: merges every cluster"], id="no by"),
        pytest.param(
            "a / on (namespace) b", ["/ on (namespace) lacks cluster"], id="on without the label"
        ),
        pytest.param(
            "a and ignoring (cluster) b",
            ["and ignoring (cluster) drops cluster"],
            id="ignoring the label",
        ),
        pytest.param(
            "max without (cluster) (x)",
            ["max without (cluster) drops cluster"],
            id="without the label",
        ),
        pytest.param("a or absent(sum(up))", [], id="inside absent()"),
        pytest.param("a / b", [], id="plain join matches every label"),
        pytest.param(
            "a and on () (vector(time() % 3600) < 60)", [], id="a filter on a label-less vector"
        ),
        pytest.param("a and on () b", ["and on () lacks cluster"], id="on () with series"),
    ],
)
def test_the_scan_finds_every_clause_that_loses_the_label(expr: str, expected: list[str]) -> None:
    assert cluster_problems(expr, CLUSTER) == expected


def test_only_a_heatmap_adds_buckets_over_clusters() -> None:
    buckets = "sum by (le) (rate(x_bucket[5m]))"
    assert cluster_problems(buckets, CLUSTER, heatmap=True) == []
    assert cluster_problems(buckets, CLUSTER) == ["sum by (le) lacks cluster"]
    assert cluster_problems("max by (pod) (x)", CLUSTER, heatmap=True) == [
        "max by (pod) lacks cluster"
    ]


def test_every_rendered_expression_keeps_the_cluster_label(outputs: dict[str, str]) -> None:
    seen: dict[str, int] = {}
    problems = []
    for where, expr in rendered_expressions(outputs):
        kind = where.split("/")[0]
        seen[kind] = seen.get(kind, 0) + 1
        found = cluster_problems(expr, CLUSTER, heatmap=where.endswith(HEATMAP))
        problems += [f"{where}: {p}\n    {expr}" for p in found]
    assert not problems, "\n".join(problems)
    assert seen.get("rules", 0) > 200 and seen.get("dashboards", 0) > 50, seen
    assert seen.get("docs", 0) > 10, seen


def test_unset_renders_byte_identical_outputs(tmp_path: Path) -> None:
    with_null = set_path(good_spec(), "spec.prometheus.clusterLabel", None)
    plain = core.build(load_plans([write_spec(tmp_path, good_spec())], REPO))
    nulled = core.build(load_plans([write_spec(tmp_path, with_null)], REPO))
    assert plain == nulled
    assert "cluster" not in plain["rules/o1-preview.rules.yaml"]


def _plan(data: dict[str, Any]) -> ServicePlan:
    return resolve(parse_spec(data, "x.yaml"), "x.yaml")


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        pytest.param(
            "spec.prometheus.clusterLabel", "namespace", "cannot name the cluster", id="namespace"
        ),
        pytest.param("spec.prometheus.clusterLabel", "__name__", "cannot name", id="reserved"),
        pytest.param(
            "spec.prometheus.clusterLabel", "events", "cannot name the cluster", id="SLO events"
        ),
        pytest.param("spec.prometheus.clusterLabel", "my-cluster", "label name", id="not a label"),
    ],
)
def test_a_cluster_label_obsgen_uses_is_refused(path: str, value: str, message: str) -> None:
    with pytest.raises(ObsgenError, match=message):
        _plan(set_path(good_spec(), path, value))


def test_a_cluster_label_also_in_group_by_is_refused() -> None:
    data = set_path(good_spec(), "spec.prometheus.clusterLabel", "region")
    data["spec"]["groupBy"] = ["region"]
    with pytest.raises(ObsgenError) as err:
        _plan(data)
    assert "spec.groupBy" in str(err.value)
    assert "clusterLabel" in str(err.value)


def _cluster_rules_and_tests(tmp_path: Path, keep: str) -> tuple[Path, Path]:
    """o1-preview with ``clusterLabel: cluster``: its rule file, and its generated test file cut
    to the groups whose name contains ``keep``, written under ``tmp_path``."""
    spec = write_spec(tmp_path, set_path(good_spec(), "spec.prometheus.clusterLabel", CLUSTER))
    outputs = core.build(load_plans([spec], REPO))
    rules = tmp_path / "rules" / "o1-preview.rules.yaml"
    rules.parent.mkdir()
    rules.write_text(outputs["rules/o1-preview.rules.yaml"], encoding="utf-8")
    tests = yaml.safe_load(outputs["rules/o1-preview.test.yaml"])
    tests["tests"] = [t for t in tests["tests"] if keep in t["name"]]
    assert tests["tests"], f"no generated test group named like {keep!r}"
    test_file = rules.parent / "cut.test.yaml"
    test_file.write_text(yaml.safe_dump(tests), encoding="utf-8")
    return rules, test_file


def test_generated_alert_tests_pass_with_two_clusters(tmp_path: Path) -> None:
    """Every alert family's generated firing and quiet cases (series and expected alerts carry
    the cluster label), and the case where one of two clusters with the same namespace and
    service fails: only that cluster pages."""
    _rules, tests = _cluster_rules_and_tests(tmp_path, "")
    doc = yaml.safe_load(tests.read_text())
    doc["tests"] = [
        t
        for t in doc["tests"]
        if t["name"].endswith(("fires", "stays quiet", "pages", "tickets", "cluster only"))
        and "/" not in t["name"]
    ]
    names = [t["name"] for t in doc["tests"]]
    assert "ModelErrorRatioHigh pages for the failing cluster only" in names
    tests.write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = promtool.test_rules([tests])
    assert result.ok, result.output


def test_the_two_cluster_case_fails_when_errors_are_summed_over_clusters(tmp_path: Path) -> None:
    rules, tests = _cluster_rules_and_tests(tmp_path, "failing cluster only")
    text = rules.read_text()
    assert "sum by (cluster, namespace)" in text
    rules.write_text(text.replace("sum by (cluster, namespace)", "sum by (namespace)"))
    result = promtool.test_rules([tests])
    assert not result.ok
    assert "failing cluster only" in result.output


def _raw_queries(board: dict[str, Any]) -> Iterator[str]:
    """Every panel target and variable query of ``board`` as written (variables unexpanded)."""
    for panel in _panels(board):
        for target in panel.get("targets", []):
            yield target["expr"]
    for var in board.get("templating", {}).get("list", []):
        query = var.get("query")
        text = query.get("query") if isinstance(query, dict) else query
        if var.get("type") == "query" and isinstance(text, str):
            yield re.fullmatch(r"label_values\((.*),\s*\w+\)", text.strip(), re.S).group(1)  # type: ignore[union-attr]


def test_every_dashboard_has_a_cluster_variable_and_every_query_filters_by_it(
    outputs: dict[str, str],
) -> None:
    boards = {p: json.loads(c) for p, c in outputs.items() if p.startswith("dashboards/")}
    assert len(boards) > 5
    unfiltered = []
    for path, board in sorted(boards.items()):
        names = [v["name"] for v in board["templating"]["list"]]
        assert "cluster" in names, f"{path}: variables {names}"
        cluster = next(v for v in board["templating"]["list"] if v["name"] == "cluster")
        assert cluster["query"]["query"].endswith(f", {CLUSTER})"), cluster
        for expr in _raw_queries(board):
            if expr == cluster["query"]["query"][len("label_values(") : -len(f", {CLUSTER})")]:
                continue  # the cluster variable's own query lists every cluster
            tree = promql.parse(expr.replace("$__rate_interval", "5m"))
            for node, _ in promql.walk(tree):
                if isinstance(node, P.VectorSelector) and not any(
                    m.name == CLUSTER and m.value == "$cluster" for m in node.matchers.matchers
                ):
                    unfiltered.append(f"{path}: {node} in {expr}")
    assert not unfiltered, "\n".join(unfiltered)


def test_dashboard_uids_differ_with_a_cluster_label(outputs: dict[str, str]) -> None:
    spec = REPO / "specs" / "o1-preview.yaml"
    plain = json.loads(core.build(load_plans([spec], REPO))["dashboards/o1-preview.json"])
    clustered = json.loads(outputs["dashboards/o1-preview.json"])
    assert plain["uid"] != clustered["uid"]
    assert "cluster" not in [v["name"] for v in plain["templating"]["list"]]


def test_runbook_queries_and_silences_select_the_cluster(outputs: dict[str, str]) -> None:
    page = outputs["docs/runbooks/ModelMemoryHeadroomLow.md"]
    assert (
        f'amtool silence add alertname=ModelMemoryHeadroomLow service="<service>" {CLUSTER}="<cluster>"'
        in page
    )
    # the service's own page (where runbook_url points) holds the checks
    own = outputs["docs/runbooks/o1-preview/ModelMemoryHeadroomLow.md"]
    assert (
        f'amtool silence add alertname=ModelMemoryHeadroomLow service=o1-preview {CLUSTER}="<cluster>"'
        in own
    )
    assert f"put the alert's `{CLUSTER}` label where a" in own
    blocks = re.findall(r"```promql\n(.*?)```", own, re.S)
    assert blocks
    for block in blocks:
        for line in block.strip().splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                assert f'{CLUSTER}="<cluster>"' in line, line


def test_alerts_link_the_dashboard_of_their_cluster(outputs: dict[str, str]) -> None:
    groups = yaml.safe_load(outputs["rules/o1-preview.rules.yaml"])["groups"]
    alerts = [r for g in groups for r in g["rules"] if "alert" in r]
    assert alerts
    for rule in alerts:
        assert rule["annotations"]["dashboard_url"].endswith(
            f"?var-cluster={{{{ $labels.{CLUSTER} }}}}"
        )


def test_alertmanager_groups_per_cluster_and_never_inhibits_across_clusters(
    outputs: dict[str, str], tmp_path: Path
) -> None:
    config = yaml.safe_load(outputs[CONFIG_FILE])
    assert CLUSTER in config["route"]["group_by"]
    assert config["inhibit_rules"]
    for rule in config["inhibit_rules"]:
        if rule.get("source_matchers"):  # the chart's InfoInhibitor rules are not obsgen's
            assert CLUSTER in rule.get("equal", []) or "InfoInhibitor" in str(rule), rule
    crd = yaml.safe_load(outputs["manifests/o1-preview/alertmanagerconfig.yaml"])
    assert CLUSTER in crd["spec"]["route"]["groupBy"]
    assert all(CLUSTER in r["equal"] for r in crd["spec"]["inhibitRules"])
    path = tmp_path / "alertmanager.yaml"
    path.write_text(outputs[CONFIG_FILE], encoding="utf-8")
    assert amtool.check_config([path], [CONFIG_FILE]) == []


@pytest.mark.parametrize("service", ["o1-preview", "o1-preview-per-model"])
def test_every_generated_test_passes_with_a_cluster_label(
    outputs: dict[str, str], tmp_path: Path, service: str
) -> None:
    """The whole proof of a service with ``clusterLabel`` (every test file and group, split as
    ``obsgen render`` runs it): its guards' and MIG instances' expected alerts carry the
    cluster label as their rules keep it (they did not, and such a spec could not render)."""
    files = [rel for rel in outputs if rel.startswith(f"rules/{service}.")]
    for rel in files:
        (tmp_path / rel.removeprefix("rules/")).write_text(outputs[rel], encoding="utf-8")
    tests = [tmp_path / rel.removeprefix("rules/") for rel in files if rel.endswith(".test.yaml")]
    assert len(tests) >= 2
    text = "".join(t.read_text(encoding="utf-8") for t in tests)
    assert "ModelSignalMissing fires for each missing input" in text and "MIG instance" in text
    parts = [part for path in tests for part in split_test_file(path)]
    result = promtool.test_rules(parts)
    assert result.ok, result.output
