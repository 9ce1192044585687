"""Every bound on the spec input (docs/limits.md) refuses with ``file: field.path: message``,
exit 2 and no traceback — issue 15 cases 1 (spec part), 9 and 10."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator import spec as spec_module
from generator.cases.rule_tests import rule_tests_outputs
from generator.cli import main
from generator.render import load_plans
from tests.factories import good_spec, set_path, write_spec

REPO = Path(__file__).resolve().parent.parent
BASE_TEXT = (REPO / "specs" / "o1-preview.yaml").read_text()
BASE_LINES = len(BASE_TEXT.splitlines())


def _line(fragment: str) -> int:
    """The line of BASE_TEXT holding ``fragment`` (1-based): the cases follow the example."""
    return next(i for i, line in enumerate(BASE_TEXT.splitlines(), 1) if fragment in line)


def _check(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "x.yaml"
    path.write_text(text)
    capsys.readouterr()
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return err


def _aliases(fan: int, levels: int) -> str:
    lines = ["x0: &x0 [" + ", ".join(["1"] * 100) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * fan) + "]")
    return "\n".join(lines) + "\n"


TEXT_CASES = [
    pytest.param(
        BASE_TEXT.replace("metadata:\n", "metadata: " + "[" * 500 + "]" * 500 + "\nx:\n"),
        "x.yaml: metadata" + "[0]" * 32 + ": nested more than 32 levels deep; expected a "
        f"flatter document (line {_line('metadata:')})",
        id="case 1: a spec nested 500 levels deep",
    ),
    pytest.param(
        BASE_TEXT.replace("replicas: 3", "replicas: " + "9" * 5000),
        "x.yaml: spec.deployment.replicas: an integer of 5000 characters; expected at most 20 "
        f"(line {_line('replicas: 3')})",
        id="case 1: an integer of 5000 digits",
    ),
    pytest.param(
        BASE_TEXT + _aliases(fan=15, levels=2),
        "x.yaml: x2: more than 10000 values once aliases are expanded; expected a smaller "
        f"document (line {BASE_LINES + 4})",
        id="aliases that expand past 10000 values",
    ),
    pytest.param(
        BASE_TEXT + "loop: &a [1, *a]\n",
        "x.yaml: loop[1]: a YAML alias refers to a value that contains it (a cycle) "
        f"(line {BASE_LINES + 1})",
        id="an alias cycle",
    ),
    pytest.param(
        BASE_TEXT.replace("team: ml-platform", "team: " + "x" * 5000),
        "x.yaml: metadata.team: a value of 5000 characters; expected at most 4096 "
        f"(line {_line('team: ml-platform')})",
        id="a scalar longer than 4096 characters",
    ),
    pytest.param(
        "\x00" + BASE_TEXT,
        "x.yaml: invalid YAML: character U+0000 at offset 0 is not allowed",
        id="a NUL character",
    ),
]


@pytest.mark.parametrize(("text", "expected"), TEXT_CASES)
def test_yaml_limits_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    assert expected in _check(tmp_path, text, capsys)


def test_a_file_over_one_mebibyte_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _check(tmp_path, BASE_TEXT + "#" * (1 << 20), capsys)
    assert "x.yaml: larger than 1048576 bytes; expected a spec of a few KB" in err


SLO = {"name": "s", "objective": 99.9}


def _slos(n: int) -> list[dict[str, Any]]:
    return [{**SLO, "name": f"s{i}"} for i in range(n)]


FIELD_CASES = [
    pytest.param("spec.slos", _slos(11), "spec.slos: List should have at most 10 items", id="SLOs"),
    pytest.param(
        "spec.metrics.requestDuration.buckets",
        [0.001 * i for i in range(1, 102)],
        "spec.metrics.requestDuration.buckets: List should have at most 100 items",
        id="buckets",
    ),
    pytest.param(
        "spec.groupBy",
        [f"l{i}" for i in range(9)],
        "spec.groupBy: List should have at most 8 items",
        id="groupBy labels",
    ),
    pytest.param(
        "spec.selector",
        {f"l{i}": "x" for i in range(17)},
        "spec.selector: Dictionary should have at most 16 items",
        id="selector matchers",
    ),
    pytest.param(
        "spec.metrics.requests.errorMatchers",
        {f"l{i}": "5.." for i in range(17)},
        "spec.metrics.requests.errorMatchers: Dictionary should have at most 16 items",
        id="error matchers",
    ),
    pytest.param(
        "spec.slos[0].alerting",
        {
            "tiers": [
                {"budget": 0.02, "longWindow": "1h", "shortWindow": "5m", "severity": "critical"}
            ]
            * 9
        },
        "spec.slos[0].alerting.tiers: List should have at most 8 items",
        id="burn-rate tiers",
    ),
    pytest.param(
        "spec.selector.job",
        "j" * 1025,
        "spec.selector: label job: a value of 1025 characters; expected at most 1024",
        id="a label value",
    ),
    pytest.param(
        "spec.deployment.memoryLimit",
        "2Pi",
        "spec.deployment.memoryLimit: '2Pi' is out of range; expected a memory size from 1Mi to 1Pi",
        id="a memory limit beyond float64 integers",
    ),
    # Case 9: what render's generated tests could not handle is refused by check, with its path.
    pytest.param(
        "spec.slos[0].objective",
        99.99999999999999,
        "spec.slos[0].objective: 99.99999999999999 leaves an error budget under one in a million",
        id="case 9: objective 99.99999999999999",
    ),
    pytest.param(
        "spec.selector.le",
        "1",
        "spec.selector: cannot select by label 'le': it is the histogram bucket label",
        id="case 9: a selector on le",
    ),
    pytest.param(
        "spec.selector.service",
        "x",
        "spec.selector: cannot select by label 'service': obsgen sets it on its own series",
        id="case 9: a selector on a label obsgen sets",
    ),
    pytest.param(
        "spec.slos[0].alerting",
        {"minEvents": 10**12},
        "spec.slos[0].alerting.minEvents: Input should be less than or equal to 1000000000",
        id="case 9: a huge minEvents",
    ),
    pytest.param(
        "spec.metrics.requests.errorMatchers",
        {"status": "(?=5)5.."},
        "spec.metrics.requests.errorMatchers.status: '(?=5)5..' is not a valid RE2 regular "
        "expression (the syntax Prometheus uses): invalid perl operator: (?=",
        id="case 9: a look-ahead in an error matcher",
    ),
    pytest.param(
        "spec.metrics.requests.errorMatchers",
        {"status": "[[:digit:]]xx"},
        "spec.metrics.requests.errorMatchers.status: '[[:digit:]]xx' cannot be read by "
        "obsgen's test generator",
        id="case 9: a POSIX class RE2 and Python read apart",
    ),
    pytest.param(
        "spec.metrics.requests.errorMatchers",
        {"status": "5\\d{1001}"},
        "spec.metrics.requests.errorMatchers.status: '5\\\\d{1001}' is not a valid RE2 regular "
        "expression (the syntax Prometheus uses): invalid repetition size: {1001}",
        id="case 9: a repeat count beyond RE2's 1000",
    ),
    pytest.param(
        "spec.metrics.requests.errorMatchers",
        {"status": "\\C5"},
        "spec.metrics.requests.errorMatchers.status: '\\\\C5' uses \\C (any byte), which the Go "
        "regexp of Prometheus does not support",
        id="case 9: an RE2 construct Go lacks",
    ),
    pytest.param(
        "spec.alerts.latencyP99.for",
        "10y",
        "spec.alerts.latencyP99.for: 3650d is out of range; expected at most 6h",
        id="case 9: a for of 10 years (5 million test steps)",
    ),
    pytest.param(
        "spec.alerts.memoryExhaustion",
        {"lookback": "30d"},
        "spec.alerts.memoryExhaustion.lookback: 30d is out of range; expected 1m to 6h",
        id="case 9: a trend look-back of 30 days",
    ),
    pytest.param(
        "spec.alerts.memoryExhaustion",
        {"horizon": "1ms"},
        "spec.alerts.memoryExhaustion.horizon: 1ms is out of range; expected 1m to 3650d",
        id="case 9: a prediction horizon of 1ms",
    ),
    pytest.param(
        "spec.slos[0].window",
        "2y",
        "spec.slos[0].window: 730d is out of range; expected 1m to 365d",
        id="an SLO window of two years",
    ),
    pytest.param(
        "spec.metrics.requests.errorMatchers",
        {},
        "spec.metrics.requests.errorMatchers: no matcher marks a request as failed",
        id="case 9: empty error matchers (found by the fuzz test)",
    ),
    pytest.param(
        "spec.groupBy",
        ["status"],
        "spec.groupBy: cannot group by 'status': the request error matchers tell failures by it",
        id="case 9: groupBy the label the error matchers read",
    ),
    pytest.param(
        "spec.alerts.errorRatio.maxRatio",
        0.9999999999999,
        "spec.alerts.errorRatio.maxRatio: 0.9999999999999 is within one in a million of 1",
        id="case 9: a ratio too close to 1",
    ),
    pytest.param(
        "spec.alerts.memoryHeadroom.minFree",
        1,
        "spec.alerts.memoryHeadroom.minFree: 1: less than all memory free is always true",
        id="case 9: minFree 1 never stops firing",
    ),
    pytest.param(
        "spec.alerts.memoryHeadroom.minFree",
        1e-300,
        "spec.alerts.memoryHeadroom.minFree: 1e-300 is under one in a million of the memory",
        id="case 9: a minFree float64 cannot tell from 0",
    ),
]


@pytest.mark.parametrize(("path", "value", "expected"), FIELD_CASES)
def test_field_limits_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, value: Any, expected: str
) -> None:
    spec = write_spec(tmp_path, set_path(good_spec(), path, value))
    capsys.readouterr()
    assert main(["check", str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"x.yaml: {expected}" in err, err
    assert "Traceback" not in err


def test_the_documented_bounds_are_the_code_bounds() -> None:
    doc = (REPO / "docs" / "limits.md").read_text()
    limits = spec_module.SPEC_LIMITS
    for shown in (
        f"{spec_module.MAX_SLOS} SLOs",
        f"{spec_module.MAX_TIERS} burn-rate tiers",
        f"{spec_module.MAX_BUCKETS} bucket bounds",
        f"{spec_module.MAX_GROUP_BY} `groupBy` labels",
        f"{spec_module.MAX_MATCHERS} labels",
        f"{spec_module.MAX_LABEL_VALUE_CHARS} characters",
        "99.9999",
        f"{limits.max_bytes} bytes",
        f"{limits.max_depth} levels",
        f"{limits.max_values} values",
        f"{limits.max_aliases} aliases",
        f"{limits.max_scalar_chars} characters",
        f"{limits.max_int_chars} characters",
    ):
        assert shown in doc, shown


def test_repeated_slos_grow_the_tests_linearly(tmp_path: Path) -> None:
    """Case 10: every burn case lists every SLO's alerts, so 10 alike SLOs made test files
    ~25× those of 2; alike SLOs now share their cases (render time followed the size)."""

    def size(n: int) -> int:
        data = good_spec()
        data["spec"]["slos"] = [
            {"name": f"a{i}", "objective": 99.9}
            if i % 2
            else {
                "name": f"l{i}",
                "indicator": "requestDuration",
                "threshold": "30s",
                "objective": 99,
            }
            for i in range(n)
        ]
        spec = write_spec(tmp_path / str(n), data)
        plans = load_plans([spec], tmp_path)
        return sum(len(text) for text in rule_tests_outputs(plans).values())

    small, large = size(2), size(10)
    # Quadratic growth made this 25x. Linear: 1.8x, and 2.0x since one test group holds the
    # cases of several SLOs (the 2-SLO files shrank by 12 %, the 10-SLO ones by 3 %).
    assert large < 2.5 * small, (small, large)
