"""Bounded work on hostile input (issue 15, lint items): each case ends as one per-file
``unreadable-input`` finding within seconds, and the other files are still linted."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import yaml

from generator.cli import main
from generator.lint import LintConfig, Severity, limits, lint_paths

from .helpers import alert, prometheus_rule, rule_file

GOOD = rule_file(alert('sum(rate(x_bucket{le="1"}[5m])) > 1'))


def _billion_laughs() -> str:
    """626-byte-class alias bomb: 9 levels of 10 aliases (10⁹ nodes once expanded)."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        lines.append(f"a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * 10) + "]")
    lines.append("groups: [{name: g, rules: [{record: 'a:b:c', expr: up, labels: {x: *a9}}]}]")
    return "\n".join(lines) + "\n"


def _lint_folder(folder: Path) -> tuple[dict[str, list[tuple[str, int, str]]], int]:
    (folder / "z-good.yaml").write_text(yaml.safe_dump(GOOD))
    started = time.monotonic()
    report = lint_paths([str(folder)], LintConfig(), promtool=False)
    assert time.monotonic() - started < 10
    found: dict[str, list[tuple[str, int, str]]] = {}
    for f in report.findings:
        found.setdefault(Path(f.file).name, []).append((f.check, f.line, f.message))
    assert [c for c, _, _ in found.pop("z-good.yaml")] == ["le-spelling"]
    return found, report.unreadable


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        pytest.param(_billion_laughs(), 6, "expands to more than", id="billion laughs"),
        pytest.param("groups: " + "[" * 500 + "]" * 500 + "\n", 1, "nests deeper", id="deep"),
        pytest.param(
            "groups:\n- name: g\n  interval: " + "9" * 5000 + "\n  rules: []\n",
            3,
            "an integer of 5000 characters",
            id="5000-digit integer",
        ),
    ],
)
def test_hostile_yaml_is_refused_per_file(tmp_path: Path, text: str, line: int, words: str) -> None:
    (tmp_path / "a-hostile.yaml").write_text(text)
    found, unreadable = _lint_folder(tmp_path)
    assert unreadable == 1
    [(check, at, message)] = found["a-hostile.yaml"]
    assert (check, at) == ("unreadable-input", line)
    assert words in message


def test_long_sum_expression_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    """Issue 15 case 1: a 1,000-term `up + up + …` (promtool accepts it)."""
    expr = " + ".join(["up"] * 1000) + " > 0"
    text = yaml.safe_dump(rule_file(alert(expr)), sort_keys=False)
    (tmp_path / "a-sum.yaml").write_text(text)
    found, unreadable = _lint_folder(tmp_path)
    assert unreadable == 1
    [(check, line, message)] = found["a-sum.yaml"]
    expr_line = next(n for n, t in enumerate(text.splitlines(), 1) if t.startswith("    expr:"))
    assert (check, line) == ("unreadable-input", expr_line)
    assert "1000 levels" in message and f"{limits.MAX_EXPR_NESTING}" in message


def test_expressions_at_the_limit_are_still_linted(tmp_path: Path) -> None:
    terms = limits.MAX_EXPR_NESTING // 2
    expr = " + ".join(['rate(x_bucket{le="1"}[5m])'] * terms) + " > 1"
    assert limits.expression_nesting(expr) <= limits.MAX_EXPR_NESTING
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(rule_file(alert(expr))))
    report = lint_paths([str(tmp_path)], LintConfig(), promtool=False)
    assert {f.check for f in report.findings} == {"le-spelling"}


def test_fifo_and_device_symlink_in_a_folder_are_skipped_with_a_finding(tmp_path: Path) -> None:
    """Issue 15 case 2: a FIFO named x.yaml would block read() forever; /dev/zero never ends."""
    os.mkfifo(tmp_path / "x.yaml")
    os.symlink("/dev/zero", tmp_path / "zero.yaml")
    os.symlink(tmp_path / "loop.yaml", tmp_path / "loop.yaml")
    found, unreadable = _lint_folder(tmp_path)
    assert unreadable == 3
    assert found["x.yaml"] == [("unreadable-input", 0, "a FIFO, not a regular file: skipped")]
    assert found["zero.yaml"] == [
        ("unreadable-input", 0, "a character device, not a regular file: skipped")
    ]
    assert found["loop.yaml"][0][0] == "unreadable-input"
    assert "symbolic links" in found["loop.yaml"][0][2]


def test_device_named_explicitly_is_read_only_up_to_the_size_limit(tmp_path: Path) -> None:
    os.symlink("/dev/zero", tmp_path / "zero.yaml")
    report = lint_paths([str(tmp_path / "zero.yaml")], LintConfig(), promtool=False)
    [finding] = report.findings
    assert (finding.check, finding.severity) == ("unreadable-input", Severity.ERROR)
    assert "larger than the 8 MiB limit" in finding.message


def test_oversized_regular_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with open(big, "wb") as handle:
        handle.truncate(limits.MAX_FILE_BYTES + 1)
    found, _ = _lint_folder(tmp_path)
    assert found["big.yaml"][0][2].startswith("file is larger than the 8 MiB limit (8388609")


def test_prometheusrule_with_groups_mapping_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 15 case 3: it used to pass with "no findings", exit 0."""
    doc = prometheus_rule("demo", alert("up == 0"))
    doc["spec"]["groups"] = {"demo": doc["spec"]["groups"][0]}
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert main(["lint", "--no-promtool", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:7: error: spec.groups: expected a list of rule groups, got a mapping" in out


def test_non_mapping_group_inside_a_prometheusrule_is_a_finding(tmp_path: Path) -> None:
    doc = prometheus_rule("demo", alert("up == 0"))
    doc["spec"]["groups"].append("oops")
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    report = lint_paths([str(path)], LintConfig(), promtool=False)
    shapes = [f for f in report.findings if f.check == "rule-shape"]
    assert [f.message for f in shapes] == ["group 2: expected a mapping, got a str ('oops')"]
