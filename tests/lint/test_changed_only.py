"""Diff mode: `--changed-only` against a git base ref, and `--diff FILE`, report only the
findings on rules the change touched (and on rules reading a series a touched rule records)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from generator.cli import main

BAD = """groups:
- name: g
  rules:
  - alert: Old
    expr: irate(a_total[5m]) > 1
    for: 5m
    labels: {severity: warning}
    annotations: {summary: s, runbook_url: https://r/x}
  - record: job:b:rate5m
    expr: sum by (job) (rate(b_total[5m]))
  - alert: ReadsRecord
    expr: job:b:rate5m > 1
    for: 5m
    labels: {severity: warning}
    annotations: {summary: "{{ $labels.pod }}", runbook_url: https://r/x}
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _git(tmp_path, "init", "-q")
    (tmp_path / "rules.yaml").write_text(BAD)
    _git(tmp_path, "add", "rules.yaml")
    _git(tmp_path, "commit", "-qm", "base")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _findings(capsys: pytest.CaptureFixture[str], *args: str) -> list[tuple[str, str]]:
    main(["lint", "--no-promtool", "--format", "json", *args])
    found = json.loads(capsys.readouterr().out)["findings"]
    return sorted((f["rule"], f["check"]) for f in found)


def test_only_findings_on_changed_rules_are_reported(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    everything = _findings(capsys, "rules.yaml")
    assert everything == [("Old", "irate-in-alert"), ("ReadsRecord", "template-label")]
    assert _findings(capsys, "--changed-only", "rules.yaml") == []
    text = BAD.replace("summary: s,", "summary: changed,")
    (repo / "rules.yaml").write_text(text)
    assert _findings(capsys, "--changed-only", "rules.yaml") == [("Old", "irate-in-alert")]


def test_a_changed_recording_rule_touches_the_rules_reading_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "rules.yaml").write_text(BAD.replace("sum by (job)", "sum by (job, le)"))
    assert _findings(capsys, "--changed-only", "rules.yaml") == [("ReadsRecord", "template-label")]


def test_against_a_base_ref_new_files_count_whole(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(repo, "checkout", "-qb", "topic")
    (repo / "new.yaml").write_text(BAD.replace("Old", "New").replace("ReadsRecord", "Reads2"))
    found = _findings(capsys, "--changed-only", "--base", "HEAD", "new.yaml", "rules.yaml")
    assert ("New", "irate-in-alert") in found
    assert ("Old", "irate-in-alert") not in found


def test_a_diff_file_names_the_changed_lines(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    diff = repo / "change.diff"
    diff.write_text("--- a/rules.yaml\n+++ b/rules.yaml\n@@ -5 +5 @@\n-x\n+y\n")
    assert _findings(capsys, "--diff", str(diff), "rules.yaml") == [("Old", "irate-in-alert")]


def test_an_unknown_base_ref_is_a_usage_error(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lint", "--no-promtool", "--changed-only", "--base", "nope", "rules.yaml"]) == 2
    assert "--changed-only" in capsys.readouterr().err


def test_removing_a_recording_rule_reports_the_rules_reading_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ReadsRecord's own lines do not change and are not next to the deletion."""
    old, record, reads = BAD.split("  - ")[1:]
    head = BAD.split("  - ")[0]
    (repo / "rules.yaml").write_text(head + "  - " + reads + "  - " + old + "  - " + record)
    _git(repo, "commit", "-qam", "record last")
    (repo / "rules.yaml").write_text(head + "  - " + reads + "  - " + old)
    assert _findings(capsys, "--changed-only", "rules.yaml") == [
        ("Old", "irate-in-alert"),
        ("ReadsRecord", "record-missing"),
    ]
