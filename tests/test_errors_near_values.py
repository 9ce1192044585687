"""Spec errors of new kinds in one pass, several files at once: a value outside a fixed set
gets the near one ("did you mean 'sidecar'?", case included), a number written in quotes is
told to lose them, nested unknown keys in lists keep their index, and the receivers file gets
the same; nothing is a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main
from generator.near_keys import is_number_text, value_suggestion
from tests.factories import good_spec, set_path, write_spec


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    a = set_path(good_spec(), "spec.gpu.exporter", "sidcar")
    a = set_path(a, "spec.alerts.errorRatio.severity", "Critical")
    a = set_path(a, "spec.slos[1].objective", "99")
    a["spec"]["slos"][1]["thershold"] = a["spec"]["slos"][1].pop("threshold")
    a = set_path(a, "spec.slos[0].alerting", {"tiers": [{"shortWindw": "5m"}]})
    write_spec(tmp_path / "specs", a, "a.yaml")
    b = set_path(good_spec(), "metadata.name", "b")
    b = set_path(b, "spec.server", "vlm")
    b = set_path(b, "spec.deployment.kind", "statefulset")
    write_spec(tmp_path / "specs", b, "b.yaml")
    (tmp_path / "alertmanager").mkdir()
    (tmp_path / "alertmanager" / "receivers.yaml").write_text(
        "apiVersion: obsgen/v1alpha1\nkind: AlertReceivers\nteams:\n"
        "  - name: ml-platform\n"
        "    page: [{webhook: {url: 'https://x.example/h', maxAlerts: '5'}}]\n"
        "    ticket: [{webhok: {url: 'https://x.example/h'}}]\n"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


EXPECTED = [
    "specs/a.yaml: spec.gpu.exporter: Input should be 'none', 'sidecar' or 'dcgm' (got "
    "'sidcar'); did you mean 'sidecar'?",
    "specs/a.yaml: spec.alerts.errorRatio.severity: Input should be 'critical', 'warning' or "
    "'info' (got 'Critical'); did you mean 'critical'?",
    "specs/a.yaml: spec.slos[1].objective: Input should be a valid number (got '99'); write the "
    "number without quotes",
    "specs/a.yaml: spec.slos[1].thershold: unknown field; check the spelling (keys are "
    "camelCase); did you mean 'threshold'?",
    "specs/a.yaml: spec.slos[0].alerting.tiers[0].shortWindw: unknown field; check the spelling "
    "(keys are camelCase); did you mean 'shortWindow'?",
    "specs/b.yaml: spec.server: Input should be 'vllm', 'sglang', 'trtllm', 'tgi', 'triton' or "
    "'openai-http' (got 'vlm'); did you mean 'vllm'?",
    "specs/b.yaml: spec.deployment.kind: Input should be 'Deployment' or 'StatefulSet' (got "
    "'statefulset'); did you mean 'StatefulSet'?",
    "alertmanager/receivers.yaml: teams[0].page[0].webhook.maxAlerts: Input should be a valid "
    "integer (got '5'); write the number without quotes",
    "alertmanager/receivers.yaml: teams[0].ticket[0].webhok: unknown field; check the spelling "
    "(keys are camelCase); did you mean 'webhook'?",
]


def test_every_problem_of_every_file_in_one_pass_with_the_near_value(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    missing = [line for line in EXPECTED if line not in err]
    assert missing == [], err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("given", "expected", "said"),
    [
        ("sidcar", "'none', 'sidecar' or 'dcgm'", "; did you mean 'sidecar'?"),
        ("WARNING", "'critical', 'warning' or 'info'", "; did you mean 'warning'?"),
        ("pager", "'critical', 'warning' or 'info'", ""),
        (5, "'critical', 'warning' or 'info'", ""),
        ("", "'a' or 'b'", ""),
        ("x" * 10_000, "'critical', 'warning' or 'info'", ""),
    ],
)
def test_the_near_value_is_one_of_the_choices_or_nothing(
    given: object, expected: str, said: str
) -> None:
    assert value_suggestion(given, expected) == said


@pytest.mark.parametrize(
    ("given", "number"),
    [("99", True), ("0.02", True), ("1e3", True), ("NaN", False), ("inf", False), ("x", False)],
)
def test_quoted_numbers_are_told_apart_from_text(given: str, number: bool) -> None:
    assert is_number_text(given) is number
