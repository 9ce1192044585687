"""Every rendered rule file loads in the real ``vmalert -dryRun``, and every rendered rule and
dashboard expression runs on a real VictoriaMetrics (the pinned 1.151: tests/toolchain.py),
specs reading Prometheus 3 UTF-8 names (quoted selectors) included.

``vmalert -dryRun`` parses the files, the expressions (MetricsQL syntax and function names)
and the annotation templates; running each expression on an empty VictoriaMetrics server
also proves its types and arguments. Native-histogram specs are the documented exception
(docs/scale-out.md): VictoriaMetrics has no ``histogram_count`` nor ``histogram_sum``, and
the tests pin exactly that.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from generator import core, naming
from generator.plan import ServicePlan
from generator.render import load_plans
from tests.e2e.e2e_scenarios import dashboard_queries
from tests.e2e.e2e_victoriametrics import VictoriaMetricsStack, find_victoriametrics
from tests.factories import good_spec, write_spec

REPO = Path(__file__).resolve().parent.parent
NATIVE_ONLY = ("histogram_count", "histogram_sum")
"""PromQL functions of native histograms VictoriaMetrics 1.151 does not have (it answers
``unsupported function``); it has ``histogram_fraction`` and ``histogram_avg``."""


def _native_only(error: str) -> bool:
    """Whether a query ``error`` is VictoriaMetrics refusing a function of
    :data:`NATIVE_ONLY`."""
    return any(f'unsupported function "{f}"' in error for f in NATIVE_ONLY)


def _binaries() -> tuple[str, str]:
    found = find_victoriametrics()
    if found is None:
        pytest.fail("victoria-metrics or vmalert not found; run `make victoriametrics`")
    return found


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> list[ServicePlan]:
    """Every spec the repository renders or tests with, a per-model (groupBy) variant and a
    multi-cluster (clusterLabel) variant."""
    per_model = good_spec()
    per_model["metadata"]["name"] = "o1-preview-per-model"
    per_model["spec"]["groupBy"] = ["model_name"]
    folder = tmp_path_factory.mktemp("specs")
    extra = write_spec(folder, per_model, "per-model.yaml")
    clustered = good_spec()
    clustered["metadata"]["name"] = "o1-preview-clusters"
    clustered["spec"]["prometheus"] = {"clusterLabel": "cluster"}
    extra_clustered = write_spec(folder, clustered, "clusters.yaml")
    specs = [
        *sorted((REPO / "specs").glob("*.yaml")),
        *sorted((REPO / "tests" / "e2e" / "specs").glob("*.yaml")),
        *sorted((REPO / "tests" / "fixtures").glob("*.yaml")),
        extra,
        extra_clustered,
    ]
    return load_plans(specs, REPO)


@pytest.fixture(scope="module")
def outputs(plans: list[ServicePlan]) -> dict[str, str]:
    return core.build(plans)


def _quoted(plans: list[ServicePlan]) -> set[str]:
    """Services whose rules read Prometheus 3 UTF-8 names (quoted selectors)."""
    quoted = {p.name for p in plans if p.utf8_names}
    assert quoted, "no UTF-8-name spec in the corpus: quoted selectors go untested"
    return quoted


@pytest.fixture(scope="module")
def rule_files(
    plans: list[ServicePlan], outputs: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """Every rendered rule file by service, written to a temporary folder."""
    folder = tmp_path_factory.mktemp("rules")
    files = {}
    for plan in plans:
        path = folder / Path(naming.rules_file(plan.name)).name
        path.write_text(outputs[naming.rules_file(plan.name)], encoding="utf-8")
        files[plan.name] = path
    return files


def _dry_run(files: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_binaries()[1], "-dryRun", "-loggerLevel=ERROR", *(f"-rule={f}" for f in files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_vmalert_dry_run_accepts_every_rendered_rule_file(
    plans: list[ServicePlan], rule_files: dict[str, Path]
) -> None:
    native = {p.name for p in plans if any(h.native for h in p.histograms.values())}
    assert native, "no native-histogram spec in the corpus: the exception below is untested"
    assert _quoted(plans) - native, "no UTF-8-name spec in the corpus is dry-run"
    # A Prometheus query_offset is no vmalert field (its evaluation delay is -rule.evalDelay or
    # the group's eval_delay: docs/scale-out.md): vmalert refuses such a file, by that field.
    offset = {p.name for p in plans if p.query_offset_ms}
    assert offset, "no queryOffset spec in the corpus: the exception below is untested"
    classic = [path for name, path in rule_files.items() if name not in native | offset]
    assert len(classic) >= 10
    result = _dry_run(classic)
    assert result.returncode == 0, result.stdout + result.stderr
    for name in sorted(offset - native):
        refused = _dry_run([rule_files[name]])
        assert refused.returncode != 0 and "unknown fields" in refused.stdout + refused.stderr
        assert "query_offset" in refused.stdout + refused.stderr
    for name in sorted(native):
        refused = _dry_run([rule_files[name]])
        assert refused.returncode != 0 and _native_only(refused.stdout + refused.stderr), (
            f"vmalert now loads {name}'s native-histogram rules: update docs/scale-out.md"
        )


@pytest.mark.parametrize(
    ("rule", "complaint"),
    [
        pytest.param(
            {"alert": "X", "expr": "sum(rate(x[5m]) by", "labels": {"severity": "page"}},
            "invalid expression",
            id="a broken expression",
        ),
        pytest.param(
            {"alert": "X", "expr": "up == 0", "annotations": {"summary": "{{ $value | nope }}"}},
            'function "nope" not defined',
            id="an annotation template with an unknown function",
        ),
        pytest.param(
            {"record": "a:b:c", "expr": "up", "keep": "x"},
            "unknown fields",
            id="an unknown rule field",
        ),
    ],
)
def test_vmalert_dry_run_rejects_a_broken_rule_file(
    tmp_path: Path, rule: dict[str, object], complaint: str
) -> None:
    path = tmp_path / "broken.rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "g", "rules": [rule]}]}))
    result = _dry_run([path])
    assert result.returncode != 0
    assert complaint in result.stdout + result.stderr


@pytest.fixture(scope="module")
def victoriametrics() -> Iterator[VictoriaMetricsStack]:
    """A bare VictoriaMetrics server (no data, no vmalert) on 127.0.0.1."""
    with tempfile.TemporaryDirectory(prefix="obsgen-vm-") as workdir:
        server = VictoriaMetricsStack(_binaries(), Path(workdir))
        try:
            server.start([], [])
            yield server
        finally:
            server.stop()


def _error(server: VictoriaMetricsStack, expr: str) -> str | None:
    body = server.session.get(f"{server.url}/api/v1/query", params={"query": expr}, timeout=10)
    answer = body.json()
    return None if answer.get("status") == "success" else str(answer.get("error"))


def test_every_rendered_rule_expression_runs_on_victoriametrics(
    victoriametrics: VictoriaMetricsStack, plans: list[ServicePlan], outputs: dict[str, str]
) -> None:
    native = {p.name for p in plans if any(h.native for h in p.histograms.values())}
    assert native, "no native-histogram spec in the corpus: the exception below is untested"
    quoted = _quoted(plans)
    failed, refused_native, ran_quoted = [], 0, 0
    for plan in plans:
        groups = yaml.safe_load(outputs[naming.rules_file(plan.name)])["groups"]
        for rule in (r for g in groups for r in g["rules"]):
            error = _error(victoriametrics, rule["expr"])
            name = rule.get("record") or rule.get("alert")
            if error is None:
                ran_quoted += plan.name in quoted and '{"' in rule["expr"]
                continue
            if plan.name in native and _native_only(error):
                refused_native += 1
                continue
            failed.append(f"{plan.name} {name}: {error}")
    assert not failed, "\n".join(failed)
    assert refused_native, "native-histogram rules now run on VictoriaMetrics: update the docs"
    assert ran_quoted, "no rule with a quoted UTF-8 selector ran"


def test_every_dashboard_query_runs_on_victoriametrics(
    victoriametrics: VictoriaMetricsStack, plans: list[ServicePlan], outputs: dict[str, str]
) -> None:
    quoted = {naming.dashboard_file(name) for name in _quoted(plans)}
    failed, ran_quoted = [], 0
    for rel, content in outputs.items():
        if not (rel.startswith("dashboards/") and rel.endswith(".json")):
            continue
        for expr in dashboard_queries(json.loads(content)):
            error = _error(victoriametrics, expr)
            if error is None:
                ran_quoted += rel in quoted and '{"' in expr
                continue
            if not _native_only(error):
                failed.append(f"{rel}: {expr}: {error}")
    assert not failed, "\n".join(failed)
    assert ran_quoted, "no dashboard query with a quoted UTF-8 selector ran"
