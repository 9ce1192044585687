"""What ``obsgen lint`` prints quotes the linted files (their names, rule names, expressions):
no newline from them starts a line of its own, where a CI runner would read
``::error file=…::`` as a workflow command, and no terminal escape reaches the terminal, in the
text and the github formats alike; the JSON format keeps the text exact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.cli import main

EVIL_RULE = "A\x1b[2K\x1b[31mRED\n::error file=x.yaml::injected\r\n::add-mask::x"
RULES = (
    "groups:\n- name: g\n  rules:\n  - alert: {name}\n    expr: irate(a_total[5m]) > 1\n"
    "    labels: {{severity: warning}}\n    annotations: {{summary: s, runbook_url: https://r/x}}\n"
)


@pytest.fixture
def evil(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rules.yaml").write_text(RULES.format(name=json.dumps(EVIL_RULE)))
    (tmp_path / "x\n::error::named.yaml").write_text(RULES.format(name="Plain"))
    return tmp_path


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_no_line_or_escape_of_the_linted_files_reaches_the_output(
    evil: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["lint", "--no-promtool", "--format", fmt, "--fail-on", "never", "."])
    out = capsys.readouterr().out
    assert code == 0
    assert "\x1b" not in out and "\r" not in out
    lines = out.splitlines()
    assert not [line for line in lines if line.startswith(("::error file=x", "::add-mask"))]
    if fmt == "text":
        assert not [line for line in lines if line.startswith("::")]
    assert "irate-in-alert" in out


def test_json_keeps_the_rule_name_exact(evil: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["lint", "--no-promtool", "--format", "json", "--fail-on", "never", "rules.yaml"])
    found = json.loads(capsys.readouterr().out)["findings"]
    assert {f["rule"] for f in found} == {EVIL_RULE}
