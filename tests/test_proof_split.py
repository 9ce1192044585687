"""``obsgen render`` runs each generated test file split by the rules its test groups observe
(generator/proof_split.py): the same test groups, each rule copied unchanged within its group,
and a broken threshold still caught."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from generator import proof_split
from generator.proof_split import (
    TESTS_PER_PART,
    assertion_keys,
    estimated_cost,
    split_test_file,
)
from tests.helpers_promtool import ROOT, assert_ok, run_promtool


@pytest.fixture(autouse=True)
def _promtool_2(monkeypatch: pytest.MonkeyPatch) -> None:
    """These hand-written fixtures put samples on window edges and count them as Prometheus 2
    does (ranges closed on the left): they prove how a proof is split, on promtool 2.42
    (Debian's, what `make render` installs)."""
    from tests import toolchain

    monkeypatch.setenv("PROMTOOL", toolchain.debian_promtool())


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _subsequence(part: list, whole: list) -> bool:
    rest = iter(whole)
    return all(any(item == other for other in rest) for item in part)


def test_the_parts_hold_every_test_group_and_only_verbatim_rules(tmp_path: Path) -> None:
    for path in (ROOT / "rules").glob("o1-preview.*"):
        shutil.copy(path, tmp_path)
    original = _load(tmp_path / "o1-preview.test.yaml")
    groups = _load(tmp_path / "o1-preview.rules.yaml")["groups"]
    parts = split_test_file(tmp_path / "o1-preview.test.yaml")
    assert len(parts) > 1
    seen = []
    loaded_rules = []
    for part in parts:
        doc = _load(part)
        assert doc["evaluation_interval"] == original["evaluation_interval"]
        assert 1 <= len(doc["tests"]) <= TESTS_PER_PART  # spread over the cores
        seen += doc["tests"]
        (rule_file,) = doc["rule_files"]
        kept = _load(tmp_path / rule_file)["groups"]
        by_name = {g["name"]: g for g in groups}
        for group in kept:
            whole = by_name[group["name"]]
            assert {**group, "rules": None} == {**whole, "rules": None}
            assert _subsequence(group["rules"], whole["rules"])
        loaded_rules.append(sum(len(g["rules"]) for g in kept))
    assert sorted(t["name"] for t in seen) == sorted(t["name"] for t in original["tests"])
    # the burn-rate cases load the SLO rules only, not the service's 80-odd rules; the SLO
    # rules no alert reads (the 30d window, the budget left) are left out too
    assert min(loaded_rules) < sum(len(g["rules"]) for g in groups) / 2
    slo_rules = sum(len(g["rules"]) for g in groups if ".slo." in g["name"])
    assert any(0 < n < slo_rules for n in loaded_rules)
    assert_ok(run_promtool("test", "rules", *parts))


RULES = """
groups:
- name: raw
  rules:
  - record: job:requests:rate1m
    expr: sum by (job) (rate(requests_total[1m]))
  - record: job:requests:rate5m
    expr: sum by (job) (rate(requests_total[5m]))
- name: derived
  rules:
  - alert: TrafficHigh
    expr: job:requests:rate1m > 1
- name: unrelated
  rules:
  - alert: Other
    expr: vector(1)
"""


def _test_file(tmp_path: Path, *tests: dict) -> Path:
    (tmp_path / "x.rules.yaml").write_text(RULES, encoding="utf-8")
    doc = {"rule_files": ["x.rules.yaml"], "evaluation_interval": "1m", "tests": list(tests)}
    path = tmp_path / "x.test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


SERIES = [{"series": 'requests_total{job="a"}', "values": "0+120x10"}]


def test_a_part_loads_the_groups_its_alert_reads_records_from(tmp_path: Path) -> None:
    traffic = {
        "name": "traffic",
        "interval": "1m",
        "input_series": SERIES,
        "alert_rule_test": [
            {
                "eval_time": "5m",
                "alertname": "TrafficHigh",
                "exp_alerts": [{"exp_labels": {"job": "a"}}],
            }
        ],
    }
    other = {
        "name": "other",
        "interval": "1m",
        "input_series": SERIES,
        "alert_rule_test": [
            {"eval_time": "1m", "alertname": "Other", "exp_alerts": [{"exp_labels": {}}]}
        ],
    }
    parts = split_test_file(_test_file(tmp_path, traffic, other))
    names = []
    for part in parts:
        rule_file = _load(part)["rule_files"][0]
        names.append([g["name"] for g in _load(tmp_path / rule_file)["groups"]])
    assert names == [["raw", "derived"], ["unrelated"]]
    raw = _load(tmp_path / _load(parts[0])["rule_files"][0])["groups"][0]
    assert [r["record"] for r in raw["rules"]] == ["job:requests:rate1m"]  # rate5m: unread
    assert_ok(run_promtool("test", "rules", *parts))


def _alert_test(alert: str, at: str, expected: list[dict]) -> dict:
    return {
        "name": alert,
        "interval": "1m",
        "input_series": SERIES,
        "alert_rule_test": [{"eval_time": at, "alertname": alert, "exp_alerts": expected}],
    }


def _loaded(tmp_path: Path, part: Path) -> list[list[str]]:
    groups = _load(tmp_path / _load(part)["rule_files"][0])["groups"]
    return [[r.get("record") or r["alert"] for r in g["rules"]] for g in groups]


def test_a_record_read_before_it_is_defined_keeps_its_place(tmp_path: Path) -> None:
    """A rule reading a record its group defines later sees the previous evaluation's value;
    the part keeps both, in their order, so the alert fires when it would in the whole file."""
    rules = """
groups:
- name: g
  rules:
  - alert: LateRead
    expr: job:late:rate1m > 1
  - record: job:unrelated:sum
    expr: sum(requests_total)
  - record: job:late:rate1m
    expr: sum by (job) (rate(requests_total[1m]))
"""
    (tmp_path / "x.rules.yaml").write_text(rules, encoding="utf-8")
    test = _alert_test("LateRead", "3m", [{"exp_labels": {"job": "a"}}])
    doc = {"rule_files": ["x.rules.yaml"], "evaluation_interval": "1m", "tests": [test]}
    path = tmp_path / "x.test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    (part,) = split_test_file(path)
    assert _loaded(tmp_path, part) == [["LateRead", "job:late:rate1m"]]
    assert_ok(run_promtool("test", "rules", part))


@pytest.mark.parametrize(
    ("expr", "kept"),
    [
        pytest.param(
            'absent(ALERTS{alertname="TrafficHigh"})',
            [["job:requests:rate1m"], ["TrafficHigh"], ["Other", "Reader"]],
            id="reading ALERTS needs every alert",
        ),
        pytest.param(
            '(count({__name__=~"job:.*"}) or vector(0)) > 99',
            [["job:requests:rate1m", "job:requests:rate5m"], ["TrafficHigh"], ["Other", "Reader"]],
            id="a __name__ matcher may read any record",
        ),
        pytest.param(
            'vector(1) * on() group_left {job="a"} > 99',
            [["job:requests:rate1m", "job:requests:rate5m"], ["TrafficHigh"], ["Other", "Reader"]],
            id="a selector without a name after group_left may read any record",
        ),
    ],
)
def test_a_rule_reading_by_state_or_name_pattern_keeps_what_it_may_read(
    tmp_path: Path, expr: str, kept: list[list[str]]
) -> None:
    reader = f"  - alert: Reader\n    expr: {expr}\n"
    path = _test_file(tmp_path, _alert_test("Reader", "2m", []), _alert_test("Other", "1m", []))
    rule_file = tmp_path / "x.rules.yaml"
    rule_file.write_text(rule_file.read_text(encoding="utf-8") + reader, encoding="utf-8")
    parts = split_test_file(path)
    assert _loaded(tmp_path, parts[0]) == kept
    assert _loaded(tmp_path, parts[1]) == [["Other"]]


def test_an_expression_reading_alerts_keeps_every_group(tmp_path: Path) -> None:
    reads_alerts = {
        "name": "alerts",
        "interval": "1m",
        "input_series": SERIES,
        "promql_expr_test": [
            {
                "expr": 'count(ALERTS{alertstate="firing"})',
                "eval_time": "5m",
                "exp_samples": [{"labels": "{}", "value": 2}],
            }
        ],
    }
    path = _test_file(tmp_path, reads_alerts)
    assert split_test_file(path) == [path]
    assert_ok(run_promtool("test", "rules", path))


# Each case: rule files and a test file `t.yaml` whose test groups promtool passes (or fails)
# as a whole; split, every part must get the same verdict. The `other` test group observes an
# unrelated alert, so the file does split.
OTHER_GROUP = """
- name: unrelated
  rules:
  - alert: Other
    expr: vector(1)
"""
OTHER_TEST = """
- name: other
  interval: 1m
  alert_rule_test:
  - {eval_time: 1m, alertname: Other, exp_alerts: [{exp_labels: {}}]}
"""
RECORDS = """
groups:
- name: raw
  rules:
  - record: job:requests:rate1m
    expr: sum by (job) (rate(requests_total[1m]))
- name: alerts
  rules:
"""
ONE_JOB = """
  input_series: [{series: 'requests_total{job="a"}', values: '0+60x10'}]
"""


def _alert_case(rule: str, alert: str, expected: str, group: str = RECORDS) -> dict[str, str]:
    rules = group + rule + OTHER_GROUP
    test = f"""
rule_files: [r.yaml]
tests:
- name: observed
  interval: 1m
{ONE_JOB}
  alert_rule_test:
  - {{eval_time: 5m, alertname: {alert}, exp_alerts: [{expected}]}}
{OTHER_TEST}"""
    return {"r.yaml": rules, "t.yaml": test}


def _verdicts(tmp_path: Path, files: dict[str, str]) -> tuple[str, str]:
    """promtool's output for the whole test file and for its split parts."""
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    whole = run_promtool("test", "rules", "t.yaml", cwd=tmp_path)
    parts = split_test_file(tmp_path / "t.yaml")
    split = run_promtool("test", "rules", *parts, cwd=tmp_path)
    return whole.stdout + whole.stderr, split.stdout + split.stderr


SAME_VERDICT_CASES = {
    "a selector without a metric name reads records": _alert_case(
        '  - alert: Many\n    expr: count({job="a"}) > 1\n', "Many", "{exp_labels: {}}"
    ),
    "a selector without a name after a keyword operator": _alert_case(
        '  - alert: Many\n    expr: count(nothing or{job="a"}) > 1\n', "Many", "{exp_labels: {}}"
    ),
    "a template query reads a record": _alert_case(
        "  - alert: Templated\n    expr: vector(1)\n    annotations:\n"
        '      rate: \'{{ with query "job:requests:rate1m" }}{{ . | first | value }}'
        "{{ else }}none{{ end }}'\n",
        "Templated",
        "{exp_labels: {}, exp_annotations: {rate: '1'}}",
    ),
    "a template query reads ALERTS": _alert_case(
        "  - alert: Base\n    expr: vector(1)\n"
        "  - alert: Summary\n    expr: vector(1)\n    labels:\n"
        '      firing: \'{{ with query "count(ALERTS{alertname=\\"Base\\"})" }}'
        "{{ . | first | value }}{{ else }}0{{ end }}'\n",
        "Summary",
        "{exp_labels: {firing: '1'}}",
    ),
    "an expression test selecting by labels only": {
        "r.yaml": RECORDS
        + "  - record: job:requests:sum\n    expr: sum by (job) (requests_total)\n"
        + OTHER_GROUP,
        "t.yaml": f"""
rule_files: [r.yaml]
tests:
- name: observed
  interval: 1m
{ONE_JOB}
  promql_expr_test:
  - expr: count({{job="a"}}) + 0 * sum(job:requests:rate1m)
    eval_time: 5m
    exp_samples: [{{labels: '{{}}', value: 3}}]
{OTHER_TEST}""",
    },
}


@pytest.mark.parametrize("files", SAME_VERDICT_CASES.values(), ids=SAME_VERDICT_CASES.keys())
def test_the_parts_get_the_whole_files_verdict(tmp_path: Path, files: dict[str, str]) -> None:
    whole, split = _verdicts(tmp_path, files)
    assert "SUCCESS" in whole and "FAILED" not in whole, whole
    assert "FAILED" not in split, split


SAME_VERDICT_CASES["plain scalars keep their text (1.10 is not 1.1, no is not false)"] = (
    _alert_case(
        "  - alert: Versioned\n    expr: vector(1)\n"
        "    labels: {version: 1.10, team: no, at: 12:30, hex: 0x1F}\n",
        "Versioned",
        "{exp_labels: {version: '1.10', team: 'no', at: '12:30', hex: '0x1F'}}",
    )
)

FAILING_CASES = {
    "a key twice in a rule promtool never evaluates": _alert_case(
        "  - alert: Twice\n    expr: vector(1)\n    expr: vector(2)\n", "Other", "{exp_labels: {}}"
    ),
    "a key twice in a test group": {
        "r.yaml": RECORDS + "  - alert: A\n    expr: vector(1)\n" + OTHER_GROUP,
        "t.yaml": """
rule_files: [r.yaml]
tests:
- name: a
  interval: 1m
  interval: 2m
  alert_rule_test:
  - {eval_time: 1m, alertname: A, exp_alerts: [{exp_labels: {}}]}
"""
        + OTHER_TEST,
    },
}


@pytest.mark.parametrize("files", FAILING_CASES.values(), ids=FAILING_CASES.keys())
def test_the_parts_fail_where_the_whole_file_fails(tmp_path: Path, files: dict[str, str]) -> None:
    whole, split = _verdicts(tmp_path, files)
    assert "FAILED" in whole, whole
    assert "FAILED" in split, split


TWO_FILES_ONE_GROUP_NAME = {
    "r1.yaml": "groups:\n- name: g\n  rules:\n  - record: x\n    expr: vector(1)\n"
    "  - alert: A\n    expr: x > 0\n" + OTHER_GROUP,
    "r2.yaml": "groups:\n- name: g\n  rules:\n  - record: y\n    expr: x + 1\n"
    "  - alert: B\n    expr: y > 1\n",
    "t.yaml": """
rule_files: [r1.yaml, r2.yaml, ./r1.yaml]
tests:
- name: b
  interval: 1m
  alert_rule_test:
  - {eval_time: 3m, alertname: B, exp_alerts: [{exp_labels: {}}]}
"""
    + OTHER_TEST,
}
SAME_VERDICT_CASES["a group name in two rule files, a rule file listed twice"] = (
    TWO_FILES_ONE_GROUP_NAME
)
# promtool globs rule_files: `r[1].yaml` loads r1.yaml, not the file of that name
SAME_VERDICT_CASES["a rule file name promtool reads as a glob"] = {
    "r1.yaml": RECORDS + "  - alert: A\n    expr: vector(1)\n" + OTHER_GROUP,
    "r[1].yaml": RECORDS + "  - alert: A\n    expr: vector(0) > 1\n" + OTHER_GROUP,
    "t.yaml": """
rule_files: ['r[1].yaml']
tests:
- name: a
  interval: 1m
  alert_rule_test:
  - {eval_time: 1m, alertname: A, exp_alerts: [{exp_labels: {}}]}
"""
    + OTHER_TEST,
}


@pytest.mark.parametrize(
    ("rules", "test"),
    [
        pytest.param(
            RULES, b"rule_files: [x.rules.yaml]\ntests:\n- null\n", id="a test group null"
        ),
        pytest.param(
            RULES, b"rule_files: [x.rules.yaml]\ntests:\n- {alert_rule_test: [x]}\n", id="a string"
        ),
        pytest.param(b"groups:\n- null\n", b"rule_files: [x.rules.yaml]\ntests: []\n", id="group"),
        pytest.param(
            b"groups:\n- {name: g, rules: [x]}\n",
            b"rule_files: [x.rules.yaml]\ntests: []\n",
            id="rule",
        ),
        pytest.param(RULES, b"rule_files: [x.rules.yaml]\ntests: [{name: \xe9}]\n", id="not UTF-8"),
    ],
)
def test_a_file_it_cannot_account_for_stays_whole(
    tmp_path: Path, rules: str | bytes, test: bytes
) -> None:
    rule_file = tmp_path / "x.rules.yaml"
    if isinstance(rules, str):
        rule_file.write_text(rules, encoding="utf-8")
    else:
        rule_file.write_bytes(rules)
    path = tmp_path / "x.test.yaml"
    path.write_bytes(test)
    assert split_test_file(path) == [path]


def test_estimated_cost_is_steps_times_rules_loaded(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(
        "groups:\n- name: g\n  rules:\n"
        "  - record: a\n    expr: vector(1)\n  - record: b\n    expr: vector(2)\n"
        "- name: h\n  rules:\n  - record: c\n    expr: vector(3)\n"
    )
    test = tmp_path / "t.yaml"
    test.write_text(
        "rule_files: [r.yaml]\nevaluation_interval: 30s\ntests:\n"
        "- alert_rule_test: [{eval_time: 10m, alertname: X}]\n"
        "  promql_expr_test: [{eval_time: 0m, expr: a, exp_samples: []}]\n"
        "- promql_expr_test: [{eval_time: 0s, expr: a, exp_samples: []}]\n"
    )
    assert estimated_cost(test) == (20 + 1) * 3 + 1 * 3
    broken = tmp_path / "broken.yaml"
    broken.write_text("rule_files: [missing.yaml]\ntests: []\n")
    assert estimated_cost(broken) == broken.stat().st_size


def test_the_split_gives_each_parts_estimated_cost(tmp_path: Path) -> None:
    for path in (ROOT / "rules").glob("o1-preview.*"):
        shutil.copy(path, tmp_path)
    costs: dict[Path, int] = {}
    parts = split_test_file(tmp_path / "o1-preview.test.yaml", costs)
    assert len(parts) > 1
    assert costs == {part: estimated_cost(part) for part in parts}


def _asserted(part: Path) -> set[str]:
    return {a["alertname"] for t in _load(part)["tests"] for a in t.get("alert_rule_test", [])}


def test_assertions_that_passed_are_left_out_and_a_changed_alert_still_fails(
    tmp_path: Path,
) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    for folder in (old, new):
        folder.mkdir()
        for path in (ROOT / "rules").glob("o1-preview.*"):
            shutil.copy(path, folder)
    passed = set().union(*map(assertion_keys, old.glob("*.test.yaml")))
    assert len(passed) > 60
    assert split_test_file(new / "o1-preview.test.yaml", proven=passed) == []

    # The error-ratio threshold moved in the rules (5% → 60%), its tests left as they were:
    # only the assertions on that alert run again, and they fail.
    rules = new / "o1-preview.rules.yaml"
    text = rules.read_text(encoding="utf-8")
    moved = text.replace(
        'ratio_rate5m{namespace="ai-inference",service="o1-preview"} > 0.05',
        'ratio_rate5m{namespace="ai-inference",service="o1-preview"} > 0.6',
    )
    assert moved != text
    rules.write_text(moved, encoding="utf-8")
    parts = split_test_file(new / "o1-preview.test.yaml", proven=passed)
    assert parts
    assert set().union(*map(_asserted, parts)) == {"ModelErrorRatioHigh"}
    tested = sum(len(_load(part)["tests"]) for part in parts)
    assert tested < len(_load(new / "o1-preview.test.yaml")["tests"]) / 4
    result = run_promtool("test", "rules", *parts)
    assert result.returncode != 0
    assert "ModelErrorRatioHigh" in result.stdout + result.stderr
    # every assertion of the slow files stays proven: none reads that alert
    assert split_test_file(new / "o1-preview.slow-1h.test.yaml", proven=passed) == []


def _keys(tmp_path: Path, rules: str, doc: dict) -> set[str]:
    (tmp_path / "x.rules.yaml").write_text(rules, encoding="utf-8")
    path = tmp_path / "x.test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return assertion_keys(path)


def _traffic_doc() -> dict:
    test = _alert_test("TrafficHigh", "5m", [{"exp_labels": {"job": "a"}}])
    return {"rule_files": ["x.rules.yaml"], "evaluation_interval": "1m", "tests": [test]}


def _with_group(**fields: object) -> dict:
    doc = _traffic_doc()
    doc["tests"][0].update(fields)
    return doc


def _with_assertion(**fields: object) -> dict:
    doc = _traffic_doc()
    doc["tests"][0]["alert_rule_test"][0].update(fields)
    return doc


SLOWER = [{"series": 'requests_total{job="a"}', "values": "0+60x10"}]
UNREAD = [*SERIES, {"series": 'other_total{job="a"}', "values": "0+1x10"}]
BY_NAME = [*SERIES, {"series": '{__name__="requests_total", job="b"}', "values": "0+1x10"}]
DECOY = [*SERIES, {"series": '{job=\'x,__name__="o"\', __name__="requests_total"}', "values": "1"}]


@pytest.mark.parametrize(
    ("edit", "doc", "same"),
    [
        pytest.param(("vector(1)", "vector(2)"), _traffic_doc(), True, id="an unobserved rule"),
        pytest.param(None, _with_group(name="renamed"), True, id="the test group's name"),
        pytest.param(
            ("rate(requests_total[1m])", "irate(requests_total[1m])"),
            _traffic_doc(),
            False,
            id="a record read",
        ),
        pytest.param(("> 1", "> 2"), _traffic_doc(), False, id="the alert"),
        pytest.param(
            ("- name: derived\n", "- name: derived\n  interval: 2m\n"),
            _traffic_doc(),
            False,
            id="its group",
        ),
        pytest.param(("- name: raw\n", "- name: raw2\n"), _traffic_doc(), False, id="a group read"),
        pytest.param(
            None,
            {**_traffic_doc(), "evaluation_interval": "30s"},
            False,
            id="the evaluation interval",
        ),
        pytest.param(None, _with_group(interval="2m"), False, id="the series interval"),
        pytest.param(None, _with_group(input_series=SLOWER), False, id="the input series"),
        pytest.param(None, _with_group(input_series=UNREAD), False, id="a series no rule reads"),
        pytest.param(None, _with_group(input_series=BY_NAME), False, id="a series by __name__"),
        pytest.param(None, _with_group(input_series=DECOY), False, id="a quoted __name__ decoy"),
        pytest.param(
            None, _with_group(external_labels={"cluster": "x"}), False, id="external labels"
        ),
        pytest.param(None, _with_assertion(eval_time="6m"), False, id="the eval time"),
        pytest.param(None, _with_assertion(exp_alerts=[]), False, id="the expectation"),
    ],
)
def test_an_assertion_key_changes_with_every_input_of_its_verdict(
    tmp_path: Path, edit: tuple[str, str] | None, doc: dict, same: bool
) -> None:
    before = _keys(tmp_path, RULES, _traffic_doc())
    assert len(before) == 1
    rules = RULES if edit is None else RULES.replace(*edit)
    assert (rules, doc) != (RULES, _traffic_doc())
    assert (_keys(tmp_path, rules, doc) == before) is same


def test_a_plain_and_a_quoted_scalar_give_different_keys(tmp_path: Path) -> None:
    # promtool's decoder reads some fields of `1` and `'1'` differently (a number or text):
    # the key keeps the difference rather than assume which.
    rule = "expr: job:requests:rate1m > 1"
    quoted = RULES.replace(rule, rule + "\n    labels: {tier: '1'}")
    plain = RULES.replace(rule, rule + "\n    labels: {tier: 1}")
    assert _keys(tmp_path, quoted, _traffic_doc()) != _keys(tmp_path, plain, _traffic_doc())


def test_an_expression_test_is_proved_again_when_its_group_evaluates_longer(
    tmp_path: Path,
) -> None:
    # `@ 600` reads the record at 10m (5m back at most), which exists only when the test group
    # evaluates that far.
    late_read = {
        "name": "late read",
        "interval": "1m",
        "input_series": SERIES,
        "promql_expr_test": [
            {"expr": "job:requests:rate1m @ 600", "eval_time": "1m", "exp_samples": []}
        ],
    }
    old = tmp_path / "old"
    old.mkdir()
    passed = assertion_keys(_test_file(old, late_read))
    assert_ok(run_promtool("test", "rules", old / "x.test.yaml"))

    alert = _alert_test("TrafficHigh", "10m", [{"exp_labels": {"job": "a"}}])
    alone = tmp_path / "alone"
    alone.mkdir()
    passed |= assertion_keys(_test_file(alone, alert))  # the alert's case passed on its own

    # Both in one test group: the group now evaluates to 10m, and the expression sees it.
    both = {**late_read, "alert_rule_test": alert["alert_rule_test"]}
    path = _test_file(tmp_path, both)
    assert run_promtool("test", "rules", path).returncode != 0
    parts = split_test_file(path, proven=passed)
    assert [_load(p)["tests"] for p in parts] == [[both]]  # run whole, the alert's case too
    assert run_promtool("test", "rules", *parts).returncode != 0


def test_files_on_disk_outside_the_bounds_give_no_keys(tmp_path: Path) -> None:
    path = _test_file(tmp_path, _alert_test("TrafficHigh", "5m", []))
    assert assertion_keys(path)
    fifo = tmp_path / "fifo.rules.yaml"
    os.mkfifo(fifo)
    doc = _load(path)
    path.write_text(yaml.safe_dump({**doc, "rule_files": ["fifo.rules.yaml"]}), encoding="utf-8")
    assert assertion_keys(path) == set()  # not opened: a FIFO would block the read forever

    laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)
    )
    path.write_text(laughs + "rule_files: [x.rules.yaml]\ntests: [*a8]\n", encoding="utf-8")
    assert assertion_keys(path) == set()


@pytest.mark.parametrize(
    ("edit", "what"),
    [
        pytest.param(
            ("expr: vector(1)", "expr: &other vector(1)\n  - alert: Copy\n    expr: *other"),
            "anchor or alias",
            id="an alias (promtool reads the anchor's name)",
        ),
        pytest.param(("expr: vector(1)", "expr: !!str vector(1)"), "explicit YAML tag", id="a tag"),
        pytest.param(("- alert: Other", "- alert: null"), "not text", id="a null alert name"),
        pytest.param(
            ("  - alert: Other\n", "  - <<: {for: 1m}\n    alert: Other\n"),
            "merge key",
            id="a merge key (Go applies it in another order)",
        ),
    ],
)
def test_yaml_go_may_read_otherwise_is_neither_split_nor_keyed(
    tmp_path: Path, edit: tuple[str, str], what: str
) -> None:
    path = _test_file(tmp_path, _alert_test("TrafficHigh", "5m", []))
    rules = tmp_path / "x.rules.yaml"
    text = rules.read_text(encoding="utf-8")
    assert edit[0] in text
    rules.write_text(text.replace(*edit), encoding="utf-8")
    with pytest.raises(ValueError, match=what):
        proof_split._load(path)
    assert split_test_file(path) == [path]
    assert assertion_keys(path) == set()
