"""Evaluation delay (issue 43): obsgen.yaml ``ruler.evaluationDelay`` declares a ruler reading
remote-written data. Every rule group gets ``query_offset`` (Prometheus 2.53+ and 3.x rule-group
field, ``model/rulefmt`` ``RuleGroup.QueryOffset``; the Mimir ruler reads the same format), the
generated promtool cases expect each alert that much later — promtool 3.16 honours the field,
so the same cases fail against the rules without it — and a spec whose declared Prometheus
cannot load the field (2.42, ``2``, ``compat``) is refused with its file and field.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import core
from generator.cli import main
from generator.render import load_plans
from generator.units import parse_duration_ms
from tests import toolchain
from tests.factories import set_path, write_spec

SPEC = Path(__file__).parent / "fixtures" / "slo-duplicates.yaml"


def _spec(version: str = "3", **prometheus: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(SPEC.read_text())
    return set_path(data, "spec.prometheus", {"version": version, **prometheus})


def _render(root: Path, data: dict[str, Any], config: str | None) -> dict[str, str]:
    spec = write_spec(root / "specs", data, "chat.yaml")
    if config is not None:
        (root / "obsgen.yaml").write_text(config)
    return {
        rel: text
        for rel, text in core.build(load_plans([spec], root)).items()
        if rel.startswith("rules/")
    }


DELAY = "ruler:\n  evaluationDelay: 2m\n"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    base = tmp_path_factory.mktemp("delay")
    return {
        "plain": _render(base / "plain", _spec(), None),
        "delayed": _render(base / "delayed", _spec(), DELAY),
    }


def _groups(files: dict[str, str]) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = yaml.safe_load(files["rules/chat-dup.rules.yaml"])["groups"]
    return groups


def _eval_times(files: dict[str, str]) -> dict[tuple[str, str], list[int]]:
    """Each generated case's checks (ms), by test file and case name."""
    return {
        (rel, group["name"]): [parse_duration_ms(c["eval_time"]) for c in group["alert_rule_test"]]
        for rel, text in sorted(files.items())
        if rel.endswith(".test.yaml")
        for group in yaml.safe_load(text)["tests"]
    }


def test_every_rule_group_gets_the_query_offset(rendered: dict[str, dict[str, str]]) -> None:
    groups = _groups(rendered["delayed"])
    assert groups and all(g["query_offset"] == "2m" for g in groups)
    assert all("query_offset" not in g for g in _groups(rendered["plain"]))


def test_every_expected_alert_moves_by_the_delay(rendered: dict[str, dict[str, str]]) -> None:
    """Detection time plus the offset: each check of the delayed cases is its plain check
    2m later (the inputs stay where they were)."""
    plain, delayed = _eval_times(rendered["plain"]), _eval_times(rendered["delayed"])
    shared = sorted(plain.keys() & delayed.keys())
    # every case of the main file is kept (slower detection intervals that the offset does not
    # tile are left out: generator/cases/detection_cases.py)
    main_file = "rules/chat-dup.test.yaml"
    assert {k for k in plain if k[0] == main_file} <= set(shared)
    for key in shared:
        assert [d - p for p, d in zip(plain[key], delayed[key], strict=True)] == [120_000] * len(
            plain[key]
        ), key


def _promtool_test(files: dict[str, str], folder: Path, drop_offset: bool = False) -> str:
    folder.mkdir()
    for rel, text in files.items():
        if drop_offset and rel.endswith(".rules.yaml"):
            text = text.replace("  query_offset: 2m\n", "")
        (folder / Path(rel).name).write_text(text)
    tests = sorted(p.name for p in folder.iterdir() if p.name.endswith(".test.yaml"))
    result = subprocess.run(
        [toolchain.binary("prometheus3", "promtool"), "test", "rules", *tests],
        capture_output=True,
        text=True,
        check=False,
        cwd=folder,
        timeout=600,
    )
    return ("ok\n" if result.returncode == 0 else "failed\n") + result.stdout + result.stderr


def test_the_delayed_alerts_fire_on_time_and_a_ruler_without_the_offset_fails(
    rendered: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    """promtool 3.16 honours ``query_offset``: the delayed cases pass with it; the rules
    without it fire 2m early, so the same cases fail."""
    out = _promtool_test(rendered["delayed"], tmp_path / "with")
    assert out.startswith("ok"), out[-4000:]
    out = _promtool_test(rendered["delayed"], tmp_path / "without", drop_offset=True)
    assert out.startswith("failed") and "FAILED" in out, out[-2000:]


def test_a_spec_s_own_query_offset_wins(tmp_path: Path) -> None:
    files = _render(tmp_path, _spec(queryOffset="1m"), DELAY)
    assert all(g["query_offset"] == "1m" for g in _groups(files))


def _check(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    data: dict[str, Any],
    config: str,
) -> tuple[int, str]:
    write_spec(tmp_path / "specs", data, "chat.yaml")
    (tmp_path / "obsgen.yaml").write_text(config)
    monkeypatch.chdir(tmp_path)
    code = main(["check", "specs/chat.yaml"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("version", ["2.42", "2", "compat", "2.52"])
def test_a_target_without_query_offset_is_refused(
    version: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = _check(tmp_path, monkeypatch, capsys, _spec(version), DELAY)
    assert code == 2, err
    assert "specs/chat.yaml: spec.prometheus.version" in err, err
    assert "ruler.evaluationDelay" in err and "query_offset" in err and "2.53" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("version", ["2.53", "3", "3.5"])
def test_a_target_with_query_offset_is_accepted(
    version: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = _check(tmp_path, monkeypatch, capsys, _spec(version), DELAY)
    assert code == 0, err


def test_a_delay_that_does_not_tile_the_evaluation_interval_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _spec(evaluationInterval="5m")
    code, err = _check(tmp_path, monkeypatch, capsys, data, "ruler:\n  evaluationDelay: 3m\n")
    assert code == 2, err
    assert "spec.prometheus.evaluationInterval" in err and "not a multiple" in err, err


@pytest.mark.parametrize("delay", ["30s", "90s", "2h", "0s"])
def test_the_delay_is_whole_minutes(
    delay: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = f"ruler:\n  evaluationDelay: {delay}\n"
    code, err = _check(tmp_path, monkeypatch, capsys, _spec(), config)
    assert code == 2, err
    assert "obsgen.yaml: ruler.evaluationDelay" in err, err
