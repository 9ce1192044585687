"""Issue 18's numbered cases with their right findings, `le` regexes decided by meaning, and
obsgen's own outputs clean at every level for each target Prometheus version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import core
from generator.cli import main
from generator.lint import LintConfig, Severity, lint_files
from generator.lint.loader import load_inputs
from generator.render import find_specs, load_plans

from .helpers import LintFn, alert, needs_promtool, record, rule_file

ROOT = Path(__file__).resolve().parents[2]
RIGHT_6H = (
    "histogram_quantile(0.99, sum by (le, service) "
    "(rate(http_request_duration_seconds_bucket[6h])))"
)
RIGHT_FLEET = (
    "histogram_quantile(0.99, sum by (le, service) "
    "(rate(http_request_duration_seconds_bucket[5m])))"
)


def test_case_1_averaged_quantiles_get_the_bucket_based_form(lint: LintFn) -> None:
    report = lint(
        rule_file(
            alert(
                "avg_over_time(service:http_request_duration_seconds:p99_rate5m[6h]) > 1",
                name="SixHourP99",
            ),
            alert(
                "avg by (service) (service_pod:http_request_duration_seconds:p99_rate5m) > 1",
                name="FleetP99",
            ),
        )
    )
    found = {(f.rule, f.check, f.severity) for f in report.findings}
    assert found == {
        ("SixHourP99", "quantile-over-time", Severity.WARNING),
        ("FleetP99", "quantile-aggregated", Severity.WARNING),
        # the recorded p99s are not recorded in this file
        ("SixHourP99", "record-missing", Severity.WARNING),
        ("FleetP99", "record-missing", Severity.WARNING),
    }
    by_rule = {f.rule: f for f in report.findings if f.check != "record-missing"}
    assert RIGHT_6H in by_rule["SixHourP99"].message
    assert "not the p99 of the 6h window" in by_rule["SixHourP99"].message
    assert RIGHT_FLEET in by_rule["FleetP99"].message
    assert by_rule["SixHourP99"].fix is not None
    assert by_rule["SixHourP99"].fix.expr == f"{RIGHT_6H} > 1"
    assert by_rule["FleetP99"].fix is not None
    assert by_rule["FleetP99"].fix.expr == f"{RIGHT_FLEET} > 1"


def test_case_1_quantiles_are_recognised_by_expression_through_recording_rules(
    lint: LintFn,
) -> None:
    """The recorded name says nothing; its recording rule takes a histogram_quantile."""
    report = lint(
        rule_file(
            record(
                "service_pod:latency:slowest",
                "histogram_quantile(0.99, sum by (le, service, pod) "
                "(rate(http_request_duration_seconds_bucket[5m])))",
            ),
            record(
                "service:latency:fleet_slowest", "avg by (service) (service_pod:latency:slowest)"
            ),
        )
    )
    [finding] = report.findings
    assert finding.check == "quantile-aggregated"
    assert "known from its recording rule (histogram_quantile)" in finding.message
    assert RIGHT_FLEET in finding.message


def _holt_winters(tmp_path: Path) -> Path:
    path = tmp_path / "forecast.yaml"
    rule = alert("holt_winters(node_memory_MemAvailable_bytes[1h], 0.3, 0.3) < 1e9")
    path.write_text(yaml.safe_dump(rule_file(rule)))
    return path


@pytest.mark.parametrize(
    ("version", "exit_code", "words"),
    [
        pytest.param(None, 1, "no spelling works on both versions", id="default: both"),
        pytest.param("3", 1, "write `double_exponential_smoothing(", id="3"),
        pytest.param("2", 0, "", id="2: holt_winters is fine"),
    ],
)
def test_case_2_holt_winters_and_the_target_version(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    version: str | None,
    exit_code: int,
    words: str,
) -> None:
    needs_promtool()
    path = _holt_winters(tmp_path)
    args = ["lint", str(path)] + (["--prometheus-version", version] if version else [])
    assert main(args) == exit_code
    out = capsys.readouterr().out
    assert "obsgen's PromQL parser does not" not in out  # no more blaming the parser
    if words:
        assert "error:" in out and "[promql-function-version]" in out and words in out
    else:
        assert out.startswith("no findings")


def test_the_target_version_comes_from_the_config_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _holt_winters(tmp_path)
    config = tmp_path / "lint.yaml"
    config.write_text("prometheusVersion: 2\n")
    assert main(["lint", "--no-promtool", "--config", str(config), str(path)]) == 0
    config.write_text("prometheusVersion: 4\n")
    assert main(["lint", "--no-promtool", "--config", str(config), str(path)]) == 2
    assert "prometheusVersion: unknown Prometheus version '4'" in capsys.readouterr().err


# Every common written form of a regex for bound 1 in both spellings.
CORRECT_FOR_ONE = [
    r"1|1\\.0",
    r"1\\.0|1",
    r"1(\\.0)?",
    r"1(?:\\.0)?",
    r"^(?:1|1\\.0)$",
    r"^1(\\.0)?$",
    r"(1|1\\.0)",
    r"1[.]0|1",
    r"1(\\.0+)?",
]


@pytest.mark.parametrize("pattern", CORRECT_FOR_ONE)
def test_a_correct_le_regex_gets_no_finding_in_any_common_form(lint: LintFn, pattern: str) -> None:
    expr = (
        f'sum by (job) (rate(x_bucket{{le=~"{pattern}"}}[5m])) / sum by (job) (rate(x_count[5m]))'
    )
    report = lint(rule_file(record("job:x_fast:ratio_rate5m", expr)))
    assert report.findings == (), [f.message for f in report.findings]


@pytest.mark.parametrize(
    ("pattern", "versions", "check", "words"),
    [
        pytest.param("1", ("2", "3"), "le-spelling", 'Prometheus 3 stores "1.0"', id="1 misses 1.0"),
        pytest.param(r"1\\.0", ("2", "3"), "le-spelling", 'Prometheus 2 may store "1"', id="1.0 misses 1"),
        pytest.param("1.0|1", ("2", "3"), "bucket-sum-across-le", "2 bounds (1.0, 100.0)", id="unescaped dot also accepts 100"),
        pytest.param("1.*", ("2", "3"), "bucket-sum-across-le", "bounds (1.0, 10.0, 100.0", id="1.* accepts 10, 100"),
        pytest.param(r"1\\.?0?", ("2", "3"), "bucket-sum-across-le", "(1.0, 10.0)", id="optional dot and zero accept 10"),
        pytest.param("0.5|1", ("3",), "le-spelling", 'Prometheus 3 stores "1.0"', id="two bounds, one misspelled"),
    ],
)  # fmt: skip
def test_an_le_regex_with_a_real_problem_is_reported(
    lint: LintFn, pattern: str, versions: tuple[str, ...], check: str, words: str
) -> None:
    expr = f'sum by (job) (rate(x_bucket{{le=~"{pattern}"}}[5m]))'
    report = lint(
        rule_file(record("job:x_fast:rate5m", expr)), config=LintConfig(versions=versions)
    )
    found = [f for f in report.findings if f.check == check]
    assert found and words in found[0].message, [f.message for f in report.findings]


def test_le_regex_one_spelling_is_right_for_its_version(lint: LintFn) -> None:
    expr = 'sum(rate(x_bucket{le=~"1\\\\.0"}[5m]))'
    report = lint(rule_file(record("job:x_fast:rate5m", expr)), config=LintConfig(versions=("3",)))
    assert [f.check for f in report.findings] == ["regex-plain-string"]  # le="1.0" says it


def _rendered(tmp_path: Path, version: str) -> list[str]:
    """obsgen's outputs for every committed spec with ``prometheus.version`` set: rule files,
    PrometheusRule manifests and Helm values, written under ``tmp_path``."""
    specs = []
    for spec in find_specs([], ROOT):
        data: dict[str, Any] = yaml.safe_load(spec.read_text())
        data["spec"].setdefault("prometheus", {})["version"] = version
        path = tmp_path / "specs" / spec.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        specs.append(path)
    outputs = core.build(load_plans(specs, tmp_path))
    written = []
    for relative, content in outputs.items():
        if relative.startswith(("rules/", "manifests/", "helm/")) and relative.endswith(".yaml"):
            target = tmp_path / "out" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
            written.append(relative.split("/")[0])
    return [str(tmp_path / "out" / folder) for folder in sorted(set(written))]


@pytest.mark.parametrize(
    ("spec_version", "targets"),
    [
        pytest.param("compat", ("2", "3"), id="compat rules for both"),
        pytest.param("3", ("3",), id="Prometheus 3 rules for 3"),
        pytest.param("2", ("2",), id="Prometheus 2 rules for 2"),
    ],
)
def test_generated_rules_lint_clean_at_every_level_for_their_target(
    tmp_path: Path, spec_version: str, targets: tuple[str, ...]
) -> None:
    # Read once, linted for each target: what lint_paths does per call, without reading the
    # same files again (reading does not depend on the target).
    inputs = load_inputs(_rendered(tmp_path, spec_version), LintConfig().scrape_interval)
    assert not inputs.problems
    for target in sorted({targets, *((v,) for v in targets)}):
        report = lint_files(inputs.files, LintConfig(versions=target), promtool=False)
        assert report.findings == (), [f"{f.check}: {f.message}" for f in report.findings[:5]]
        assert report.rules > 1000
