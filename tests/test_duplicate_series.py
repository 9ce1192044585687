"""Duplicate series (issue 43, "Tolerate duplicates"): obsgen.yaml ``ruler.deduplication``.

HA Prometheus pairs (copies differing by ``prometheus_replica``) and a second scrape
configuration (copies differing by ``instance``/``endpoint``/``job``) reach a ruler that no
querier deduplicates. With the default ``querier`` the rules are unchanged — and, fed such
copies, the real promtool shows why the mode exists: the counter-birth joins fail ("found
duplicate series"), the SLO records are absent and a summed gauge doubles. With ``rules`` every
raw read is collapsed (generator/dedup.py) and the generated cases, each fed an HA pair and a
second target, pass: failures page, healthy controls stay silent.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import core, verify
from generator.cases.duplicate_cases import copies
from generator.cli import main
from generator.dedup import collapse
from generator.project_config import RulerConfig
from generator.render import load_plans
from generator.verify import Status
from tests import toolchain
from tests.factories import good_spec, write_spec
from tests.helpers_promtool import render_to

SPEC = Path(__file__).parent / "fixtures" / "slo-duplicates.yaml"
COPY = ("endpoint", "instance", "job", "prometheus_replica", "replica")
REPLICA = ("prometheus_replica", "replica")


def _render(root: Path, mode: str | None) -> dict[str, Path]:
    """The fixture's rules/ files rendered under ``root`` with ``ruler.deduplication: mode``
    (no obsgen.yaml when None)."""
    root.mkdir(parents=True, exist_ok=True)
    if mode is not None:
        (root / "obsgen.yaml").write_text(f"ruler:\n  deduplication: {mode}\n")
    return render_to(SPEC, root, root)


def _promtool(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [toolchain.binary("prometheus3", "promtool"), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        timeout=600,
    )


@pytest.fixture(scope="module")
def modes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Path]]:
    base = tmp_path_factory.mktemp("dup")
    return {
        "default": _render(base / "default", None),
        "querier": _render(base / "querier", "querier"),
        "rules": _render(base / "rules", "rules"),
    }


# --- the rewrite ---------------------------------------------------------------------------------


def test_an_aggregation_reads_one_copy_per_series() -> None:
    assert collapse("sum by (namespace) (queue)", COPY, REPLICA) == (
        "sum by (namespace) (avg without (endpoint, instance, job, prometheus_replica, replica) "
        "(queue))"
    )
    # copy labels the aggregation keeps are not collapsed
    assert collapse("sum by (instance) (rate(x[5m]))", COPY, REPLICA) == (
        "sum by (instance) (avg without (endpoint, job, prometheus_replica, replica) (rate(x[5m])))"
    )


def test_a_join_pairs_each_copy_with_its_own() -> None:
    """The counter-birth check: a copy's samples against its own Prometheus' scrapes of the
    target (the replica labels join the ``on`` list); the one side loses the copy labels it
    still does not match on, so it has one series per match group."""
    out = collapse(
        "count_over_time(x[5m]) < on (instance, job, namespace) group_left sum_over_time(up[5m])",
        COPY,
        REPLICA,
    )
    assert (
        "< on (instance, job, namespace, prometheus_replica, replica) group_left "
        "avg without (endpoint) (sum_over_time(up[5m]))"
    ) in out
    # the top drops the replica labels only
    assert out.startswith("avg without (prometheus_replica, replica) (count_over_time(x[5m]) <")
    # against a record (no copies) the raw side is collapsed instead, the matching kept
    assert collapse("r:x:y * on (namespace) group_left x", COPY, REPLICA) == (
        "r:x:y * on (namespace) group_left "
        "avg without (endpoint, instance, job, prometheus_replica, replica) (x)"
    )


def test_records_set_operators_and_absent_are_left_as_written() -> None:
    for expr in (
        'service:model_requests:rate5m{service="a"} > 3',
        'absent(up{job="a"})',
        'ALERTS{alertstate="firing"} == 1',
    ):
        assert collapse(expr, COPY, REPLICA) == expr
    # no collapse inside a set operation; between two copied reads it pairs copies
    out = collapse("sum by (ns) (x and on (ns) y)", COPY, REPLICA)
    assert "(x and on (ns, prometheus_replica, replica) y)" in out
    out = collapse("sum by (ns) (x and on (ns) r:a:b)", COPY, REPLICA)
    assert "(x and on (ns) r:a:b)" in out


def test_the_rewrite_keeps_every_rule_of_the_fixture_valid(
    modes: dict[str, dict[str, Path]],
) -> None:
    result = _promtool("check", "rules", modes["rules"]["rules/chat-dup.rules.yaml"])
    assert result.returncode == 0, result.stdout + result.stderr


# --- the modes -----------------------------------------------------------------------------------


def test_querier_and_ingest_leave_the_rules_as_written(
    modes: dict[str, dict[str, Path]], tmp_path: Path
) -> None:
    default = modes["default"]["rules/chat-dup.rules.yaml"].read_text()
    assert modes["querier"]["rules/chat-dup.rules.yaml"].read_text() == default
    ingest = _render(tmp_path, "ingest")
    assert ingest["rules/chat-dup.rules.yaml"].read_text() == default
    assert "avg without" not in default
    tests = modes["querier"]["rules/chat-dup.test.yaml"].read_text()
    assert "prometheus_replica" not in tests


def test_rules_mode_collapses_the_copy_labels(modes: dict[str, dict[str, Path]]) -> None:
    rules = yaml.safe_load(modes["rules"]["rules/chat-dup.rules.yaml"].read_text())
    exprs = {r.get("record") or r["alert"]: r["expr"] for g in rules["groups"] for r in g["rules"]}
    assert exprs["service:model_queue_depth:sum"] == (
        "sum by (namespace) (avg without (endpoint, instance, job, prometheus_replica, replica) "
        '(inference_queue_depth{job="chat",namespace="chat"}))'
    )


def test_copies_are_an_ha_pair_and_a_second_target() -> None:
    got = copies('up{instance="10.0.0.1:8000",job="chat",namespace="chat"}', "prometheus_replica")
    assert got == [
        'up{instance="10.0.0.1:8000",job="chat",namespace="chat",prometheus_replica="replica-0"}',
        'up{instance="10.0.0.1:8000",job="chat",namespace="chat",prometheus_replica="replica-1"}',
        'up{instance="10.0.0.1:8000-copy",job="chat",namespace="chat",'
        'prometheus_replica="replica-0"}',
    ]
    # kube-state-metrics' series name no target of the service: the HA pair only
    assert len(copies('kube_pod_info{namespace="chat",pod="p"}', "prometheus_replica")) == 2
    assert copies('service:x:sum{service="a"}', "prometheus_replica") == [
        'service:x:sum{service="a"}'
    ]


def test_rules_mode_cases_feed_duplicates_and_pass_promtool(
    modes: dict[str, dict[str, Path]],
) -> None:
    files = modes["rules"]
    tests = sorted(str(p) for rel, p in files.items() if rel.endswith(".test.yaml"))
    main_tests = files["rules/chat-dup.test.yaml"].read_text()
    assert 'prometheus_replica="replica-1"' in main_tests and "8000-copy" in main_tests
    result = _promtool("test", "rules", *tests)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]


def test_querier_rules_fail_on_the_same_duplicated_cases(
    modes: dict[str, dict[str, Path]], tmp_path: Path
) -> None:
    """Why the mode exists: the unchanged rules, fed the duplicated inputs, fail promtool —
    the counter-birth join errors and the SLO pages go wrong."""
    (tmp_path / "chat-dup.rules.yaml").write_text(
        modes["querier"]["rules/chat-dup.rules.yaml"].read_text()
    )
    (tmp_path / "chat-dup.test.yaml").write_text(
        modes["rules"]["rules/chat-dup.test.yaml"].read_text()
    )
    result = _promtool("test", "rules", "chat-dup.test.yaml", cwd=tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "found duplicate series for the match group" in out, out[-4000:]


_GAUGE_TEST = """
rule_files: [chat-dup.rules.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'inference_queue_depth{job="chat",namespace="chat",pod="p1",prometheus_replica="replica-0"}'
        values: '30x10'
      - series: 'inference_queue_depth{job="chat",namespace="chat",pod="p1",prometheus_replica="replica-1"}'
        values: '30x10'
      - series: 'inference_queue_depth{instance="p1:9000",job="chat",namespace="chat",pod="p1",prometheus_replica="replica-0"}'
        values: '30x10'
    promql_expr_test:
      - expr: service:model_queue_depth:sum
        eval_time: 5m
        exp_samples:
          - labels: 'service:model_queue_depth:sum{namespace="chat",service="chat-dup"}'
            value: 30
    alert_rule_test:
      - {eval_time: 10m, alertname: ModelQueueDepthHigh, exp_alerts: []}
"""


@pytest.mark.parametrize(("mode", "passes"), [("querier", False), ("rules", True)])
def test_a_gauge_on_an_ha_pair_and_a_second_target_is_read_once(
    mode: str, passes: bool, modes: dict[str, dict[str, Path]], tmp_path: Path
) -> None:
    """A queue of 30 seen three times (two replicas, a second scrape configuration): the
    querier-mode rules read 90 and page (the alert's max is 50); ``rules`` reads 30."""
    (tmp_path / "chat-dup.rules.yaml").write_text(
        modes[mode]["rules/chat-dup.rules.yaml"].read_text()
    )
    (tmp_path / "gauge.test.yaml").write_text(_GAUGE_TEST)
    result = _promtool("test", "rules", "gauge.test.yaml", cwd=tmp_path)
    out = result.stdout + result.stderr
    assert (result.returncode == 0) is passes, out[-3000:]
    if not passes:
        assert "9E+01" in out, out[-3000:]  # promtool prints the sum read: 90
        assert "has 90 requests queued (max 50)" in out, out[-3000:]  # and the false page


# --- obsgen.yaml ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("ruler:\n  deduplication: thanos\n", "ruler.deduplication", "'querier', 'ingest'"),
        ("ruler:\n  replicaLabels: [pod]\n", "ruler.replicaLabels", "name what a series is"),
        ("ruler:\n  replicaLabels: []\n", "ruler.replicaLabels", "at least one label"),
        ("ruler:\n  replicaLabels: [a, a]\n", "ruler.replicaLabels", "lists a twice"),
    ],
)
def test_a_bad_ruler_section_is_refused_with_its_field(
    text: str,
    field: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_spec(tmp_path / "specs", good_spec(), "svc.yaml")
    (tmp_path / "obsgen.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    code = main(["check", "specs/svc.yaml"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"obsgen.yaml: {field}" in err and message in err, err
    assert "Traceback" not in err


def test_copy_labels_are_the_replica_labels_and_the_target_labels() -> None:
    ruler = RulerConfig.model_validate({"deduplication": "rules", "replicaLabels": ["ha"]})
    assert ruler.copy_labels == ("endpoint", "ha", "instance", "job")


# --- obsgen verify -------------------------------------------------------------------------------


class _SeesCopies:
    """A Prometheus API whose ``up`` has an HA pair: the replica query finds one group."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def query(self, expr: str) -> list[dict[str, Any]]:
        self.asked.append(expr)
        if expr.startswith("count without (prometheus_replica, replica) (up{"):
            return [
                {"metric": {"job": "chat", "namespace": "chat", "pod": "p1"}, "value": [0, "2"]}
            ]
        return []


@pytest.mark.parametrize(("mode", "status"), [(None, Status.WRONG), ("rules", Status.OK)])
def test_verify_reports_the_copies_it_sees(
    mode: str | None, status: Status, tmp_path: Path
) -> None:
    if mode is not None:
        (tmp_path / "obsgen.yaml").write_text(f"ruler:\n  deduplication: {mode}\n")
    (plan,) = load_plans([SPEC], tmp_path)
    api = _SeesCopies()
    report = verify._Report(plan, api)  # type: ignore[arg-type]
    verify._duplicates(report)
    replicas, targets = report.rows
    assert replicas.check == "duplicates" and replicas.status is status
    assert "1 series seen more than once, differing only by an HA replica label" in replicas.detail
    assert "pod=p1" in replicas.detail
    assert targets.status is Status.OK and targets.detail == "no copies"
    assert 'and on (namespace, pod) up{job="chat",namespace="chat"}' in api.asked[1]
    # the copies of a second scrape configuration are looked for outside the job
    assert 'up{namespace="chat",pod!=""}' in api.asked[1]


_NATIVE = Path(__file__).parent / "fixtures" / "slo-native.yaml"
_HIST = (
    "'{{schema:-53 sum:0 count:0 custom_values:[0.1 1 10] buckets:[0 0 0 0]}}"
    "+{{schema:-53 sum:300 count:6000 custom_values:[0.1 1 10] buckets:[6000 0 0 0]}}x10'"
)
_NATIVE_TEST = f"""
rule_files: [native-lat.rules.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'http_request_duration_seconds{{job="nat",namespace="nat",prometheus_replica="replica-0"}}'
        values: {_HIST}
      - series: 'http_request_duration_seconds{{job="nat",namespace="nat",prometheus_replica="replica-1"}}'
        values: {_HIST}
    promql_expr_test:
      - expr: count(service:model_latency_seconds:quantile_rate5m)
        eval_time: 8m
        exp_samples: [{{labels: '{{}}', value: 3}}]
"""


def test_native_histogram_copies_are_averaged_not_dropped(tmp_path: Path) -> None:
    """``max`` ignores histogram samples: a native histogram's rate collapsed with it would
    leave the p50/p90/p99 records empty. ``avg`` keeps them."""
    (tmp_path / "obsgen.yaml").write_text("ruler:\n  deduplication: rules\n")
    rules = core.build(load_plans([_NATIVE], tmp_path))["rules/native-lat.rules.yaml"]
    assert "avg without (endpoint, instance, job, prometheus_replica, replica) (rate(" in rules
    (tmp_path / "native-lat.rules.yaml").write_text(rules)
    (tmp_path / "native.test.yaml").write_text(_NATIVE_TEST)
    result = _promtool("test", "rules", "native.test.yaml", cwd=tmp_path)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    # the same record with max: no histogram sample survives it
    (tmp_path / "native-lat.rules.yaml").write_text(
        rules.replace("avg without (endpoint", "max without (endpoint")
    )
    result = _promtool("test", "rules", "native.test.yaml", cwd=tmp_path)
    assert result.returncode != 0


def test_every_family_of_a_gpu_service_survives_the_copies(tmp_path: Path) -> None:
    """The committed o1-preview spec (NVML sidecar GPU families, a queue scraped as a second
    job, memory and target families) in ``rules`` mode: its whole generated suite, fed an HA
    pair and a second target, passes the real promtool 3."""
    (tmp_path / "obsgen.yaml").write_text("ruler:\n  deduplication: rules\n")
    spec = write_spec(tmp_path / "specs", good_spec(), "o1.yaml")
    outputs = core.build(load_plans([spec], tmp_path))
    for rel, text in outputs.items():
        if rel.startswith("rules/"):
            (tmp_path / Path(rel).name).write_text(text)
    tests = sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".test.yaml"))
    assert 'prometheus_replica="replica-1"' in (tmp_path / "o1-preview.test.yaml").read_text()
    result = _promtool("test", "rules", *tests, cwd=tmp_path)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]


_JOINING_TEST = """
rule_files: [chat-dup.rules.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'http_requests_total{job="chat",namespace="chat",status="200",prometheus_replica="replica-0"}'
        values: '0+60x20'
      - series: 'up{job="chat",namespace="chat",prometheus_replica="replica-0"}'
        values: '1x20'
      # replica-1 joins the pair at minute 10: its copy starts at the counter's value then
      - series: 'http_requests_total{job="chat",namespace="chat",status="200",prometheus_replica="replica-1"}'
        values: '_x10 600+60x10'
      - series: 'up{job="chat",namespace="chat",prometheus_replica="replica-1"}'
        values: '_x10 1x10'
    promql_expr_test:
      - expr: service:slo_outcomes:increase1m{events="total"}
        eval_time: 10m
        exp_samples:
          - labels: 'service:slo_outcomes:increase1m{events="total",namespace="chat",service="chat-dup",slo="availability"}'
            value: 60
      - expr: service:slo_outcomes:increase1m{events="total"}
        eval_time: 11m
        exp_samples:
          - labels: 'service:slo_outcomes:increase1m{events="total",namespace="chat",service="chat-dup",slo="availability"}'
            value: 60
"""


def test_a_replica_joining_the_pair_books_no_history(
    modes: dict[str, dict[str, Path]], tmp_path: Path
) -> None:
    """A new HA replica's copy of a counter has no sample before it: whether it is new events
    ("its target was up a minute ago") is asked of that replica's own ``up``, so the counter's
    600 requests so far are not booked again — each minute books the 60 requests served."""
    rules = modes["rules"]["rules/chat-dup.rules.yaml"].read_text()
    assert "and on (instance, job, namespace, prometheus_replica, replica) (up{" in rules
    (tmp_path / "chat-dup.rules.yaml").write_text(rules)
    (tmp_path / "joining.test.yaml").write_text(_JOINING_TEST)
    result = _promtool("test", "rules", "joining.test.yaml", cwd=tmp_path)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    # matched on the target alone, replica-0's up vouches for replica-1's copy: 600 booked
    (tmp_path / "chat-dup.rules.yaml").write_text(
        rules.replace(
            "on (instance, job, namespace, prometheus_replica, replica) (up{",
            "on (instance, job, namespace) (up{",
        )
    )
    result = _promtool("test", "rules", "joining.test.yaml", cwd=tmp_path)
    assert result.returncode != 0
