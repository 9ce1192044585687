"""``obsgen explain`` prints the Workbook numbers."""

from __future__ import annotations

import pytest

from generator.cli import main
from generator.commands.explain import format_plan
from tests.helpers_promtool import ROOT
from tests.test_per_model import SLOS, _plan
from tests.test_server_reality import plan_of, spec_data


def test_explain_o1_preview_prints_the_workbook_tier_table(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["explain", "specs/o1-preview.yaml"]) == 0
    out = capsys.readouterr().out
    rows = {
        line.split()[0] + "/" + out[: out.index(line)].rsplit("SLO ", 1)[1].split()[0]: line.split()
        for line in out.splitlines()
        if line.startswith("  ") and "/" in line.split()[0]
    }
    assert rows["1h/5m/availability"] == [
        "1h/5m",
        "critical",
        "14.4×",
        "0.0144",
        "2%",
        "1m",
        "51.84s",
        "31m",
        "30m",
        "5m",
        "4m55.68s",
    ]
    assert rows["6h/30m/availability"][2:5] == ["6×", "0.006", "5%"]
    assert rows["3d/6h/latency"][2:5] == ["1×", "0.01", "10%"]
    # Within one 1m evaluation of the Workbook's instant ratio, never before it.
    assert rows["1h/5m/latency"][5:] == ["9m", "8m38.4s", "31m", "30m", "5m", "4m16.8s"]
    # The 3d window sums hourly tiles: it fires at the first whole hour after the onset + 43m12s.
    assert rows["3d/6h/latency"][5:] == ["59m", "43m12s", "1d12h59m", "1d12h", "5h57m", "5h56m24s"]
    assert "1m evaluation and 30s scrape interval" in out.replace("\n", " ")


def test_explain_refuses_a_bad_spec(
    tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = (
        (ROOT / "specs" / "o1-preview.yaml").read_text().replace("objective: 99.9", "objective: 90")
    )
    path = tmp_path / "x.yaml"  # type: ignore[operator]
    path.write_text(spec)
    assert main(["explain", str(path)]) == 2
    assert "burn rates must stay below 10×" in capsys.readouterr().err


def test_explain_shows_a_default_tier_raised_to_one_times(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explain", str(ROOT / "tests" / "fixtures" / "slo-28d.yaml")]) == 0
    out = capsys.readouterr().out
    assert "3d/6h   warning   1×      0.005      10.71% (raised from 10% to reach 1×)" in out


def test_explain_says_when_twice_the_factor_is_over_a_total_outage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 95 %: the 14.4× tier needs 72 % bad events, twice that cannot happen.
    assert main(["explain", str(ROOT / "specs" / "triton-trtllm.yaml")]) == 0
    out = capsys.readouterr().out
    latency = out[out.index("SLO latency-ttft") :]
    row = next(line.split() for line in latency.splitlines() if line.startswith("  1h/5m"))
    assert row[3:] == ["0.72", "2%", "44m", "43m12s", "n/a", "n/a", "2m", "1m24s"]


def test_explain_lists_per_model_slos_with_their_tiers() -> None:
    text = format_plan(_plan())
    line = (
        "  per model (model_name): llama-8b, qwen.7b and 'other' (the rest); "
        "ErrorBudgetBurnByModel on 1h/5m critical, 6h/30m critical, 1d/2h warning, 3d/6h warning"
    )
    assert text.count(line) == 2  # availability and ttft
    assert (
        "ModelTrafficUnwatched: a ticket when models spec.models does not name carry over 50%"
        in text
    )
    older = format_plan(_plan(serverVersion="0.11"))
    assert "  per model: none (its counters carry no model_name: service level only)" in older


def test_explain_without_models_says_nothing_of_them() -> None:
    text = format_plan(plan_of(spec_data("vllm", serverVersion="0.13", slos=SLOS)))
    assert "per model" not in text and "ModelTrafficUnwatched" not in text
