"""Every spec error in one pass: ``check`` and ``render`` report the problems of obsgen.yaml
and of every spec file together, each with its file and field path, and an unknown key with the
near miss among the keys accepted there ("did you mean") or the keys themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main
from generator.near_keys import known_keys, suggestion
from generator.project_config import ProjectConfig
from generator.receivers import ReceiversConfig
from generator.spec import ModelServiceSpec
from tests.factories import good_spec, set_path, write_spec


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with a bad obsgen.yaml and two bad specs, as the working directory."""
    a = set_path(good_spec(), "spec.alerts.kvCache", {"maxUsage": 0.9})
    a = set_path(a, "spec.alerts.queueDepth.max", -1)
    a["spec"]["selectr"] = {}
    write_spec(tmp_path / "specs", a, "a.yaml")
    b = set_path(good_spec(), "metadata.name", "b")
    b = set_path(b, "spec.slos[0].objectiv", 0.99)
    write_spec(tmp_path / "specs", b, "b.yaml")
    (tmp_path / "obsgen.yaml").write_text("render:\n  outptus: [rules]\n  fleetName: 5\n")
    (tmp_path / "alertmanager").mkdir()
    (tmp_path / "alertmanager" / "receivers.yaml").write_text(
        "apiVersion: obsgen/v1alpha1\nkind: AlertReceivers\nteams:\n  - {name: ml-platform, paeg: {}}\n"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


EXPECTED = [
    "obsgen.yaml: render.outptus: unknown field; check the spelling (keys are camelCase); "
    "did you mean 'outputs'?",
    "obsgen.yaml: render.fleetName: Input should be a valid string (got 5)",
    "specs/a.yaml: spec.alerts.kvCache.maxUsage: unknown field; check the spelling (keys are "
    "camelCase); did you mean 'max'?",
    "specs/a.yaml: spec.alerts.queueDepth.max: Input should be greater than or equal to 0 (got -1)",
    "specs/a.yaml: spec.selectr: unknown field; check the spelling (keys are camelCase); "
    "did you mean 'selector'?",
    "specs/b.yaml: spec.slos[0].objectiv: unknown field; check the spelling (keys are "
    "camelCase); did you mean 'objective'?",
    "alertmanager/receivers.yaml: teams[0].paeg: unknown field; check the spelling (keys are "
    "camelCase); did you mean 'page'?",
]


@pytest.mark.parametrize(
    "command", [["check"], ["render", "--skip-promtool", "--quiet"]], ids=["check", "render"]
)
def test_every_problem_of_every_file_in_one_run(
    broken: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    assert main(command) == 2
    err = capsys.readouterr().err
    for line in EXPECTED:
        assert line in err, err
    assert "Traceback" not in err
    assert not (broken / "rules").exists()


@pytest.mark.parametrize(
    ("model", "loc", "expected"),
    [
        pytest.param(ModelServiceSpec, ("spec", "alerts", "kvCache", "maxUsage"), "'max'", id="prefix"),
        pytest.param(ModelServiceSpec, ("spec", "slos", 1, "windw"), "'window'", id="in a list"),
        pytest.param(ModelServiceSpec, ("metadata", "runbookBaseURL"), "'runbookBaseUrl'", id="case"),
        pytest.param(ProjectConfig, ("render", "dashboardVia"), "'dashboardsVia'", id="obsgen.yaml"),
        pytest.param(ReceiversConfig, ("teams", 0, "paeg"), "'page'", id="receivers"),
    ],
)  # fmt: skip
def test_the_near_miss_is_found_where_the_key_was_written(
    model: type, loc: tuple[int | str, ...], expected: str
) -> None:
    assert suggestion(model, loc) == f"; did you mean {expected}?"


def test_no_near_miss_lists_the_keys_accepted_there() -> None:
    assert suggestion(ModelServiceSpec, ("spec", "alerts", "queueDepth", "zzz")) == (
        "; expected one of: enabled, for, max, severity"
    )
    assert known_keys(ModelServiceSpec, ("nowhere", "at", "all")) == []
    assert suggestion(None, ("spec", "selectr")) == ""
