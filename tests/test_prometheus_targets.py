"""What the declared Prometheus target can load (generator/targets.py): ``spec.prometheus.version``
accepts a release line, rule-file fields newer than the declared floor are refused with the field
that asks for them, and ``keepFiringFor`` on burn-rate alerts is written and proved on both
majors (a burst that ended keeps its page for keepFiringFor, then resolves)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import targets
from generator.cli import main
from tests import toolchain
from tests.factories import good_spec, set_path, write_spec
from tests.helpers_promtool import assert_ok, render_to, run_promtool


def _check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: dict[str, Any]
) -> tuple[int, str]:
    spec = write_spec(tmp_path / "specs", data, "svc.yaml")
    code = main(["check", str(spec)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "major", "floor"),
    [
        ("compat", "compat", (2, 0)),
        ("2", "2", (2, 0)),
        ("3", "3", (3, 0)),
        ("2.53", "2", (2, 53)),
        ("3.10", "3", (3, 10)),
    ],
)
def test_a_declared_version_is_a_major_and_a_floor(
    text: str, major: str, floor: tuple[int, int]
) -> None:
    assert targets.parse(text) == (major, floor)


@pytest.mark.parametrize("bad", ["4", "2.x", "v3", "3.", "latest", "", "2.53.1"])
def test_an_unknown_version_is_refused_with_the_forms_expected(
    bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = set_path(good_spec(), "spec.prometheus", {"version": bad})
    code, err = _check(tmp_path, capsys, data)
    assert code == 2 and "spec.prometheus.version" in err and '"2.53"' in err, err
    assert "Traceback" not in err


def test_an_unquoted_release_line_is_refused_with_the_quoting_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = set_path(good_spec(), "spec.prometheus", {"version": 2.53})
    code, err = _check(tmp_path, capsys, data)
    assert code == 2 and 'version: "2.53"' in err, err


def _kff(version: str | int, keep: str = "10m") -> dict[str, Any]:
    data = good_spec()
    set_path(data, "spec.prometheus", {"version": version})
    set_path(data, "spec.slos[0].alerting", {"keepFiringFor": keep})
    return data


@pytest.mark.parametrize("version", ["compat", 2, "2.41", "2.0"])
def test_keep_firing_for_on_a_target_older_than_2_42_is_refused(
    version: str | int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _check(tmp_path, capsys, _kff(version))
    assert code == 2, err
    assert "spec.slos[0].alerting.keepFiringFor" in err and "2.42" in err and "0.66" in err, err


@pytest.mark.parametrize("version", ["2.42", "2.53", 3, "3.16"])
def test_keep_firing_for_on_a_target_that_loads_it_is_accepted(
    version: str | int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _check(tmp_path, capsys, _kff(version))
    assert code == 0, err


def test_keep_firing_for_is_written_on_that_slos_burn_alerts_only(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, _kff("2.53"), "kff.yaml")
    files = render_to(spec, tmp_path / "out")
    rules = [
        r
        for g in yaml.safe_load(files["rules/o1-preview.rules.yaml"].read_text())["groups"]
        for r in g["rules"]
        if "alert" in r
    ]
    kept = {r["labels"].get("slo") for r in rules if "keep_firing_for" in r}
    assert kept == {good_spec()["spec"]["slos"][0]["name"]}
    assert all(
        r["keep_firing_for"] == "10m" and r["alert"] == "ErrorBudgetBurn"
        for r in rules
        if "keep_firing_for" in r
    )
    # Without it, no rule carries the field (the default stays loadable by any Prometheus 2).
    plain = render_to(write_spec(tmp_path, good_spec(), "plain.yaml"), tmp_path / "plain")
    groups = yaml.safe_load(plain["rules/o1-preview.rules.yaml"].read_text())["groups"]
    assert not [r for g in groups for r in g["rules"] if "keep_firing_for" in r]


@pytest.fixture(scope="module")
def kept_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("kff")
    return render_to(write_spec(folder, _kff("3"), "kff.yaml"), folder / "out")


def test_a_burst_that_ended_keeps_its_page_for_keep_firing_for_then_resolves(
    kept_files: dict[str, Path],
) -> None:
    doc = yaml.safe_load(kept_files["rules/o1-preview.test.yaml"].read_text())
    cases = [t for t in doc["tests"] if "after keepFiringFor 10m" in t["name"]]
    assert cases, "no burst-ended case checks keepFiringFor"
    fast = next(c for c in cases if " 1h/5m: " in c["name"])
    (during, after) = fast["alert_rule_test"]
    windows = lambda check: {a["exp_labels"]["long_window"] for a in check["exp_alerts"]}  # noqa: E731
    assert "1h" in windows(during) and "1h" not in windows(after)


@pytest.mark.parametrize("major", ["prometheus3", "prometheus2"])
def test_keep_firing_for_rules_and_tests_pass_promtool_of_both_majors(
    major: str, kept_files: dict[str, Path]
) -> None:
    tool = toolchain.binary(major, "promtool")
    rules = [p for r, p in kept_files.items() if r.endswith(".rules.yaml")]
    tests = [p for r, p in kept_files.items() if r.endswith(".test.yaml")]
    for args in (
        ["check", "rules", "--lint=all", "--lint-fatal", *rules],
        ["test", "rules", *tests],
    ):
        out = subprocess.run(
            [tool, *map(str, args)], capture_output=True, text=True, timeout=900, check=False
        )
        assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]


def test_the_suite_proves_on_promtool_3() -> None:
    out = run_promtool("--version")
    assert_ok(out)
    assert "version 3." in out.stdout + out.stderr


def test_render_says_which_promtool_and_major_proved_the_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path / "specs", good_spec(), "svc.yaml")
    assert main(["render", "--no-cache", "--out", str(tmp_path / "out"), str(spec)]) == 0
    assert "; proved with promtool 3.16.0 (Prometheus 3)" in capsys.readouterr().out
    assert main(["render", "--skip-promtool", "--out", str(tmp_path / "o2"), str(spec)]) == 0
    assert "proved with" not in capsys.readouterr().out


OFFSET_SPEC = Path(__file__).parent / "fixtures" / "slo-query-offset.yaml"


def _offset(version: str | int, offset: str) -> dict[str, Any]:
    data = good_spec()
    set_path(data, "spec.prometheus", {"version": version, "queryOffset": offset})
    return data


@pytest.mark.parametrize("version", ["compat", 2, "2.52", "2.42"])
def test_query_offset_below_2_53_is_refused(
    version: str | int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _check(tmp_path, capsys, _offset(version, "2m"))
    assert code == 2 and "spec.prometheus.queryOffset" in err, err
    assert "2.53" in err and "0.78" in err, err


@pytest.mark.parametrize(
    ("offset", "expected"),
    [
        ("30s", "whole minutes"),
        ("90s", "whole minutes"),
        ("2h", "whole minutes"),
        ("0s", "positive duration"),
    ],
)
def test_query_offset_must_be_whole_minutes(
    offset: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _check(tmp_path, capsys, _offset("3", offset))
    assert code == 2 and "spec.prometheus.queryOffset" in err and expected in err, err


def test_query_offset_must_be_whole_evaluations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _offset("3", "3m")
    data["spec"]["prometheus"]["evaluationInterval"] = "5m"
    code, err = _check(tmp_path, capsys, data)
    assert code == 2 and "not a multiple of spec.prometheus.evaluationInterval" in err, err


@pytest.fixture(scope="module")
def offset_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return render_to(OFFSET_SPEC, tmp_path_factory.mktemp("offset"))


def test_every_rule_group_carries_the_query_offset(offset_files: dict[str, Path]) -> None:
    groups = yaml.safe_load(offset_files["rules/chat-offset.rules.yaml"].read_text())["groups"]
    assert groups and all(g["query_offset"] == "2m" for g in groups)


@pytest.mark.parametrize("major", ["prometheus3", "prometheus2"])
def test_query_offset_tests_pass_and_catch_a_ruler_without_the_offset(
    major: str, offset_files: dict[str, Path], tmp_path: Path
) -> None:
    tool = toolchain.binary(major, "promtool")
    tests = sorted(p for r, p in offset_files.items() if r.endswith(".test.yaml"))
    ok = subprocess.run(
        [tool, "test", "rules", *map(str, tests)], capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0, ok.stdout[-4000:]
    # The same tests against the rules without the offset: alerts fire 2m early, so they fail.
    for path in offset_files.values():
        target = tmp_path / path.name
        text = path.read_text()
        target.write_text(
            text.replace("  query_offset: 2m\n", "") if path.name.endswith(".rules.yaml") else text
        )
    without = subprocess.run(
        [tool, "test", "rules", *(str(tmp_path / t.name) for t in tests)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert without.returncode != 0 and "FAILED" in without.stdout + without.stderr
