"""The pieces of bench/sloth_compare.py against the real tools: Sloth 0.16 generates rules from
the specs written from obsgen's plans, and on the same series (promtool 3) they record the same
error ratios as obsgen's and page on the same outage; rule pruning keeps what alerts read."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import _paging
import _rules
import _sloth
import sloth_compare

from generator.cases.slo_cases import bad_class
from generator.parts.promtool_series import Klass, series_text
from generator.promql import go_float
from tests import toolchain

SHARE = Fraction(1, 40)  # bad share of every SLO in the steady scenario


def _rows(plan, minutes: int, share: Fraction, onset: int | None = None) -> list[dict[str, str]]:
    """Counters scraped every 30 s for ``minutes``, 6,000 requests a minute, ``share`` of them
    bad for each SLO; from ``onset`` (minutes) on, every request failed and slow."""
    classes = [Klass(float(1 - share * len(plan.slos)) * 6000)]
    slow = []
    for s in plan.slos:
        bad = bad_class(s)
        classes.append(Klass(float(share) * 6000, bad.error, bad.durations))
        slow += bad.durations
    before = _paging.slo_counters(plan, plan.slos, classes)
    after = _paging.slo_counters(plan, plan.slos, [Klass(6000, True, tuple(slow))])
    rows = []
    for key in sorted(set(before) | set(after)):
        name, labels = key
        a, b = before.get(key, 0.0) / 2, after.get(key, 0.0) / 2
        values = f"0+{go_float(a)}x{minutes * 2}"
        if onset is not None:
            top = a * onset * 2
            rest = (minutes - onset) * 2 - 1
            values = f"0+{go_float(a)}x{onset * 2} {go_float(top + b)}+{go_float(b)}x{rest}"
        rows.append({"series": series_text(name, dict(labels)), "values": values})
    return rows


def _promtool(folder: Path, test: dict) -> subprocess.CompletedProcess[str]:
    (folder / "test.yaml").write_text(yaml.safe_dump(test, sort_keys=False, width=1_000_000))
    return subprocess.run(
        [toolchain.binary("prometheus3", "promtool"), "test", "rules", "test.yaml"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )


def test_sloth_generates_the_same_slis_as_obsgen_and_pages_with_it(tmp_path: Path) -> None:
    plans = sloth_compare.fleet(tmp_path / "fleet", 3, sloth_compare.PAGING_TARGET)
    docs = sloth_compare.sloth_docs(plans, tmp_path, toolchain.binary("sloth"))
    plan = plans[0]  # vLLM: availability and two latency SLOs
    names = [g["name"] for g in docs[plan.name]["groups"]]
    assert names == [
        _sloth.group_name(kind, plan.name, s.name) for s in plan.slos for kind in _sloth.GROUP_KINDS
    ]
    alerts = [r for g in docs[plan.name]["groups"] for r in g["rules"] if "alert" in r]
    assert [(a["alert"], a["labels"]["severity"]) for a in alerts] == [
        (_sloth.ALERT, sev) for _ in plan.slos for sev in ("critical", "warning")
    ]
    (tmp_path / "obsgen.yaml").write_text(yaml.safe_dump(sloth_compare.slo_doc(plan)))
    (tmp_path / "sloth.yaml").write_text(yaml.safe_dump(docs[plan.name]))
    exprs = []
    for s in plan.slos:
        for w in ("5m", "1h"):
            ours = f'service:slo_sli_error:ratio_rate{w}{{service="{plan.name}",slo="{s.name}"}}'
            theirs = (
                f'slo:sli_error:ratio_rate{w}{{sloth_service="{plan.name}",sloth_slo="{s.name}"}}'
            )
            for sel in (ours, theirs):
                exprs.append(f"abs(max({sel}) - {go_float(float(SHARE))}) < bool 1e-9")
    steady = {
        "name": "steady",
        "interval": "30s",
        "input_series": _rows(plan, 70, SHARE),
        "promql_expr_test": [
            {"expr": x, "eval_time": "70m", "exp_samples": [{"labels": "{}", "value": 1}]}
            for x in exprs
        ],
    }
    # Healthy, then every request fails and is slow from 70m on: both page on every SLO.
    outage = {
        "name": "outage",
        "interval": "30s",
        "input_series": _rows(plan, 116, Fraction(0), onset=70),
        "alert_rule_test": [
            {"eval_time": t, "alertname": name, "exp_alerts": []}
            for t in ("65m", "115m")
            for name in ("ErrorBudgetBurn", _sloth.ALERT)
        ],
    }
    test = {
        "rule_files": ["obsgen.yaml", "sloth.yaml"],
        "evaluation_interval": "1m",
        "tests": [steady, outage],
    }
    proc = _promtool(tmp_path, test)
    output = proc.stdout + proc.stderr
    fired = _rules.firing(output)
    assert "expr:" not in output, output[-3000:]  # every ratio as expected
    assert ("outage", 65 * 60_000) not in fired
    late = fired[("outage", 115 * 60_000)]
    pages = {
        (a["alertname"], a.get("slo") or a.get("sloth_slo"))
        for a in late
        if a["severity"] == "critical"
    }
    assert pages == {(n, s.name) for s in plan.slos for n in ("ErrorBudgetBurn", _sloth.ALERT)}


def test_prune_keeps_the_alerts_and_every_record_they_read_across_groups() -> None:
    doc = {
        "groups": [
            {
                "name": "records",
                "rules": [
                    {"record": "a:x:rate5m", "expr": "rate(x[5m])"},
                    {"record": "a:x:rate5m10", "expr": "a:x:rate5m * 10"},
                    {"record": "a:y:rate1h", "expr": "rate(y[1h])"},
                    {"record": "a:x:ratio", "expr": "a:x:rate5m / a:y:rate1h"},
                ],
            },
            {
                "name": "alerts",
                "rules": [
                    {"alert": "Keep", "expr": "a:x:ratio > 1"},
                    {"alert": "Drop", "expr": "a:x:rate5m10 > 1"},
                ],
            },
            {"name": "other", "rules": [{"record": "a:x:ratio", "expr": "vector(1)"}]},
        ]
    }
    pruned = _rules.prune(doc, lambda g: g["name"] != "other", lambda r: r["alert"] == "Keep")
    assert pruned == {
        "groups": [
            {
                "name": "records",
                "rules": [
                    {"record": "a:x:rate5m", "expr": "rate(x[5m])"},
                    {"record": "a:y:rate1h", "expr": "rate(y[1h])"},
                    {"record": "a:x:ratio", "expr": "a:x:rate5m / a:y:rate1h"},
                ],
            },
            {"name": "alerts", "rules": [{"alert": "Keep", "expr": "a:x:ratio > 1"}]},
        ]
    }
