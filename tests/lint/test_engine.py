"""Reading inputs, config, inline disables, promtool mapping, output formats and exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from generator.cli import main
from generator.errors import ObsgenError
from generator.lint import LintConfig, Severity, lint_paths
from generator.lint.checks import all_checks
from generator.lint.config import parse_config

from .helpers import LintFn, alert, needs_promtool, rule_file

DATA = Path(__file__).parent / "data"
BAD_LE = 'sum(rate(x_bucket{le="1"}[5m]))'

PROMETHEUS_RULE = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: demo}
spec:
  groups:
  - name: demo
    rules:
    - record: job:x:rate5m
      expr: sum(rate(x_bucket{le="1"}[5m]))
"""

HELM_VALUES = """\
kube-prometheus-stack:
  additionalPrometheusRulesMap:
    demo:
      groups:
      - name: demo
        rules:
        - record: job:x:rate5m
          expr: sum(rate(x_bucket{le="1"}[5m]))
"""


def test_prometheusrule_objects_are_read_with_their_own_lines(lint: LintFn) -> None:
    report = lint(PROMETHEUS_RULE)
    assert [(f.check, f.line) for f in report.findings] == [("le-spelling", 9)]


def test_helm_values_under_a_subchart_key_are_read(lint: LintFn) -> None:
    report = lint(HELM_VALUES)
    assert [(f.check, f.line) for f in report.findings] == [("le-spelling", 8)]


def test_folders_skip_yaml_that_holds_no_rules(tmp_path: Path) -> None:
    (tmp_path / "x.test.yaml").write_text("rule_files: [x.yaml]\ntests: []\n")
    (tmp_path / "values.yaml").write_text("replicas: 3\n")
    (tmp_path / "x.rules.yaml").write_text(yaml.safe_dump(rule_file(alert("up == 0"))))
    report = lint_paths([str(tmp_path)], LintConfig(), promtool=False)
    assert (report.files, report.rules, report.findings) == (1, 1, ())


def test_promtool_test_files_named_explicitly_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "x.test.yaml"
    path.write_text("rule_files: [x.yaml]\ntests: []\n")
    report = lint_paths([str(path)], LintConfig(), promtool=False)
    assert (report.files, report.findings) == (0, ())


def test_a_file_named_explicitly_must_hold_rules(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text("replicas: 3\n")
    report = lint_paths([str(path)], LintConfig(), promtool=False)
    assert [(f.check, f.severity, f.line) for f in report.findings] == [
        ("unreadable-input", Severity.ERROR, 0)
    ]
    assert "no rule groups found" in report.findings[0].message
    assert report.unreadable == 1


def test_invalid_yaml_is_unreadable_input_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("groups:\n  - name: [\n")
    report = lint_paths([str(path)], LintConfig(), promtool=False)
    assert [(f.file, f.check, f.severity, f.line) for f in report.findings] == [
        (str(path), "unreadable-input", Severity.ERROR, 3)
    ]
    assert "not valid YAML" in report.findings[0].message


def _broken_folder(tmp_path: Path) -> Path:
    """A folder with an invalid YAML file, a non-UTF-8 file and a file with one finding."""
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "a-bad.yaml").write_text("groups:\n- name: g\n  rules: [\n")
    (folder / "b-latin1.yaml").write_bytes(b"groups: []\n# caf\xe9\n")
    (folder / "c-good.yaml").write_text(yaml.safe_dump(rule_file(alert(BAD_LE + " > 1"))))
    return folder


def test_an_unreadable_file_in_a_folder_does_not_hide_the_other_findings(
    tmp_path: Path,
) -> None:
    folder = _broken_folder(tmp_path)
    report = lint_paths([str(folder)], LintConfig(), promtool=False)
    assert [(Path(f.file).name, f.check, f.line) for f in report.findings] == [
        ("a-bad.yaml", "unreadable-input", 4),
        ("b-latin1.yaml", "unreadable-input", 0),
        ("c-good.yaml", "le-spelling", 9),
    ]
    assert (report.files, report.unreadable) == (1, 2)


def test_unreadable_input_exits_2_after_printing_every_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _broken_folder(tmp_path)
    config = tmp_path / "lint.yaml"
    config.write_text("disable: [unreadable-input]\n")
    for extra in ([], ["--fail-on", "never"], ["--config", str(config)]):
        assert _cli(str(folder), "--no-promtool", *extra) == 2, extra
        out = capsys.readouterr().out
        assert "a-bad.yaml:4: error: not valid YAML" in out, extra
        assert "[le-spelling]" in out, extra


def test_unreadable_input_in_github_format_is_an_error_annotation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _broken_folder(tmp_path)
    assert _cli(str(folder), "--no-promtool", "--format", "github") == 2
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"::error file={folder / 'a-bad.yaml'},line=4,")
    assert "title=obsgen-lint unreadable-input::not valid YAML" in lines[0]


def test_a_missing_path_is_still_an_immediate_usage_error(tmp_path: Path) -> None:
    folder = _broken_folder(tmp_path)
    with pytest.raises(ObsgenError) as err:
        lint_paths([str(folder), str(tmp_path / "missing.yaml")], LintConfig(), promtool=False)
    assert err.value.exit_code == 2
    assert "no such file or folder" in str(err.value)


def test_inline_comment_disables_a_check_on_that_rule_only(lint: LintFn) -> None:
    text = f"""\
groups:
- name: g
  rules:
  # obsgen-lint: disable=le-spelling
  - record: job:a:rate5m
    expr: {BAD_LE}
  - record: job:b:rate5m
    expr: {BAD_LE}  # obsgen-lint: disable=all
  - record: job:c:rate5m
    expr: {BAD_LE}
"""
    report = lint(text)
    assert [(f.check, f.rule) for f in report.findings] == [("le-spelling", "job:c:rate5m")]


def test_config_disables_checks_and_changes_severities() -> None:
    known = {c.id for c in all_checks()}
    config = parse_config(
        {
            "scrapeInterval": "15s",
            "disable": ["record-name-format"],
            "severity": {"le-spelling": "error"},
            "alerts": {"requiredAnnotations": ["summary"]},
        },
        known,
        ".obsgen-lint.yaml",
    )
    assert config.scrape_interval == 15
    assert config.disabled == {"record-name-format"}
    assert config.severities == {"le-spelling": Severity.ERROR}
    assert config.required_annotations == ("summary",)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"disable": ["no-such-check"]}, id="unknown check id"),
        pytest.param({"severity": {"le-spelling": "fatal"}}, id="unknown severity"),
        pytest.param({"scrapeInterval": "fast"}, id="bad duration"),
        pytest.param({"ignore": []}, id="unknown key"),
    ],
)
def test_bad_config_is_a_usage_error(data: dict[str, object]) -> None:
    with pytest.raises(ObsgenError) as err:
        parse_config(data, {c.id for c in all_checks()}, ".obsgen-lint.yaml")
    assert err.value.exit_code == 2


def test_without_promtool_broken_rules_are_reported_by_obsgen(lint: LintFn) -> None:
    report = lint(rule_file(alert("sum(rate(x_total[5m])"), {"alert": "NoExpr"}))
    assert sorted(f.check for f in report.findings) == ["promql-parse", "rule-invalid"]


def test_promtool_errors_in_prometheusrule_map_to_the_original_line(lint: LintFn) -> None:
    needs_promtool()
    text = PROMETHEUS_RULE.replace('expr: sum(rate(x_bucket{le="1"}[5m]))', "expr: sum(rate(x[5m])")
    report = lint(text, promtool=True)
    assert [(f.check, f.line, f.severity) for f in report.findings] == [
        ("promtool", 9, Severity.ERROR)
    ]
    assert "unclosed left parenthesis" in report.findings[0].message


def test_promtool_lint_errors_stay_with_their_file(lint: LintFn) -> None:
    needs_promtool()
    same = rule_file(alert("up == 0"), alert("up == 0"))
    report = lint(same, rule_file(alert("up == 1", name="Other")), promtool=True)
    # promtool's duplicate-rules lint is replaced by duplicate-rule (same file, line 13)
    assert [(Path(f.file).name, f.check) for f in report.findings] == [
        ("file0.yaml", "duplicate-rule")
    ]


def test_obsgen_generated_shapes_lint_clean() -> None:
    report = lint_paths([str(DATA / "obsgen_shaped.rules.yaml")], LintConfig(), promtool=False)
    assert report.findings == ()


def _cli(*args: str) -> int:
    return main(["lint", *args])


def test_exit_codes_follow_fail_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(rule_file(alert(BAD_LE + " > 1"))))
    assert _cli(str(path), "--no-promtool") == 1  # warning >= default warning
    assert _cli(str(path), "--no-promtool", "--fail-on", "error") == 0
    assert _cli(str(DATA / "obsgen_shaped.rules.yaml"), "--no-promtool") == 0
    assert _cli(str(tmp_path / "missing.yaml")) == 2
    assert _cli() == 2
    capsys.readouterr()


def test_output_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(rule_file(alert(BAD_LE + " > 1"))))
    _cli(str(path), "--no-promtool", "--format", "json")
    document = json.loads(capsys.readouterr().out)
    assert [f["check"] for f in document["findings"]] == ["le-spelling"]
    assert document["summary"]["warnings"] == 1
    _cli(str(path), "--no-promtool", "--format", "github")
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"::warning file={path},line=")
    assert ",title=obsgen-lint le-spelling::`le=" in line
    _cli(str(path), "--no-promtool")
    assert re.match(rf"{re.escape(str(path))}:\d+: warning: ", capsys.readouterr().out)


def test_config_file_is_read_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(rule_file(alert(BAD_LE + " > 1"))))
    config = tmp_path / "lint.yaml"
    config.write_text("disable: [le-spelling]\n")
    assert _cli(str(path), "--no-promtool", "--config", str(config)) == 0
    config.write_text("disable: [nope]\n")
    assert _cli(str(path), "--no-promtool", "--config", str(config)) == 2
    capsys.readouterr()


def test_findings_are_sorted_by_file_then_line(lint: LintFn) -> None:
    bad = rule_file(alert(BAD_LE + " > 1", name="A"), alert(BAD_LE + " > 2", name="B"))
    report = lint(bad, bad, names=["b.yaml", "a.yaml"])
    keys = [(Path(f.file).name, f.line) for f in report.findings]
    assert keys == sorted(keys)


def test_list_checks_names_every_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli("--list-checks") == 0
    out = capsys.readouterr().out
    assert all(c.id in out for c in all_checks())


def test_every_check_has_its_page_with_a_wrong_and_a_right_example() -> None:
    root = Path(__file__).resolve().parents[2]
    index = (root / "docs" / "lint.md").read_text()
    pages = {path.stem for path in (root / "docs" / "lint").glob("*.md")}
    assert pages == {c.id for c in all_checks()}
    for check in all_checks():
        page = (root / check.doc).read_text()
        assert page.startswith(f"# `{check.id}`\n"), check.id
        assert f"**{check.severity.value}**" in page, check.id
        blocks = page.split("```")[1::2]
        assert any("wrong" in block for block in blocks), check.id
        assert any("right" in block for block in blocks), check.id
        assert f"(lint/{check.id}.md)" in index, check.id


def test_obsgen_committed_outputs_lint_clean_in_every_packaging(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """rules/, manifests/ and helm/ ship the same groups three ways: no duplicate-rule."""
    needs_promtool()
    root = Path(__file__).resolve().parents[2]
    paths = [str(root / folder) for folder in ("rules", "manifests", "helm")]
    assert _cli(*paths) == 0
    out = capsys.readouterr().out
    rule_files = sorted((root / "rules").glob("*.rules.yaml"))
    # Each service ships its rules three ways (rules/, manifests/, helm/); every one is read.
    assert len(rule_files) > 1
    assert out.startswith("no findings in "), out[:2000]
    assert int(out.split()[3]) >= 3 * len(rule_files), out[:2000]
