"""A histogram form the declared Prometheus cannot store (issue 43, "Native histograms and
NHCB"): ``histogram: nhcb`` is Prometheus 3 only (``convert_classic_histograms_to_nhcb``);
``native`` (and ``both``) needs Prometheus 2.40 or later, started with
``--enable-feature=native-histograms`` (Prometheus docs, specs/native_histograms.md: "The
first version of the Prometheus server supporting native histograms was v2.40.0"; stable from
3.8 with ``scrape_native_histograms``). ``obsgen check`` refuses the spec with its file and
field path, or warns about the feature flag where the release has it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator.cli import main
from generator.targets import histogram_problem

NATIVE = Path(__file__).parent / "fixtures" / "slo-native.yaml"
FIELD = "spec.metrics.requestDuration.histogram"


def _check(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    form: str,
    version: str | None,
) -> tuple[int, str]:
    data = yaml.safe_load(NATIVE.read_text())
    data["spec"]["metrics"]["requestDuration"]["histogram"] = form
    data["spec"]["slos"][1]["threshold"] = "1s"  # a bucket bound: valid in every form
    if version is not None:
        data["spec"]["prometheus"] = {"version": version}
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "svc.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    monkeypatch.chdir(tmp_path)
    code = main(["check", "specs/svc.yaml"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("form", "version", "message"),
    [
        ("nhcb", "2", "is Prometheus 3 only"),
        ("nhcb", "2.53", "is Prometheus 3 only"),
        ("native", "2", "from 2.40 on (with --enable-feature=native-histograms)"),
        ("native", "2.39", "from 2.40 on"),
        ("both", "2", "from 2.40 on"),
    ],
)
def test_a_form_the_declared_prometheus_cannot_store_is_refused(
    form: str,
    version: str,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, err = _check(tmp_path, capsys, monkeypatch, form, version)
    assert code == 2, err
    assert f"specs/svc.yaml: {FIELD}: requestDuration: {form}" in err, err
    assert message in err and f"declares '{version}'" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("form", "version"),
    [("nhcb", "3"), ("nhcb", "3.5"), ("native", "3"), ("native", None), ("classic", "2")],
)
def test_forms_the_declared_prometheus_stores_pass(
    form: str,
    version: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, err = _check(tmp_path, capsys, monkeypatch, form, version)
    assert code == 0, err
    assert "native-histograms" not in err


def test_native_on_a_prometheus_2_that_has_it_warns_about_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, err = _check(tmp_path, capsys, monkeypatch, "native", "2.53")
    assert code == 0, err
    assert FIELD in err and "--enable-feature=native-histograms" in err, err


def test_the_rule_in_one_place() -> None:
    assert histogram_problem("classic", "2") == (None, None)
    assert histogram_problem("nhcb", "compat") == (None, None)
    error, warning = histogram_problem("nhcb", "2.53")
    assert error is not None and warning is None
