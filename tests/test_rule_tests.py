"""Generated rule files pass ``promtool check rules``; generated tests pass ``promtool test rules``
and fail when a rendered threshold is broken."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from generator.proof_split import assertion_keys, split_test_file
from tests import toolchain
from tests.factories import good_spec, set_path, write_spec
from tests.helpers_promtool import ROOT, assert_ok, render_to, run_promtool

COMMITTED = pytest.param(ROOT / "specs" / "o1-preview.yaml", id="o1-preview 30-day SLOs, compat le")
FIXTURES = [
    pytest.param(
        ROOT / "tests" / "fixtures" / "slo-28d.yaml",
        id="28-day SLOs, Prometheus 3 le, 30s SLO evaluations under 1m test steps",
    ),
    pytest.param(
        ROOT / "tests" / "fixtures" / "slo-7d.yaml",
        id="7-day SLOs with custom tiers, Prometheus 2 le",
    ),
    pytest.param(
        ROOT / "tests" / "fixtures" / "slo-native.yaml", id="native-histogram latency SLO"
    ),
]
SPECS = [COMMITTED, *FIXTURES]


# o1-preview's files are committed: tests/test_render.py checks them against a fresh render and
# proves them with promtool (check --lint=all --lint-fatal, and every test file in full).
@pytest.mark.parametrize("spec", FIXTURES)
def test_generated_rules_and_tests_pass_promtool(spec: Path, tmp_path: Path) -> None:
    files = render_to(spec, tmp_path)
    rules = [p for r, p in files.items() if r.endswith(".rules.yaml")]
    tests = [p for r, p in files.items() if r.endswith(".test.yaml")]
    assert rules and tests
    assert_ok(run_promtool("check", "rules", "--lint=all", "--lint-fatal", *rules))
    assert_ok(run_promtool("test", "rules", *tests))


def test_slo_groups_evaluate_at_the_spec_interval_and_sum_whole_increments(tmp_path: Path) -> None:
    files = render_to(ROOT / "tests" / "fixtures" / "slo-28d.yaml", tmp_path)
    doc = yaml.safe_load(files["rules/chat-28d.rules.yaml"].read_text())
    slo_groups = [g for g in doc["groups"] if ".slo." in g["name"]]
    assert slo_groups and all(g["interval"] == "30s" for g in slo_groups)
    assert all("interval" not in g for g in doc["groups"] if g not in slo_groups)
    text = files["rules/chat-28d.rules.yaml"].read_text()
    # 30s increments; each window half an evaluation short: 120 increments in 1h, 80640 in 28d.
    assert "record: service:slo_outcomes:increase30s" in text and " offset 30s)" in text
    assert "[59m45s]" in text and "[27d23h59m45s]" in text
    # [1h] only as the increments' bridge over holes (last_over_time), never as a window.
    assert "[1h])" not in text.replace("[1h] offset", "")


def test_native_histograms_are_fed_as_promtool_3_series_and_their_slo_cases_run(
    tmp_path: Path,
) -> None:
    files = render_to(ROOT / "tests" / "fixtures" / "slo-native.yaml", tmp_path)
    text = files["rules/native-lat.test.yaml"].read_text()
    assert "they need promtool 3.0 or later" in text
    assert "custom_values:[0.1 1 10]" in text and "schema:-53" in text
    assert "__obsgen_native__" not in text
    # The latency SLO on the native histogram has its burn and detection cases now.
    assert "latency 1h/5m" in text and "availability 1h/5m" in text
    # promtool 2 cannot read the notation (the proof needs promtool 3, as the header says).
    out = subprocess.run(
        [toolchain.binary("prometheus2", "promtool"), "test", "rules", "native-lat.test.yaml"],
        cwd=files["rules/native-lat.test.yaml"].parent,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode != 0 and "custom_values" in out.stdout + out.stderr


def _line(window: str, slo: str, threshold: str, short: bool = False) -> str:
    """One window's comparison inside an o1-preview ErrorBudgetBurn expression."""
    head = "and on (namespace, service, slo) " if short else "      "
    ident = 'namespace="ai-inference",service="o1-preview"'
    return f'{head}service:slo_sli_error:ratio_rate{window}{{{ident},slo="{slo}"}} > {threshold}\n'


MAIN, SLOW_10M, SLOW_3H = "", "slow-10m.", "slow-3h."


@pytest.mark.parametrize(
    ("old", "new", "suffix"),
    [
        pytest.param(
            'slo="latency"} > 0.01\n',
            'slo="latency"} > 0.009\n',
            MAIN,
            id="latency 1x threshold lowered in both windows",
        ),
        pytest.param(
            _line("1h", "availability", "0.0144"),
            _line("1h", "availability", "0.013"),
            MAIN,
            id="availability 14.4x long window alone lowered (fires one evaluation early)",
        ),
        pytest.param(
            _line("1h", "availability", "0.0144"),
            _line("1h", "availability", "0.016"),
            MAIN,
            id="availability 14.4x long window alone raised",
        ),
        pytest.param(
            _line("5m", "availability", "0.0144", short=True),
            _line("5m", "availability", "0.013", short=True),
            MAIN,
            id="availability 14.4x short window alone lowered (a burst that ended fires)",
        ),
        pytest.param(
            _line("5m", "availability", "0.0144", short=True),
            _line("5m", "availability", "0.016", short=True),
            MAIN,
            id="availability 14.4x short window alone raised",
        ),
        pytest.param(
            _line("30m", "latency", "0.06", short=True),
            _line("30m", "latency", "0.054", short=True),
            SLOW_10M,
            id="latency 6x short window alone lowered",
        ),
        pytest.param(
            _line("3d", "latency", "0.01"),
            _line("3d", "latency", "0.009"),
            SLOW_3H,
            id="latency 1x long window alone lowered",
        ),
        pytest.param("> 0.9\n", "> 0.97\n", MAIN, id="memory headroom threshold raised"),
        pytest.param(
            '(group by (namespace) (inference_queue_depth{job="o1-preview-jobs"',
            '(group by (namespace) (inference_queue_depth_total{job="o1-preview-jobs"',
            MAIN,
            id="input guard reads a misspelled series (fires on a healthy service)",
        ),
        pytest.param(
            'group by (namespace) (up{job="o1-preview",namespace="ai-inference"} == 1) unless on (namespace) (group by (namespace) (inference_queue_depth',
            'group by (namespace) (up{job="o1-preview",namespace="ai-inference"}) unless on (namespace) (group by (namespace) (inference_queue_depth',
            MAIN,
            id="input guard without its up == 1 gate (fires with the target down)",
        ),
        pytest.param(
            r"\n\s*and on \([^)]*\) sum_over_time\([^\n]*",
            "",
            MAIN,
            id="min-events guard removed (a new service's few events page)",
        ),
        pytest.param(
            r" or \(([^()]*) and last_over_time\(\1\[1h\] offset 1m\)\)",
            "",
            MAIN,
            id="increments without the reset branch (a restarted pod's first minute is lost)",
        ),
        pytest.param(
            r"\) >= 0 or \(",
            ") or (",
            MAIN,
            id="increments keep a reset's negative difference",
        ),
        pytest.param(
            "[59m30s]",
            "[1h]",
            MAIN,
            id="1h window over [1h]: 61 increments in Prometheus 2's closed range (fires late)",
        ),
        pytest.param(
            "[59m30s]",
            "[1h30s]",
            MAIN,
            id="1h window over [1h30s]: 61 increments on either major (fires late)",
        ),
    ],
)
def test_generated_tests_fail_on_a_broken_threshold(
    tmp_path: Path, old: str, new: str, suffix: str
) -> None:
    files = render_to(ROOT / "specs" / "o1-preview.yaml", tmp_path)
    rules = files["rules/o1-preview.rules.yaml"]
    tests = files[f"rules/o1-preview.{suffix}test.yaml"]
    passed = assertion_keys(tests)  # unbroken, as committed (proved in full by test_render)
    text = rules.read_text()
    regex = old.startswith(("\\n", " or", "\\)"))
    broken = re.sub(old, new, text) if regex else text.replace(old, new)
    assert broken != text
    rules.write_text(broken)
    # Proved as `obsgen render` proves an edit: only the assertions the broken rule can reach,
    # split into parts. Fewer assertions can only fail less: a failure here is one in full.
    parts = split_test_file(tests, proven=passed)
    assert parts, "the broken rule reaches no assertion"
    # A window on the evaluation grid ([1h]) is one increment too long only where ranges are
    # closed on the left: Prometheus 2 (Prometheus 3's are left-open, so it is right there).
    if new == "[1h]":
        two = toolchain.binary("prometheus2", "promtool")
        result = subprocess.run(
            [two, "test", "rules", *map(str, parts)], capture_output=True, text=True, check=False
        )
    else:
        result = run_promtool("test", "rules", *parts)
    assert result.returncode != 0
    assert "FAILED" in result.stdout + result.stderr


CASE = re.compile(
    r"^(?P<slo>\S+) (?P<long>\w+)/(?P<short>\w+): burning 5% (?P<side>above|below) "
    r"(?P<factor>[\d.]+)x (?:fires|stays quiet)$"
)


@pytest.mark.parametrize("spec", SPECS)
def test_each_threshold_case_is_checked_when_its_tier_decides(spec: Path, tmp_path: Path) -> None:
    """The 5 %-above case of a tier expects that tier's page and the 5 %-below case does not,
    at the time the case is checked (steady burn cases are checked early, to save steps)."""
    files = render_to(spec, tmp_path)
    seen = 0
    for rel, path in files.items():
        if not rel.endswith(".test.yaml"):
            continue
        for group in yaml.safe_load(path.read_text())["tests"]:
            cases = [m for m in map(CASE.match, group["name"].split(" | ")) if m]
            if not cases:
                continue
            (check,) = [t for t in group["alert_rule_test"] if t["alertname"] == "ErrorBudgetBurn"]
            tiers = {
                (
                    a["exp_labels"]["slo"],
                    a["exp_labels"]["long_window"],
                    a["exp_labels"]["burn_rate"],
                )
                for a in check["exp_alerts"]
            }
            for case in cases:  # cases with the same input share a group
                tier = (case["slo"], case["long"], case["factor"])
                assert (tier in tiers) == (case["side"] == "above"), (group["name"], tiers)
                seen += 1
    assert seen >= 4


@pytest.mark.parametrize("for_", ["2s", "90s", "5m"])
def test_a_gpu_lost_mid_test_fires_for_any_for(for_: str, tmp_path: Path) -> None:
    """The GPU is lost at 6m (``1x5``: six samples of 1): its alert is pending from that
    evaluation and fires at the first one ``for`` later, rounded up to a test step. A ``for``
    that is no whole number of minutes (the e2e suite's 2s, a user's 90s) was checked one
    step early, so such a spec could not render."""
    spec = write_spec(tmp_path, set_path(good_spec(), "spec.alerts.gpuDeviceLost.for", for_))
    files = render_to(spec, tmp_path)
    main = files["rules/o1-preview.test.yaml"]
    doc = yaml.safe_load(main.read_text())
    doc["tests"] = [t for t in doc["tests"] if "GPUDeviceLost:" in t["name"]]
    assert len(doc["tests"]) == 2
    main.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert_ok(run_promtool("test", "rules", main))


def test_a_low_gpu_temperature_limit_keeps_the_healthy_cases_quiet(tmp_path: Path) -> None:
    """``gpuTemperature.max: 1`` (the spec allows any limit above 0 °C): the healthy cases'
    GPUs run 10 °C under it, not at a fixed 60 °C that fired GPUTemperatureHigh (found by
    ``make fuzz``)."""
    spec = write_spec(tmp_path, set_path(good_spec(), "spec.alerts.gpuTemperature.max", 1))
    files = render_to(spec, tmp_path)
    main = files["rules/o1-preview.test.yaml"]
    doc = yaml.safe_load(main.read_text())
    doc["tests"] = [t for t in doc["tests"] if "GPUTemperatureHigh" in str(t)]
    assert any("healthy service over 2h" in t["name"] for t in doc["tests"])
    main.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert_ok(run_promtool("test", "rules", main))


def _threshold_cases(path: Path) -> list[list[str]]:
    """The threshold cases of each test group of a test file (groups without one left out)."""
    groups = yaml.safe_load(path.read_text())["tests"]
    found = [[p for p in g["name"].split(" | ") if CASE.match(p)] for g in groups]
    return [cases for cases in found if cases]


def test_threshold_cases_of_one_tier_share_a_group_when_their_shares_fit(tmp_path: Path) -> None:
    """o1-preview: per tier and side, availability's and latency's cases run in one group (one
    traffic mix: fast failures for one, slow successes for the other), and the total outage of
    the 1h/5m tier is one block asserting each SLO at its own detection time. With 95 %
    objectives the 1h/5m shares (75.6 % + 75.6 % above, 68.4 % + 68.4 % below) do not fit in
    one mix: those cases fall back to a group each, the 6h/30m ones still share, and the
    groups pass promtool."""
    files = render_to(ROOT / "specs" / "o1-preview.yaml", tmp_path / "shared")
    main = files["rules/o1-preview.test.yaml"]
    shared = _threshold_cases(main)
    assert len(shared) == 8 and all(len(cases) == 2 for cases in shared)
    for cases in shared:
        a, b = (CASE.match(c) for c in cases)
        assert a and b and a["slo"] == "availability" and b["slo"] == "latency"
        assert (a["long"], a["side"]) == (b["long"], b["side"])
    (outage,) = [
        g for g in yaml.safe_load(main.read_text())["tests"] if "every event bad" in g["name"]
    ]
    assert "availability 1h/5m: every event bad" in outage["name"]
    assert "latency 1h/5m: every event bad" in outage["name"]
    times = [t["eval_time"] for t in outage["alert_rule_test"]]
    assert times == ["1h1m", "1h2m", "1h9m", "1h10m"]  # each SLO: silent, then firing

    spec = good_spec()
    set_path(spec, "spec.slos[0].objective", 95)
    set_path(spec, "spec.slos[1].objective", 95)
    files = render_to(write_spec(tmp_path, spec), tmp_path / "apart")
    main = files["rules/o1-preview.test.yaml"]
    apart = _threshold_cases(main)
    alone = [c for cases in apart if len(cases) == 1 for c in cases]
    assert sorted(alone) == [
        "availability 1h/5m: burning 5% above 14.4x fires",
        "availability 1h/5m: burning 5% below 14.4x stays quiet",
        "latency 1h/5m: burning 5% above 14.4x fires",
        "latency 1h/5m: burning 5% below 14.4x stays quiet",
    ]
    assert len(apart) == 10
    doc = yaml.safe_load(main.read_text())
    doc["tests"] = [g for g in doc["tests"] if any(map(CASE.match, g["name"].split(" | ")))]
    main.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert_ok(run_promtool("test", "rules", main))
