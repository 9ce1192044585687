"""Presets against ``/metrics`` expositions written from each server's source.

Each fixture in ``tests/fixtures/metrics/`` is what the server exposes (names, types, label
names, ``le`` spelled the way that server's client library writes it); its header cites the
source. The tests parse it with prometheus-client's text parser and check that the matching
preset names only what is there, with the right type, labels and bucket bounds. Then the rules
obsgen renders for that preset are run by the real ``promtool test rules`` over the fixture's
series: every recording rule that reads a server metric must return a number, which proves the
selectors (and the ``le`` regexes) match the server's own spelling.
"""

from __future__ import annotations

import copy
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from generator.builders.efficiency_rules import ENERGY_PER_1K, GPU_SECONDS_PER_1M
from generator.builders.rulefile import rule_file
from generator.plan import resolve
from generator.presets import PRESETS, Preset, get_preset
from generator.spec import INDICATOR_ALIASES, parse_spec
from generator.yamlio import dump_yaml
from tests.helpers_promtool import promtool

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "metrics"


@dataclass(frozen=True)
class Sample:
    """One exposed sample: its family's type and its labels (``le`` included)."""

    family_type: str
    labels: dict[str, str]
    value: float


def load_fixture(name: str) -> dict[str, list[Sample]]:
    """Parse ``tests/fixtures/metrics/<name>``; {sample name: samples}."""
    text = (FIXTURES / name).read_text(encoding="utf-8")
    on_wire = {
        m.group(1)
        for m in (re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)", line) for line in text.splitlines())
        if m
    }
    out: dict[str, list[Sample]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            # The parser appends _total to every counter sample; Prometheus stores the name as
            # written (TGI's tgi_request_success has no suffix), so keep the name on the wire.
            sample_name = s.name
            if sample_name not in on_wire and sample_name.removesuffix("_total") in on_wire:
                sample_name = sample_name.removesuffix("_total")
            out.setdefault(sample_name, []).append(Sample(family.type, dict(s.labels), s.value))
    return out


# (fixture, server, serverVersion[/serverVariant], example spec the rendered rules start from)
CASES = [
    pytest.param("vllm-0.8.3.prom", "vllm", "0.8.3", "llama3-70b-vllm", id="vllm 0.8.3: HTTP metrics, bucket lists to 60s e2e, 10s TTFT, 2.5s ITL"),
    pytest.param("vllm-0.8.prom", "vllm", "0.8.5", "llama3-70b-vllm", id="vllm 0.8.5 V1 engine with HTTP metrics"),
    pytest.param("vllm-0.8-v0.prom", "vllm", "0.8.5/v0", "llama3-70b-vllm", id="vllm 0.8.5 V0 engine: no HTTP metrics, no engine label"),
    pytest.param("vllm-0.9.prom", "vllm", "0.9", "llama3-70b-vllm", id="vllm 0.9.0 still exposes only gpu_cache_usage_perc"),
    pytest.param("vllm-0.10.prom", "vllm", "0.10", "llama3-70b-vllm", id="vllm 0.10 exposes both KV gauges"),
    pytest.param("vllm-0.11.prom", "vllm", "0.11", "llama3-70b-vllm", id="vllm 0.11 with inter_token_latency_seconds"),
    pytest.param("vllm-0.13.prom", "vllm", "0.13", "llama3-70b-vllm", id="vllm 0.13 adds finished_reason error"),
    pytest.param("tgi-3.0.prom", "tgi", "3.0", "mistral-7b-tgi", id="tgi router through metrics-exporter-prometheus"),
    pytest.param("triton-24.08.prom", "triton", "24.08", "triton-trtllm", id="triton 24.08: no first-response histogram yet"),
    pytest.param("triton-24.11.prom", "triton", "24.11", "triton-trtllm", id="triton with the TensorRT-LLM backend"),
    pytest.param("sglang-0.4.7.prom", "sglang", "0.4.7", "qwen-sglang", id="sglang 0.4.7: first release with an abort counter"),
    pytest.param("sglang-0.5.3.prom", "sglang", "0.5.3", "qwen-sglang", id="sglang 0.5.3: e2e bounds to 2400s, is_streaming label"),
    pytest.param("sglang-0.5.12.prom", "sglang", "0.5.12", "qwen-sglang", id="sglang 0.5.12: queue bounds from 1ms"),
    pytest.param("trtllm-1.1.prom", "trtllm", "1.1", "llama-trtllm-serve", id="trtllm-serve 1.1: unprefixed names"),
    pytest.param("trtllm-1.2.prom", "trtllm", "1.2", "llama-trtllm-serve", id="trtllm-serve 1.2: trtllm_ prefix and gauges"),
    pytest.param("openai-http-0.prom", "openai-http", None, "o1-preview", id="generic prometheus-client openai-http server"),
]  # fmt: skip


# Label values a server adds in a later release: {(metric, label, value): first release}. vLLM
# pre-creates one vllm:request_success_total child per FinishReason, and FinishReason.ERROR
# ("error") first appears in 0.13.0 (vllm/v1/engine/__init__.py; 0.12.0 still ends at ABORT):
# an older exposition has no such series, and the presets' matcher on it reads 0 failures there
# (generator/presets/vllm.py: before 0.13 the engine counts no failure at all).
LATER_VALUES = {("vllm:request_success_total", "finished_reason", "error"): (0, 13)}


def _later_value(name: str, label: str, value: str, version: str | None) -> bool:
    """Whether ``name{label=value}`` is a value the server adds after fixture release ``version``."""
    since = LATER_VALUES.get((name, label, value))
    if since is None or version is None:
        return False
    release = tuple(int(part) for part in version.split("/")[0].split("."))
    return release < since


def _version(version: str | None) -> tuple[str | None, str | None]:
    """``"0.8.5/v0"`` → (serverVersion, serverVariant)."""
    if version is None or "/" not in version:
        return version, None
    release, variant = version.split("/")
    return release, variant


def referenced(preset: Preset) -> Iterator[tuple[str, str, tuple[str, ...], str]]:
    """(sample name, family type, label names, what) for every series the preset reads.

    Label names are those the rules select or group on: the model label for per-model series,
    the labels of error matchers, request matchers and gauge matchers.
    """
    model = (preset.model_label,) if preset.model_label else ()
    for key, h in preset.latency.items():
        for suffix in ("_bucket", "_count", "_sum"):
            yield h.name + suffix, "histogram", model, f"latency {key}"
    req = preset.requests
    req_type = "histogram" if req.name.endswith("_count") else "counter"
    req_labels = tuple(label for label, _ in req.error_matchers + req.matchers)
    yield req.name, req_type, req_labels, "requests"
    if req.failure_name:
        yield req.failure_name, "counter", (), "request failures"
    for what, gauge in (
        ("queue depth", preset.queue_depth),
        ("running requests", preset.running_requests),
        ("kv cache usage", preset.kv_cache_usage),
    ):
        if gauge is not None:
            labels = tuple(label for label, _ in gauge.matchers + (gauge.denominator or ()))
            yield gauge.name, "gauge", model + labels, what
    for what, name in (
        ("prompt tokens", preset.prompt_tokens),
        ("generated tokens", preset.generation_tokens),
    ):
        if name:
            yield name, "histogram" if name.endswith("_sum") else "counter", (), what
    for key, mean in preset.mean_latency.items():
        yield mean.sum_name, "counter", model, f"mean latency {key}"
        yield mean.count_name, "counter", model, f"mean latency {key}"


@pytest.mark.parametrize(("fixture", "server", "version", "example"), CASES)
def test_every_series_the_preset_reads_is_exposed_with_its_type_and_labels(
    fixture: str, server: str, version: str | None, example: str
) -> None:
    exposed = load_fixture(fixture)
    preset = get_preset(server, *_version(version))
    problems = []
    for name, family_type, labels, what in referenced(preset):
        samples = exposed.get(name)
        if not samples:
            problems.append(f"{what}: {name} is not exposed")
            continue
        if {s.family_type for s in samples} != {family_type}:
            problems.append(
                f"{what}: {name} is {samples[0].family_type}, preset expects {family_type}"
            )
        missing = [label for label in labels if not any(label in s.labels for s in samples)]
        if missing:
            problems.append(f"{what}: {name} has no label {missing}")
    assert problems == []


@pytest.mark.parametrize(("fixture", "server", "version", "example"), CASES)
def test_matchers_select_exposed_label_values(
    fixture: str, server: str, version: str | None, example: str
) -> None:
    exposed = load_fixture(fixture)
    preset = get_preset(server, *_version(version))
    req = preset.requests
    for label, regex in req.error_matchers + req.matchers:
        if _later_value(req.name, label, regex, version):
            continue
        values = {s.labels.get(label, "") for s in exposed[req.name]}
        assert any(re.fullmatch(regex, v) for v in values), (req.name, label, regex, values)
    for gauge in (preset.queue_depth, preset.running_requests, preset.kv_cache_usage):
        if gauge is None:
            continue
        for label, value in gauge.matchers + (gauge.denominator or ()):
            assert value in {s.labels.get(label) for s in exposed[gauge.name]}, (
                gauge.name,
                label,
                value,
            )


@pytest.mark.parametrize(("fixture", "server", "version", "example"), CASES)
def test_bucket_bounds_equal_the_presets(
    fixture: str, server: str, version: str | None, example: str
) -> None:
    exposed = load_fixture(fixture)
    preset = get_preset(server, *_version(version))
    if not preset.latency:
        # A release without a histogram (Triton before 24.11) exposes none under any name
        # another entry of its server reads.
        names = {h.name for p in PRESETS[server] for h in p.latency.values()}
        assert names and not [n for n in names if n + "_bucket" in exposed]
        return
    for h in preset.latency.values():
        series = {
            tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            for s in exposed[h.name + "_bucket"]
        }
        for labels in series:
            bounds = sorted(
                float(s.labels["le"])
                for s in exposed[h.name + "_bucket"]
                if tuple(sorted((k, v) for k, v in s.labels.items() if k != "le")) == labels
                and s.labels["le"] != "+Inf"
            )
            seconds = [b * h.seconds_per_unit for b in bounds]
            assert seconds == [b * h.seconds_per_unit for b in h.buckets], (h.name, labels)


def test_vllm_0_11_fixture_no_longer_shows_the_gpu_cache_gauge() -> None:
    # The reason the 0.11 preset must read kv_cache_usage_perc: the old gauge is hidden.
    assert "vllm:gpu_cache_usage_perc" not in load_fixture("vllm-0.11.prom")
    assert "vllm:kv_cache_usage_perc" not in load_fixture("vllm-0.9.prom")


# --- rendered rules against the fixture, with the real promtool ---------------------------


# Alerts of an example that its server's older release refuses, replaced there: the vLLM
# example's 10s TTFT p99 is the largest bound of 0.8.0 … 0.8.3 (tests/test_release_bounds.py).
RELEASE_ALERTS: dict[tuple[str, str | None], dict[str, Any]] = {
    ("vllm", "0.8.3"): {"latencyP99": {"indicator": "ttft", "threshold": "5s", "for": "10m"}},
}


def spec_for(server: str, version: str | None, example: str) -> dict[str, Any]:
    """The example spec ``example`` with ``server``/``serverVersion`` set and no metric overrides."""
    data = yaml.safe_load((ROOT / "specs" / f"{example}.yaml").read_text(encoding="utf-8"))
    body = copy.deepcopy(data)["spec"]
    body["server"] = server
    body.pop("metrics", None)
    body.pop("serverVersion", None)
    body["alerts"] = {**body.get("alerts", {}), **RELEASE_ALERTS.get((server, version), {})}
    release, variant = _version(version)
    if release is not None:
        body["serverVersion"] = release
    if variant is not None:
        body["serverVariant"] = variant
    # An older release may lack an indicator the example's SLOs use (SGLang 0.4.7: no queue).
    latency = get_preset(server, release, variant).latency
    body["slos"] = [
        s
        for s in body.get("slos", [])
        if INDICATOR_ALIASES.get(s.get("indicator", "e2e")) in latency
    ]
    data["spec"] = body
    return dict(data)


def series_line(name: str, labels: dict[str, str]) -> str:
    inner = ",".join(
        f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for k, v in sorted(labels.items())
    )
    return f"{name}{{{inner}}}"


def input_series(exposed: dict[str, list[Sample]], target: dict[str, str]) -> list[dict[str, str]]:
    """Fixture samples as promtool series, with the scrape target's labels added.

    Gauges stay constant; counters and histogram samples grow by (value + 1) per minute, so
    rates are positive and cumulative buckets stay monotonic.
    """
    out = []
    for name, samples in sorted(exposed.items()):
        for s in samples:
            labels = {**s.labels, **target}
            gauge = s.family_type == "gauge"
            values = f"{s.value:g}+0x30" if gauge else f"0+{s.value + 1:g}x30"
            out.append({"series": series_line(name, labels), "values": values})
    return out


# Records that read the server's token counter and a GPU exporter's energy counter, which no
# server fixture holds: they have no value here (tests/test_efficiency_panels.py proves them).
OTHER_SOURCES = frozenset({ENERGY_PER_1K, GPU_SECONDS_PER_1M})

SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\{([^}]*)\}")
MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')


def selectors(expr: str) -> Iterator[tuple[str, list[tuple[str, str, str]]]]:
    """(metric name, [(label, op, unescaped value)]) for each ``name{...}`` in ``expr``."""
    for m in SELECTOR.finditer(expr):
        matchers = [
            (label, op, bytes(raw, "utf-8").decode("unicode_escape"))
            for label, op, raw in MATCHER.findall(m.group(2))
        ]
        yield m.group(1), matchers


def matches(labels: dict[str, str], matchers: list[tuple[str, str, str]]) -> bool:
    for label, op, value in matchers:
        got = labels.get(label, "")
        ok = {
            "=": got == value,
            "!=": got != value,
            "=~": re.fullmatch(value, got) is not None,
            "!~": re.fullmatch(value, got) is None,
        }[op]
        if not ok:
            return False
    return True


def rendered(
    server: str, version: str | None, example: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """(rule file dict, target labels) for the spec built by :func:`spec_for`."""
    data = spec_for(server, version, example)
    plan = resolve(parse_spec(data, f"{example}.yaml"), f"{example}.yaml")
    return rule_file(plan), dict(data["spec"]["selector"])


def server_records(
    rules: dict[str, Any], exposed: dict[str, list[Sample]]
) -> list[tuple[str, str]]:
    """(record, expr) of every recording rule whose expression selects a fixture metric, but
    those that also need another exporter's series (:data:`OTHER_SOURCES`)."""
    out = []
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "record" not in rule or rule["record"] in OTHER_SOURCES:
                continue
            if any(name in exposed for name, _ in selectors(rule["expr"])):
                out.append((rule["record"], rule["expr"]))
    return out


@pytest.mark.parametrize(("fixture", "server", "version", "example"), CASES)
def test_every_selector_on_a_server_metric_matches_an_exposed_series(
    fixture: str, server: str, version: str | None, example: str
) -> None:
    exposed = load_fixture(fixture)
    rules, target = rendered(server, version, example)
    records = server_records(rules, exposed)
    assert records, "no recording rule reads this server's metrics"
    unmatched = []
    for _, expr in records:
        for name, matchers in selectors(expr):
            if name in exposed and not any(
                matches({**s.labels, **target}, matchers) for s in exposed[name]
            ):
                if any(
                    op in ("=", "=~") and _later_value(name, label, value, version)
                    for label, op, value in matchers
                ):
                    continue  # a value of a later release: absent here by design
                unmatched.append((name, matchers))
    assert unmatched == []


@pytest.mark.parametrize(("fixture", "server", "version", "example"), CASES)
def test_promtool_evaluates_every_server_recording_rule_over_the_fixture(
    fixture: str, server: str, version: str | None, example: str, tmp_path: Path
) -> None:
    tool = promtool()
    exposed = load_fixture(fixture)
    rules, target = rendered(server, version, example)
    records = server_records(rules, exposed)
    (tmp_path / "rules.yaml").write_text(dump_yaml(rules), encoding="utf-8")
    # A rule that returns no finite sample evaluates to 0 here, and the test names it.
    tests = [
        {
            "expr": f"(count({record} == {record}) > bool 0) or vector(0)",
            "eval_time": "20m",
            "exp_samples": [{"labels": "{}", "value": 1}],
        }
        for record in sorted({r for r, _ in records})
    ]
    suite = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": input_series(exposed, target),
                "promql_expr_test": tests,
            }
        ],
    }
    (tmp_path / "fixture.test.yaml").write_text(dump_yaml(suite), encoding="utf-8")
    done = subprocess.run(
        [tool, "test", "rules", "fixture.test.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# --- the engine failure source per release ------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "reads_engine"),
    [("0.8.3", False), ("0.9", False), ("0.11", False), ("0.12", False), ("0.13", True), ("0.14", True)],
)  # fmt: skip
def test_only_vllm_releases_with_finished_reason_error_read_it_as_a_failure_source(
    version: str, reads_engine: bool
) -> None:
    """FinishReason.ERROR appears in vLLM 0.13.0; before it the engine counts no failure."""
    sources = get_preset("vllm", version).failure_sources
    if not reads_engine:
        assert sources == ()
        return
    (engine,) = sources
    assert engine.name == "vllm:request_success_total"
    assert engine.error_matchers == (("finished_reason", "error"),)
    assert engine.exclude_matchers == (("finished_reason", "abort"),)


FAILURE_SOURCES_GUARD = (
    'ALERTS{alertname="ModelSignalMissing",alertstate="firing",signal="failureSources"}'
)


def _guard_fires(tmp_path: Path, fixture: str, version: str, drop: str | None = None) -> str:
    """promtool's output for: does the failureSources guard fire at 45m over ``fixture``'s
    series (an hour of them, targets up), without metric ``drop``? Expected silent."""
    exposed = {k: v for k, v in load_fixture(fixture).items() if k != drop}
    rules, target = rendered("vllm", version, "llama3-70b-vllm")
    (tmp_path / "rules.yaml").write_text(dump_yaml(rules), encoding="utf-8")
    series = [
        {**s, "values": s["values"].replace("x30", "x60")} for s in input_series(exposed, target)
    ]
    series.append({"series": series_line("up", target), "values": "1+0x60"})
    suite = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": series,
                "promql_expr_test": [
                    {
                        "expr": f"count({FAILURE_SOURCES_GUARD}) or vector(0)",
                        "eval_time": "45m",
                        "exp_samples": [{"labels": "{}", "value": 0}],
                    }
                ],
            }
        ],
    }
    (tmp_path / "guard.test.yaml").write_text(dump_yaml(suite), encoding="utf-8")
    done = subprocess.run(
        [promtool(), "test", "rules", "guard.test.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout + done.stderr if done.returncode else "SILENT"


@pytest.mark.parametrize(
    ("fixture", "version"),
    [
        ("vllm-0.8.3.prom", "0.8.3"),
        ("vllm-0.8.prom", "0.8.5"),
        ("vllm-0.8-v0.prom", "0.8.5/v0"),
        ("vllm-0.9.prom", "0.9"),
        ("vllm-0.10.prom", "0.10"),
        ("vllm-0.11.prom", "0.11"),
        ("vllm-0.13.prom", "0.13"),
    ],
)
def test_the_failure_sources_guard_is_silent_on_a_healthy_release(
    tmp_path: Path, fixture: str, version: str
) -> None:
    """Each release's own exposition (no "error" series before 0.13) keeps
    ModelSignalMissing{signal="failureSources"} silent."""
    assert _guard_fires(tmp_path, fixture, version) == "SILENT"


def test_the_failure_sources_guard_fires_when_0_13s_engine_counter_is_missing(
    tmp_path: Path,
) -> None:
    """The control: the same 0.13 exposition without vllm:request_success_total fires it."""
    out = _guard_fires(tmp_path, "vllm-0.13.prom", "0.13", drop="vllm:request_success_total")
    assert "FAILED" in out and "got: {} 1" in out.replace("1E+00", "1"), out
