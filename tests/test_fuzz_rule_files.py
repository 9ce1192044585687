"""Fuzzing ``obsgen lint`` inputs (issue 15): no rule file gives a traceback.

* raw: any bytes as a rule file;
* structured: rule files, PrometheusRule objects and Helm values of the right shape holding
  hostile values (wrong types, odd PromQL, escapes, huge numbers, durations that overflow).

Every run exits 0, 1 or 2 — never 70 (an internal error) — and names the file it could not
read, within the lint loader's bounds (``generator.lint.limits``: deep and long expressions,
alias bombs, huge integers are drawn too).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from generator.cli import main
from generator.errors import EXIT_INTERNAL_ERROR
from tests import fuzzing

PROMQL_PARTS = [
    "up",
    "rate(x[5m])",
    "sum by (le) (rate(h_bucket[5m]))",
    'histogram_quantile(0.99, sum by (le) (rate(h_bucket{le=~"1(\\\\.0)?"}[5m])))',
    "x > 1e400",
    'x{a="\\x1b[31m"}',
    'x{a=~"(?=5)"}',
    "absent(x)",
    "x offset -5m",
    "x @ 0",
    "x[99999999999999999999d]",
    "vector(1)",
    "(",
    ")",
    "{",
    "}",
    " or ",
    " and on (job) ",
    " / ",
    "1",
    "NaN",
    "Inf",
    "'",
    '"',
    "\\",
    "é",
]


def _expressions() -> st.SearchStrategy[Any]:
    text = st.lists(st.sampled_from(PROMQL_PARTS), min_size=1, max_size=8).map("".join)
    long_chain = st.integers(1, 3000).map(lambda n: " + ".join(["up"] * n))
    deep = st.integers(1, 400).map(lambda n: "(" * n + "up" + ")" * n)
    return st.one_of(text, long_chain, deep, fuzzing.anything())


def _rules() -> st.SearchStrategy[Any]:
    rule = st.fixed_dictionaries(
        {},
        optional={
            "alert": st.one_of(st.sampled_from(["A", "Model Down", ""]), fuzzing.texts()),
            "record": st.one_of(st.sampled_from(["a:b:c", "x", "1bad"]), fuzzing.texts()),
            "expr": _expressions(),
            "for": fuzzing.durations(),
            "keep_firing_for": fuzzing.durations(),
            "labels": st.one_of(fuzzing.label_maps(fuzzing.texts()), fuzzing.anything()),
            "annotations": st.one_of(
                st.dictionaries(
                    st.sampled_from(["summary", "description", "runbook_url", "x"]),
                    st.one_of(fuzzing.texts(), st.just("{{ $value | humanize }}"), st.just("{{")),
                ),
                fuzzing.anything(),
            ),
        },
    )
    return st.lists(st.one_of(rule, fuzzing.anything()), max_size=4)


def _groups() -> st.SearchStrategy[Any]:
    group = st.fixed_dictionaries(
        {},
        optional={
            "name": st.one_of(fuzzing.texts(), fuzzing.anything()),
            "interval": fuzzing.durations(),
            "limit": fuzzing.numbers(),
            "rules": st.one_of(_rules(), fuzzing.anything()),
        },
    )
    return st.one_of(st.lists(st.one_of(group, fuzzing.anything()), max_size=3), fuzzing.anything())


@st.composite
def rule_documents(draw: st.DrawFn) -> Any:
    """A plain rule file, a PrometheusRule object or kube-prometheus-stack values."""
    groups = draw(_groups())
    shape = draw(st.sampled_from(["plain", "operator", "helm", "any"]))
    if shape == "plain":
        return {"groups": groups}
    if shape == "operator":
        return {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusRule",
            "metadata": draw(
                st.one_of(st.just({"name": "x", "namespace": "y"}), fuzzing.anything())
            ),
            "spec": draw(st.one_of(st.just({"groups": groups}), fuzzing.anything())),
        }
    if shape == "helm":
        return {"additionalPrometheusRulesMap": {draw(fuzzing.texts()): {"groups": groups}}}
    return draw(fuzzing.anything())


def _lint(content: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.rules.yaml"
        path.write_bytes(content)
        capsys.readouterr()
        code = main(["lint", "--no-promtool", "--format", "text", str(path)])
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert code in (0, 1, 2), out
    assert code != EXIT_INTERNAL_ERROR and "Traceback" not in out, out


@fuzzing.budget(40)
@given(document=rule_documents())
def test_hostile_rule_files_lint_cleanly(document: Any, capsys: pytest.CaptureFixture[str]) -> None:
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    _lint(text.encode("utf-8"), capsys)


@fuzzing.budget(40)
@given(data=st.binary(max_size=2000))
def test_any_bytes_lint_cleanly(data: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    _lint(data, capsys)


@fuzzing.budget(10)
@given(fan=st.integers(1, 12), levels=st.integers(1, 9), digits=st.sampled_from([10, 70, 5000]))
def test_alias_bombs_and_huge_numbers_lint_cleanly(
    fan: int, levels: int, digits: int, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fan) + "]")
    lines.append(f"n: {'9' * digits}")
    lines.append("groups: [{name: g, rules: [{record: 'a:b:c', expr: up}]}]")
    _lint(("\n".join(lines) + "\n").encode(), capsys)
