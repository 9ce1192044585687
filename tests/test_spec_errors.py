"""Bad specs get one clear error naming file, field path and expectation — and nothing is written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from generator.cli import main
from tests.factories import good_spec, set_path, write_spec

CASES = [
    pytest.param(
        "spec.alerts.queueDepth.maxx",
        1,
        "spec.alerts.queueDepth.maxx: unknown field",
        id="an unknown key is named with its path",
    ),
    pytest.param(
        "spec.alerts.queueDepth.max",
        -1,
        "spec.alerts.queueDepth.max: Input should be greater than or equal to 0",
        id="a negative queue maximum is refused",
    ),
    pytest.param(
        "spec.alerts.latencyP99.for",
        "10x",
        "spec.alerts.latencyP99.for: '10x' is not a duration; expected e.g. 500ms",
        id="a bad duration names the expected form",
    ),
    pytest.param(
        "spec.alerts.errorRatio.maxRatio",
        -0.1,
        "spec.alerts.errorRatio.maxRatio: Input should be greater than or equal to 0",
        id="a negative ratio is refused",
    ),
    pytest.param(
        "spec.alerts.slowRequests.maxRatio",
        1.5,
        "spec.alerts.slowRequests.maxRatio: 1.5 can never be exceeded: the measured ratio is at most 1",
        id="a ratio above 1 is refused",
    ),
    pytest.param(
        "spec.metrics.requestDuration.name",
        "gen_ai.server.request.duration_seconds",
        "spec.metrics.requestDuration.name: 'gen_ai.server.request.duration_seconds' is not a "
        "legacy Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*). Prometheus 3 stores it as "
        'written: set spec.prometheus.version: "3" and obsgen writes quoted selectors for it; '
        "a Prometheus before 3.0 (version 2 or compat) stores it only escaped — scrape it with "
        "metric_name_escaping_scheme: underscores (or OTLP translation_strategy: "
        "UnderscoreEscapingWithSuffixes) and give the escaped name "
        "gen_ai_server_request_duration_seconds",
        id="an OpenTelemetry dotted name on compat says what is true and how to get its escaped name",
    ),
    pytest.param(
        "spec.metrics.queueDepth.name",
        "9lives",
        "spec.metrics.queueDepth.name: '9lives' is not a legacy Prometheus metric name "
        "([a-zA-Z_:][a-zA-Z0-9_:]*). Prometheus 3 stores it as written",
        id="a name starting with a digit is refused",
    ),
    pytest.param(
        "spec.metrics.queueDepth.name",
        "gen_ai.queue\tdepth",
        "spec.metrics.queueDepth.name: 'gen_ai.queue\\tdepth' contains a control character",
        id="a metric name with a control character is refused on every version",
    ),
    pytest.param(
        "spec.metrics.queueDepth.name",
        "gen_ai.queue.$depth",
        "spec.metrics.queueDepth.name: 'gen_ai.queue.$depth' contains $, {{ or }}",
        id="a metric name Grafana or alert templates would expand is refused",
    ),
    pytest.param(
        "spec.selector",
        {},
        "spec.selector: expected at least one label matcher",
        id="an empty selector is refused",
    ),
    pytest.param(
        "spec.slos[1].name",
        "availability",
        "spec.slos: duplicate SLO name 'availability'",
        id="a duplicate SLO name is refused",
    ),
    pytest.param(
        "metadata.name",
        "../x",
        "metadata.name: '../x' is not a DNS-1123 label",
        id="a path-like service name never reaches a file path",
    ),
    pytest.param(
        "spec.slos[0].objective",
        100,
        "spec.slos[0].objective: 100 is out of range; expected a percentage with 0 < objective < 100",
        id="an objective of 100 is refused",
    ),
    pytest.param(
        "spec.slos[0].objective",
        0,
        "spec.slos[0].objective: 0 is out of range",
        id="an objective of 0 is refused",
    ),
    pytest.param(
        "spec.deployment.memoryLimit",
        "32GB",
        "spec.deployment.memoryLimit: '32GB' is not a memory size; expected e.g. 32Gi",
        id="a memory size in the wrong unit is refused",
    ),
    pytest.param(
        "spec.server",
        "vlm",
        "spec.server: Input should be 'vllm', 'sglang', 'trtllm', 'tgi', 'triton' or 'openai-http'",
        id="an unknown server preset is refused",
    ),
    pytest.param(
        "spec.metrics.requests.errorMatchers",
        {"status": "5(("},
        "spec.metrics.requests.errorMatchers.status: '5((' is not a valid RE2 regular expression",
        id="an invalid error regex is refused",
    ),
    pytest.param(
        "spec.metrics.requestDuration.buckets",
        [1, 0.5],
        "spec.metrics.requestDuration.buckets: bucket bounds must be strictly ascending",
        id="descending buckets are refused",
    ),
    pytest.param(
        "spec.slos[1].threshold",
        "25s",
        "spec.slos[1].threshold: 25s is not a bucket bound of http_request_duration_seconds (nearest: below 20s, above 30s)",
        id="an SLO threshold between buckets names its neighbours",
    ),
    pytest.param(
        "spec.alerts.slowRequests.threshold",
        "0.4s",
        "spec.alerts.slowRequests.threshold: '0.4s' is not a duration",
        id="a fractional duration is refused",
    ),
    pytest.param(
        "spec.alerts.slowRequests.threshold",
        "400ms",
        "spec.alerts.slowRequests.threshold: 0.4s is not a bucket bound of http_request_duration_seconds (nearest: below 0.25s, above 0.5s)",
        id="the seed's slow-request threshold must be a bucket",
    ),
    pytest.param(
        "spec.alerts.latencyP99.threshold",
        "120s",
        "spec.alerts.latencyP99.threshold: 120s is not below the largest bucket bound 120s",
        id="a p99 threshold at the top bucket could never fire",
    ),
    pytest.param(
        "spec.slos[0].objective",
        90,
        "spec.slos[0].objective: default tier 1h/5m: burn rate 14.4× can never fire at objective 90%",
        id="an objective of 90 with default tiers is impossible",
    ),
    pytest.param(
        "spec.slos[1].indicator",
        "ttft",
        "spec.slos[1].indicator: server openai-http has no timeToFirstToken (ttft) histogram; it has requestDuration (e2e)",
        id="an indicator the server lacks is refused",
    ),
    pytest.param(
        "spec.selector",
        {"job": 'a"b', "__name__": "x"},
        "spec.selector: '__name__' is not a usable label name",
        id="reserved label names are refused",
    ),
    pytest.param(
        "apiVersion",
        "obsgen/v2",
        "not an obsgen spec (apiVersion='obsgen/v2', kind='ModelService'); expected apiVersion: obsgen/v1alpha1",
        id="a wrong apiVersion gets one line",
    ),
    pytest.param(
        "spec.prometheus",
        {"scrapeInterval": "2m"},
        "spec.prometheus.scrapeInterval: default tier 1h/5m: shortWindow 5m is shorter than 4 × scrapeInterval (8m); a window needs at least 4 scrapes — scrape more often, or set your own tiers in spec.slos[0].alerting.tiers, e.g. tiers: [{budget: 0.1, longWindow: 1d, shortWindow: 2h, severity: warning}]",
        id="windows shorter than four scrapes are refused",
    ),
    pytest.param(
        "spec.slos[0].alerting",
        {
            "tiers": [
                {"budget": 0.02, "longWindow": "1h", "shortWindow": "1h", "severity": "critical"}
            ]
        },
        "spec.slos[0].alerting.tiers[0]: shortWindow 1h must be shorter than longWindow 1h",
        id="a short window equal to the long window is refused",
    ),
    pytest.param(
        "spec.prometheus",
        {"retention": "15d"},
        "spec.slos[0].window: SLO window 30d is longer than spec.prometheus.retention 15d",
        id="an SLO window beyond retention is refused",
    ),
    pytest.param(
        "spec.metrics.requestDuration.buckets",
        [0.1, 1, float("inf")],
        "spec.metrics.requestDuration.buckets[2]: Input should be a finite number (got inf)",
        id="an infinite bucket bound is refused",
    ),
    pytest.param(
        "spec.alerts.queueDepth.max",
        float("inf"),
        "spec.alerts.queueDepth.max: Input should be a finite number (got inf)",
        id="an infinite queue maximum is refused",
    ),
    pytest.param(
        "spec.alerts.errorRatio.maxRatio",
        float("nan"),
        "spec.alerts.errorRatio.maxRatio: Input should be a finite number (got nan)",
        id="a NaN ratio is refused",
    ),
    pytest.param(
        "spec.slos[0].objective",
        float("nan"),
        "spec.slos[0].objective: Input should be a finite number (got nan)",
        id="a NaN objective is refused",
    ),
    pytest.param(
        "spec.alerts.queueDepth",
        "yes",
        "spec.alerts.queueDepth: expected a mapping (key: value pairs) (got 'yes')",
        id="a scalar where a mapping belongs says mapping, not a Python class",
    ),
    pytest.param(
        "spec.alerts.latencyP99.for",
        "9" * 4000,
        "spec.alerts.latencyP99.for: '" + "9" * 78 + "… is not a duration",
        id="a huge value is cut short in the message",
    ),
    pytest.param(
        "spec.alerts.latencyP99.for",
        "9" * 5000,
        "spec.alerts.latencyP99.for: a value of 5000 characters; expected at most 4096 (line ",
        id="a value beyond the scalar limit is refused before it is parsed",
    ),
    pytest.param(
        "spec.alerts.errorRatio.maxRatio",
        1,
        "spec.alerts.errorRatio.maxRatio: 1 can never be exceeded: the measured ratio is at most 1, so the alert could never fire; expected 0 ≤ value < 1",
        id="an error ratio maximum of 1 could never fire",
    ),
    pytest.param(
        "spec.alerts.kvCache",
        {"max": 1},
        "spec.alerts.kvCache.max: 1 can never be exceeded",
        id="a KV-cache maximum of 1 could never fire",
    ),
    pytest.param(
        "spec.alerts.memoryHeadroom.minFree",
        0,
        "spec.alerts.memoryHeadroom.minFree: 0 free can never be undercut",
        id="a memory headroom of 0 could never fire",
    ),
    pytest.param(
        "spec.alerts.latencyP99.for",
        "99999999999d",
        "spec.alerts.latencyP99.for: '99999999999d' is longer than 10y",
        id="a duration promtool would reject is refused",
    ),
    pytest.param(
        "spec.slos[0].window",
        "11y",
        "spec.slos[0].window: '11y' is longer than 10y",
        id="an SLO window beyond 10 years is refused",
    ),
    pytest.param(
        "spec.alerts.latencyP99.threshold",
        "2.5s",
        "spec.alerts.latencyP99.threshold: '2.5s' is not a duration; expected e.g. 500ms, 30s, 10m, 1h30m, 30d; durations take whole numbers: write 2500ms",
        id="a fractional second names the milliseconds to write",
    ),
    pytest.param(
        "spec.slos[0].window",
        "1.5d",
        "spec.slos[0].window: '1.5d' is not a duration; expected e.g. 500ms, 30s, 10m, 1h30m, 30d; durations take whole numbers: write 1d12h",
        id="a fractional day names the whole units to write",
    ),
    pytest.param(
        "spec.deployment.replicas",
        2**53 + 1,
        "spec.deployment.replicas: Input should be less than or equal to 2147483647 (got 9007199254740993)",
        id="more replicas than Kubernetes' int32 holds are refused",
    ),
    pytest.param(
        "spec.groupBy",
        ["le"],
        "spec.groupBy: cannot group by 'le': it is the histogram bucket label",
        id="grouping by le is refused",
    ),
    pytest.param(
        "spec.groupBy",
        ["quantile"],
        "spec.groupBy: cannot group by 'quantile'",
        id="grouping by quantile is refused",
    ),
    pytest.param(
        "spec.groupBy",
        ["slo"],
        "spec.groupBy: cannot group by 'slo': obsgen sets it on every SLO series",
        id="grouping by an obsgen label is refused",
    ),
    pytest.param(
        "spec.groupBy",
        ["events"],
        "spec.groupBy: cannot group by 'events': obsgen's SLO event increments use it",
        id="grouping by the SLO events label is refused",
    ),
    pytest.param(
        "spec.groupBy",
        ["namespace"],
        "spec.groupBy: cannot group by 'namespace': every aggregation keeps it already",
        id="grouping by namespace is refused",
    ),
    pytest.param(
        "spec.groupBy",
        ["job"],
        "spec.groupBy: cannot group by 'job': the selector fixes its value",
        id="grouping by a selector label is refused",
    ),
    pytest.param(
        "spec.selector.job",
        "",
        "spec.selector: label job: an empty value matches series *without* the label",
        id="an empty selector value is refused",
    ),
    pytest.param(
        "spec.selector.job",
        "$job",
        "spec.selector: label job: '$job' contains '$', which Grafana expands as a dashboard variable",
        id="a dollar in a selector value is refused",
    ),
    pytest.param(
        "spec.metrics.requests.errorMatchers",
        {"status": "5..$"},
        "spec.metrics.requests.errorMatchers: label status: '5..$' contains '$'",
        id="a dollar in an error regex is refused",
    ),
    pytest.param(
        "spec.metrics.queueDepth.selector",
        {"job": "{{ $labels.job }}"},
        "spec.metrics.queueDepth.selector: label job: '{{ $labels.job }}' contains '$'",
        id="a template in a metric selector is refused",
    ),
    pytest.param(
        "spec.metrics.queueDepth.selector",
        {"job": "a}}b"},
        "spec.metrics.queueDepth.selector: label job: 'a}}b' contains '{{' or '}}', which alert templates (Go text/template) would expand",
        id="template braces in a metric selector are refused",
    ),
    pytest.param(
        "spec.selector.job",
        "a\nb",
        "spec.selector: label job: 'a\\nb' contains a control character",
        id="a newline in a selector value is refused",
    ),
    pytest.param(
        "metadata.team",
        "ml{platform}",
        "metadata.team: 'ml{platform}' is not a team name; allowed: letters (any language), digits, spaces and _ . , / ( ) + -",
        id="a team name with braces lists what is allowed",
    ),
    pytest.param(
        "spec.slos[0].description",
        "p99 < 30s",
        "spec.slos[0].description: 'p99 < 30s' is not plain text; allowed: letters (any language), digits, spaces and _ . , / ( ) + - : %",
        id="a description with markup lists what is allowed",
    ),
    pytest.param(
        "spec.slos[0].objective",
        90,
        "spec.slos[0].objective: default tier 1h/5m: burn rate 14.4× can never fire at objective 90%: it needs an error ratio above 1.44, and a ratio cannot exceed 1; burn rates must stay below 10× — raise the objective, or set your own tiers in spec.slos[0].alerting.tiers, e.g. tiers: [{budget: 0.1, longWindow: 1d, shortWindow: 2h, severity: warning}]",
        id="an impossible default tier names the objective and how to set custom tiers",
    ),
    pytest.param(
        "spec.slos[0].window",
        "2d",
        "spec.slos[0].window: default tier 3d/6h: longWindow 3d is longer than the SLO window 2d — lengthen the SLO window, or set your own tiers in spec.slos[0].alerting.tiers",
        id="a default tier longer than the SLO window names the window",
    ),
    pytest.param(
        "spec.slos[0].alerting",
        {
            "tiers": [
                {"budget": 0.02, "longWindow": "1h", "shortWindow": "1m", "severity": "critical"}
            ]
        },
        "spec.slos[0].alerting.tiers[0]: shortWindow 1m is shorter than 4 × scrapeInterval (2m)",
        id="an explicit tier too short for the scrape interval names the tier",
    ),
    pytest.param(
        "spec.slos[0].alerting",
        {
            "tiers": [
                {"budget": 0.05, "longWindow": "3d", "shortWindow": "6h", "severity": "warning"}
            ]
        },
        "spec.slos[0].alerting.tiers[0]: burn rate 0.5× is below 1×: the tier would fire while the error budget is on track to last the 30d window; give it budget ≥ 0.1 (longWindow / SLO window) or a shorter longWindow",
        id="an explicit tier below 1x is refused with the budget it needs",
    ),
    pytest.param(
        "spec.slos[0].alerting",
        {
            "tiers": [
                {"budget": 1, "longWindow": "10m", "shortWindow": "2m", "severity": "critical"}
            ]
        },
        "spec.slos[0].alerting.tiers[0]: burn rate 4320× can never fire at objective 99.9%: it needs an error ratio above 4.32, and a ratio cannot exceed 1; burn rates must stay below 1000× — lower",
        id="an explicit tier that can never fire names the tier",
    ),
]


@pytest.mark.parametrize(("path", "value", "expected"), CASES)
def test_bad_spec_is_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, value: Any, expected: str
) -> None:
    spec = write_spec(tmp_path / "specs", set_path(good_spec(), path, value))
    code = main(["render", "--out", str(tmp_path), str(spec)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"specs/x.yaml: {expected}" in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "rules").exists()


def test_invalid_yaml_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "broken.yaml"
    spec.write_text("apiVersion: obsgen/v1alpha1\nkind: ModelService\nmetadata: {name: x\n")
    assert main(["render", "--out", str(tmp_path), str(spec)]) == 2
    assert "broken.yaml: line 4: invalid YAML" in capsys.readouterr().err


def test_every_spec_is_checked_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = tmp_path / "specs"
    write_spec(specs, good_spec(), "a-good.yaml")
    write_spec(specs, set_path(good_spec(), "spec.alerts.queueDepth.max", -1), "b-bad.yaml")
    assert main(["render", "--out", str(tmp_path), str(specs)]) == 2
    assert "b-bad.yaml: spec.alerts.queueDepth.max" in capsys.readouterr().err
    assert not (tmp_path / "rules").exists()


def test_two_specs_for_one_service_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = tmp_path / "specs"
    write_spec(specs, good_spec(), "a.yaml")
    write_spec(specs, good_spec(), "b.yaml")
    assert main(["render", "--out", str(tmp_path), str(specs)]) == 2
    assert (
        "b.yaml: metadata.name: service 'o1-preview' in namespace 'ai-inference' is already defined in"
        in capsys.readouterr().err
    )


def test_cli_process_prints_no_traceback(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, set_path(good_spec(), "spec.alerts.queueDepth.max", -1))
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "render", "--out", str(tmp_path), str(spec)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("x.yaml: spec.alerts.queueDepth.max:")
    assert "Traceback" not in proc.stderr


BASE_TEXT = (Path(__file__).resolve().parent.parent / "specs" / "o1-preview.yaml").read_text()
BASE_LINES = len(BASE_TEXT.splitlines())


def _line(fragment: str) -> int:
    """The line of BASE_TEXT holding ``fragment`` (1-based): the cases follow the example."""
    return next(i for i, line in enumerate(BASE_TEXT.splitlines(), 1) if fragment in line)


def _laughs(levels: int) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


TEXT_CASES = [
    pytest.param(
        BASE_TEXT.replace("kind: ModelService", "kind: ModelService\nkind: ModelService"),
        "x.yaml: line 5: invalid YAML: duplicate key 'kind' (first on line 4)",
        id="a duplicate key is named with its line",
    ),
    pytest.param(
        BASE_TEXT.replace("{minFree: 0.10,", "{minFree: 0.10, minFree: 0.5,"),
        f"x.yaml: line {_line('{minFree: 0.10,')}: invalid YAML: duplicate key 'minFree' "
        f"(first on line {_line('{minFree: 0.10,')})",
        id="a duplicate key inside a flow mapping is refused",
    ),
    pytest.param(
        _laughs(9),
        "x.yaml: a4[5]: more than 32 YAML aliases (*name); write the values out (line 5)",
        id="a billion-laughs document stops at the alias cap",
    ),
    pytest.param(
        BASE_TEXT + "---\napiVersion: obsgen/v1alpha1\n",
        f"x.yaml: line {BASE_LINES + 1}: expected one YAML document, found a second one (---)",
        id="a second YAML document is refused",
    ),
    pytest.param(
        BASE_TEXT.replace("replicas: 3", "replicas: !!int three"),
        f"x.yaml: line {_line('replicas: 3')}: invalid YAML: 'three' is not a valid !!int value; "
        "write a valid one "
        "or a quoted string",
        id="an explicit tag that does not fit its value is named, not an internal error",
    ),
    pytest.param(
        BASE_TEXT.replace("team: ml-platform", "team: 2024-13-45"),
        f"x.yaml: line {_line('team: ml-platform')}: invalid YAML: '2024-13-45' is not a valid "
        "!!timestamp value",
        id="an impossible date is named, not an internal error",
    ),
    pytest.param(
        BASE_TEXT + "x: &a 1\ny: &a 2\n",
        f"x.yaml: line {BASE_LINES + 2}: invalid YAML: duplicate anchor 'a' (first on line "
        f"{BASE_LINES + 1})",
        id="a duplicate anchor names both lines",
    ),
    pytest.param(
        BASE_TEXT.replace("  server:", "\tserver:"),
        f"x.yaml: line {_line('  server:')}: invalid YAML: found character '\\t' that cannot "
        "start any token",
        id="a tab indenting a key is named",
    ),
    pytest.param(
        BASE_TEXT.replace("maxRatio: 0.05", "maxRatio: .inf"),
        "x.yaml: spec.alerts.errorRatio.maxRatio: Input should be a finite number (got inf)",
        id="a YAML .inf is a spec error",
    ),
    pytest.param(
        BASE_TEXT.replace("max: 100,", "max: 1e400,"),
        "x.yaml: spec.alerts.queueDepth.max: Input should be a finite number (got inf)",
        id="a number too large for a float is a spec error",
    ),
]


@pytest.mark.parametrize(("text", "expected"), TEXT_CASES)
def test_bad_yaml_text_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    spec = tmp_path / "x.yaml"
    spec.write_text(text)
    assert main(["check", str(spec)]) == 2
    err = capsys.readouterr().err
    assert expected in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("old", "new", "attribute", "value"),
    [
        pytest.param("maxRatio: 0.05", "maxRatio: 5e-2", "error_ratio", 0.05, id="5e-2 is 0.05"),
        pytest.param("max: 100,", "max: 1e2,", "queue_depth", 100.0, id="1e2 is 100"),
    ],
)
def test_scientific_notation_is_a_number(
    tmp_path: Path, old: str, new: str, attribute: str, value: float
) -> None:
    from generator.spec import load_spec

    assert old in BASE_TEXT
    spec = tmp_path / "x.yaml"
    spec.write_text(BASE_TEXT.replace(old, new))
    alert = getattr(load_spec(spec).spec.alerts, attribute)
    assert (alert.max_ratio if attribute == "error_ratio" else alert.max) == value


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        pytest.param(
            lambda d: (d / "x.yaml").write_bytes(b"apiVersion: \xff\xfe\n") and d / "x.yaml",
            "x.yaml: not a UTF-8 text file",
            id="a binary file is not a UTF-8 text file",
        ),
        pytest.param(
            lambda d: Path("/dev/null"),
            "/dev/null: not a regular file",
            id="a device is not a regular file",
        ),
    ],
)
def test_unreadable_inputs_are_named_plainly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any, expected: str
) -> None:
    assert main(["check", str(make(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert expected in err, err
    assert "codec" not in err


@pytest.mark.parametrize(
    ("path", "value"),
    [
        pytest.param("metadata.team", "équipe-données", id="a team name may use any letters"),
        pytest.param(
            "spec.slos[0].description",
            "Disponibilité: 99.9% des requêtes",
            id="a description may use any letters, colon and percent",
        ),
    ],
)
def test_plain_text_accepts_unicode_letters(tmp_path: Path, path: str, value: str) -> None:
    spec = write_spec(tmp_path, set_path(good_spec(), path, value))
    assert main(["check", str(spec)]) == 0


def test_an_empty_folder_names_both_extensions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(tmp_path)]) == 2
    assert "no spec files found; expected files named *.yaml or *.yml" in capsys.readouterr().err


RUNBOOK_WARNING = (
    "x.yaml: metadata.runbookBaseUrl: warning: not set: alert runbook_url annotations are relative"
)

WARNING_CASES = [
    pytest.param(
        [
            ("spec.alerts.latencyP99", None),
            ("spec.metrics.requestDuration.buckets", [0.5, 1, 10, 30]),
        ],
        "x.yaml: spec.alerts.latencyP99: warning: default ModelLatencyP99High alert left out: its 30s threshold is not below the largest bucket bound 30s of http_request_duration_seconds, so it could never fire; enable it with spec.alerts.latencyP99.threshold below 30s",
        id="a default p99 alert that could never fire is left out with a warning",
    ),
    pytest.param(
        [("spec.metrics.queueDepth", None)],
        "x.yaml: spec.alerts.queueDepth: warning: ModelQueueDepthHigh alert left out: server openai-http exports no queueDepth gauge; declare spec.metrics.queueDepth.name to enable it",
        id="a queue alert without a queue gauge is left out with a warning",
    ),
    pytest.param(
        [],
        RUNBOOK_WARNING,
        id="relative runbook links are a warning",
    ),
]


@pytest.mark.parametrize(("edits", "expected"), WARNING_CASES)
def test_warnings_are_printed_and_do_not_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edits: list[tuple[str, Any]], expected: str
) -> None:
    data = good_spec()
    for path, value in edits:
        set_path(data, path, value)
    spec = write_spec(tmp_path, data)
    assert main(["check", str(spec)]) == 0
    err = capsys.readouterr().err
    assert expected in err, err
    assert err.count(RUNBOOK_WARNING) == 1, err


def test_no_warning_for_a_spec_that_sets_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = set_path(good_spec(), "metadata.runbookBaseUrl", "https://git.example.com/runbooks")
    data = set_path(data, "spec.prometheus.retention", "45d")
    data = set_path(data, "metadata.grafanaUrl", "https://grafana.example.com")
    assert main(["check", str(write_spec(tmp_path, data))]) == 0
    assert capsys.readouterr().err == ""


def test_openai_http_alerts_on_a_queue_only_when_one_is_declared() -> None:
    from generator.plan import resolve
    from generator.spec import parse_spec

    declared = resolve(parse_spec(good_spec(), "x"), "x")
    undeclared = resolve(
        parse_spec(set_path(good_spec(), "spec.metrics.queueDepth", None), "x"), "x"
    )
    assert declared.queue_depth is not None and "queue_depth" in declared.alerts
    assert undeclared.queue_depth is None and "queue_depth" not in undeclared.alerts


def test_an_error_matcher_matching_every_request_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(
        tmp_path / "specs",
        set_path(good_spec(), "spec.metrics.requests.errorMatchers", {"status": "5..|"}),
    )
    assert main(["render", "--out", str(tmp_path), str(spec)]) == 2
    assert (
        "spec.metrics.requests.errorMatchers: status=~'5..|' also matches requests without a "
        "status label" in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    "matchers",
    [
        pytest.param({"error": ".+"}, id="a label only failed requests carry"),
        pytest.param({"status": '5..|"quoted"'}, id="an error regex with quotes"),
        pytest.param({"code": "[45]\\d\\d"}, id="an error regex no known value matches"),
    ],
)
def test_unusual_error_matchers_render_with_passing_generated_tests(
    tmp_path: Path, matchers: dict[str, str]
) -> None:
    # A counter of the application's own (labels a known library layout lacks are refused).
    data = set_path(good_spec(), "spec.metrics.requests.name", "app_requests_total")
    spec = write_spec(
        tmp_path / "specs", set_path(data, "spec.metrics.requests.errorMatchers", matchers)
    )
    # Full render: promtool check rules and promtool test rules on the generated tests.
    assert main(["render", "--out", str(tmp_path), str(spec)]) == 0
