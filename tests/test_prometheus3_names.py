"""Prometheus 3 UTF-8 metric names (``prometheus.version: "3"``): quoted selectors in every
PromQL obsgen writes, read back by lint and verify, and the promtool proof's honest skip."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import promql_parser as P
import pytest
import yaml

from generator.cli import main
from generator.lint import printer
from generator.lint import promql as q
from generator.project_config import CONFIG_FILE
from generator.promql import (
    Matcher,
    by,
    label_name,
    names_in,
    selector,
    series_metric,
    unquote,
)
from generator.verify_bundle import normalised_expr
from tests import toolchain
from tests.factories import set_path, write_spec
from tests.helpers_promtool import logging_promtool

ROOT = Path(__file__).resolve().parents[1]
OTEL = ROOT / "tests" / "fixtures" / "otel-prometheus3.yaml"
DOTTED = (
    "gen_ai.server.request.duration_seconds",
    "gen_ai.server.time_to_first_token_seconds",
    "gen_ai.server.queue.depth",
)
LEGACY = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def _render(tmp_path: Path, spec: Path, *flags: str) -> Path:
    out = tmp_path / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / CONFIG_FILE).write_text("render: {writeTests: true}\n")  # the tests' PromQL too
    assert main(["render", "--skip-promtool", *flags, "--out", str(out), str(spec)]) == 0
    return out


def _expressions(out: Path) -> list[tuple[str, str]]:
    """(where, PromQL) of every rule, test expression, test input series and dashboard query."""
    found: list[tuple[str, str]] = []
    for path in sorted((out / "rules").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for group in data.get("groups") or []:
            found += [(path.name, r["expr"]) for r in group["rules"]]
        for test in data.get("tests") or []:
            found += [(path.name, s["series"]) for s in test["input_series"]]
            found += [(path.name, e["expr"]) for e in test.get("promql_expr_test") or []]

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("expr", "query") and isinstance(value, str) and value:
                    found.append((where, value))
                else:
                    walk(value, where)
        elif isinstance(node, list):
            for value in node:
                walk(value, where)

    for path in sorted((out / "dashboards").glob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")), path.name)
    return found


def _parsed(expr: str) -> q.Expr:
    # Grafana's variables and label_values() are not PromQL: the series argument is.
    values = re.fullmatch(r"label_values\((.*), *[^,]+\)", expr)
    expr = values.group(1) if values else expr
    return q.parse(re.sub(r"\$__rate_interval|\$__interval", "5m", expr).replace("$", ""))


def test_selectors_quote_utf8_names_and_leave_legacy_ones_bare() -> None:
    le = Matcher("le", "=", "0.5")
    assert (
        selector("gen_ai.server.request.duration_seconds_bucket", [le])
        == '{"gen_ai.server.request.duration_seconds_bucket",le="0.5"}'
    )
    assert selector("vllm:num_requests_running", [le]) == 'vllm:num_requests_running{le="0.5"}'
    assert Matcher("gen_ai.system", "=", "openai").render() == '"gen_ai.system"="openai"'
    assert label_name("model_name") == "model_name"
    assert by(["gen_ai.system", "le"]) == ' by ("gen_ai.system", le)'


def test_a_quote_or_backslash_in_a_name_is_escaped_and_reads_back() -> None:
    name = 'gen_ai.we"ird\\name'
    text = selector(name, [Matcher("x.y", "=", 'a"b')])
    assert text == '{"gen_ai.we\\"ird\\\\name","x.y"="a\\"b"}'
    tree = q.parse(text)
    assert q.selector_name(tree) == name
    assert series_metric(text) == name
    assert name in names_in(f"rate({text}[5m])")
    assert unquote('a\\"b\\\\c') == 'a"b\\c'


def test_every_promql_obsgen_writes_quotes_the_dotted_names_and_parses(tmp_path: Path) -> None:
    out = _render(tmp_path, OTEL)
    exprs = _expressions(out)
    read: set[str] = set()
    for where, expr in exprs:
        for found in re.finditer(r"gen_ai\.", expr):
            assert expr[found.start() - 1] == '"', f"{where}: unquoted name in {expr}"
        tree = _parsed(expr)  # raises on anything Prometheus 3's grammar refuses
        read |= {q.selector_name(n) for n, _ in q.walk(tree) if isinstance(n, P.VectorSelector)}
    for name in DOTTED:
        assert {name + "_bucket", name} & read or name in read, name
    assert "gen_ai.server.request.duration_seconds_count" in read
    # The generated tests feed the dotted series, quoted as Prometheus 3 writes them.
    tests = (out / "rules" / "genai-gw.test.yaml").read_text(encoding="utf-8")
    assert (
        """- series: '{"gen_ai.server.request.duration_seconds_bucket","""
        """"http.response.status_code"="200",job="genai-gw",le="0.5",namespace="gateway"}'"""
    ) in tests
    rules = (out / "rules" / "genai-gw.rules.yaml").read_text(encoding="utf-8")
    assert '({"gen_ai.server.queue.depth",job="genai-gw",namespace="gateway"})' in rules
    assert '"http.response.status_code"=~"5.."' in rules
    assert '"http.response.status_code"="500"' in tests
    dashboard = (out / "dashboards" / "genai-gw.json").read_text(encoding="utf-8")
    assert '{\\"gen_ai.server.time_to_first_token_seconds_bucket\\",job=\\"genai-gw\\"' in dashboard
    assert 'sum by (\\"http.response.status_code\\")' in dashboard


def test_record_names_stay_legacy(tmp_path: Path) -> None:
    out = _render(tmp_path, OTEL)
    data = yaml.safe_load((out / "rules" / "genai-gw.rules.yaml").read_text(encoding="utf-8"))
    records = [r["record"] for g in data["groups"] for r in g["rules"] if "record" in r]
    assert records and all(LEGACY.match(r) for r in records)


def test_names_with_quotes_survive_yaml_json_and_promql(tmp_path: Path) -> None:
    data = yaml.safe_load(OTEL.read_text(encoding="utf-8"))
    name = 'gen_ai.we"ird\\queue'
    set_path(data, "spec.metrics.queueDepth.name", name)
    out = _render(tmp_path, write_spec(tmp_path, data))
    seen = 0
    for _, expr in _expressions(out):
        tree = _parsed(expr)
        for node, _ in q.walk(tree):
            if isinstance(node, P.VectorSelector) and q.selector_name(node) == name:
                seen += 1
    assert seen >= 3  # the recording rule, the guard and a dashboard query read it


def test_lint_reads_quoted_names_and_its_fixes_keep_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _render(tmp_path, OTEL)
    code = main(
        [
            "lint",
            "--no-promtool",
            "--prometheus-version",
            "3",
            str(out / "rules" / "genai-gw.rules.yaml"),
        ]
    )
    assert code == 0, capsys.readouterr().out
    capsys.readouterr()
    # A fix printed from a parsed quoted selector parses back to the same selector.
    expr = 'rate({"gen_ai.x_bucket","gen_ai.system"="openai",le="0.5"}[5m])'
    assert printer.render(q.parse(expr)) == expr
    rule = tmp_path / "bad.yaml"
    rule.write_text(
        "groups:\n- name: g\n  rules:\n  - record: x:y:rate5m\n"
        '    expr: sum({"gen_ai.x_total",job=~"a"})\n',
        encoding="utf-8",
    )
    main(["lint", "--no-promtool", "--prometheus-version", "3", "--format", "json", str(rule)])
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [f["check"] for f in findings] == ["regex-plain-string"]
    assert findings[0]["fix"]["expr"] == 'sum({"gen_ai.x_total",job="a"})'


def test_verify_normalises_both_spellings_of_a_quoted_name_alike() -> None:
    written = 'sum by (le) (rate({"gen_ai.x_bucket",job="a",le="0.5"}[5m]))'
    printed = 'sum by (le) (rate({__name__="gen_ai.x_bucket",job="a",le="0.5"}[5m]))'
    assert normalised_expr(written) == normalised_expr(printed)
    assert normalised_expr('{"up","job"="a"}') == normalised_expr('up{job="a"}')
    assert normalised_expr('{"gen_ai.x",job="a"}') != normalised_expr('{"gen_ai.y",job="a"}')


def test_render_says_the_promtool_proof_is_not_run_with_promtool_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "promtool.log"
    wrapper = tmp_path / "promtool"
    two = toolchain.binary("prometheus2", "promtool")
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{two}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PROMTOOL", str(wrapper))
    assert main(["render", "--no-cache", "--out", str(tmp_path / "out"), str(OTEL)]) == 0
    err = capsys.readouterr().err
    assert (
        "otel-prometheus3.yaml: spec.prometheus.version: warning: promtool proof NOT run for "
        "this spec: its rules read 'gen_ai.server.queue.depth' (and 3 more) with Prometheus 3 "
        "quoted selectors, and the installed promtool 2.53.3 predates that syntax"
    ) in err, err
    calls = log.read_text().splitlines()
    assert calls[0] == "--version"
    assert not any("genai-gw" in c for c in calls), calls


def test_render_proves_utf8_names_with_the_real_promtool_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = logging_promtool(tmp_path, monkeypatch)
    assert main(["render", "--no-cache", "--out", str(tmp_path / "out"), str(OTEL)]) == 0
    err = capsys.readouterr().err
    assert "promtool proof NOT run" not in err, err
    calls = log.read_text().splitlines()
    assert any(c.startswith("check rules") and "genai-gw" in c for c in calls), calls
    assert any(c.startswith("test rules") and "genai-gw" in c for c in calls), calls
    rules = (tmp_path / "out" / "rules" / "genai-gw.rules.yaml").read_text(encoding="utf-8")
    assert '{"gen_ai.server.queue.depth"' in rules


@pytest.mark.parametrize("version", ["2", "compat"])
def test_a_utf8_label_name_before_prometheus_3_names_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    data = yaml.safe_load(OTEL.read_text(encoding="utf-8"))
    set_path(data, "spec.prometheus.version", version)
    set_path(data, "spec.metrics.requestDuration.name", "gen_ai_server_request_duration_seconds")
    set_path(
        data, "spec.metrics.timeToFirstToken.name", "gen_ai_server_time_to_first_token_seconds"
    )
    set_path(data, "spec.metrics.requests.name", "gen_ai_server_request_duration_seconds_count")
    set_path(data, "spec.metrics.queueDepth.name", "gen_ai_server_queue_depth")
    spec = write_spec(tmp_path / "specs", data)
    assert main(["render", "--skip-promtool", "--out", str(tmp_path), str(spec)]) == 2
    err = capsys.readouterr().err
    assert (
        "specs/x.yaml: spec.metrics.requests.errorMatchers: label 'http.response.status_code' "
        "is not a legacy Prometheus label name"
    ) in err, err
    assert "metric_name_escaping_scheme: underscores" in err
    assert "give the escaped name http_response_status_code" in err
    assert "Traceback" not in err


def test_lint_says_an_old_promtool_cannot_read_quoted_names_for_prometheus_3_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = str(_render(tmp_path, OTEL) / "rules" / "genai-gw.rules.yaml")
    capsys.readouterr()
    # Debian's promtool 2.42 (what `make render` installs) cannot parse quoted names; 2.53 can.
    monkeypatch.setenv("PROMTOOL", toolchain.debian_promtool())
    assert main(["lint", "--prometheus-version", "3", rules]) == 0
    out = capsys.readouterr().out
    assert "info: the promtool installed here predates Prometheus 3's quoted UTF-8 names" in out
    assert " error: " not in out
    # Rules that must also work on Prometheus 2 cannot use them: promtool's refusal stands.
    assert main(["lint", "--prometheus-version", "both", rules]) == 1
    assert 'error: promtool: group "obsgen.genai-gw.' in capsys.readouterr().out


def test_lint_with_promtool_3_reads_quoted_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = str(_render(tmp_path, OTEL) / "rules" / "genai-gw.rules.yaml")
    capsys.readouterr()
    assert main(["lint", "--prometheus-version", "3", rules]) == 0
    out = capsys.readouterr().out
    assert "predates Prometheus 3" not in out and " error: " not in out, out
