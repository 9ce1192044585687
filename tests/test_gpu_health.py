"""GPU health on both sources: ``GPUUncorrectableRowsRemapped`` beside the other health alerts.

dcgm-exporter's default counters file (tests/data/dcgm-exporter/, three tags) enables the
remapped-row counts but not the double-bit ECC fields nor the pending flag, so the remapped-row
count is what a default GPU Operator install shows of an uncorrectable memory error. Each
source's spec renders; the generated cases of every health alert (a firing case, a healthy
control, the alert's own quiet controls) pass the real promtool 3; the firing case fails
against a rule that cannot fire (it proves the alert, not only the silence); the sidecar
exports the series the alert reads (the exporter's golden scrape), and a source lacking it
raises a guard that names the counters-file line.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import dcgm_fields as f
from generator import naming
from generator.builders.gpu_rules import gpu_alerts
from generator.builders.guard_rules import signal_inputs
from generator.builders.rulefile import rule_file
from generator.families import xid_catalog
from generator.parts import gpu_series
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
    after_for,
    expected_alert,
    family_case,
)
from generator.render import load_plans
from generator.signals.healthy import healthy
from generator.yamlio import dump_yaml
from tests.factories import good_spec, set_path, write_spec
from tests.helpers_promtool import ROOT, render_to
from tests.test_dcgm_source import HEALTH, TAGS, counters
from tests.toolchain import binary

ALERT = naming.ALERT_GPU_UNCORRECTABLE_REMAP
GOLDEN = Path(__file__).parent / "exporter" / "golden" / "fake_8gpu.prom"
SOURCES = [("sidecar", {}), ("dcgm", {}), ("dcgm", {"honorLabels": True})]
SOURCE_IDS = ["sidecar", "dcgm without honorLabels", "dcgm with honorLabels"]


def _data(exporter: str, dcgm: dict[str, Any]) -> dict[str, Any]:
    data = set_path(
        good_spec(), "spec.gpu", {"exporter": exporter, **({"dcgm": dcgm} if dcgm else {})}
    )
    data = set_path(data, "metadata.name", f"health-{exporter}")
    return set_path(data, "spec.selector.job", f"health-{exporter}")


def _plan(tmp_path: Path, data: dict[str, Any]) -> Any:
    return next(iter(load_plans([write_spec(tmp_path, data, "health.yaml")], ROOT)))


def _health_file(files: dict[str, Path], out: Path) -> Path:
    """A promtool test file holding the generated groups with a health alert's case."""
    main = next(p for p in files.values() if p.name.endswith(".test.yaml") and "slow" not in p.name)
    doc = yaml.safe_load(main.read_text())
    doc["tests"] = [g for g in doc["tests"] if any(a in g["name"] for a in HEALTH)]
    doc["rule_files"] = [str(main.parent / Path(r).name) for r in doc["rule_files"]]
    out.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return out


def _promtool(test: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary("prometheus3", "promtool"), "test", "rules", str(test)],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize("tag", TAGS)
def test_default_counters_enable_remapped_rows_but_not_ecc_or_pending(tag: str) -> None:
    found = counters(tag)
    for field in (f.UNCORRECTABLE_REMAPPED_ROWS, f.CORRECTABLE_REMAPPED_ROWS):
        assert found[field.name] == ("counter", True), (tag, field.name)
    for field in (f.ECC_DBE_VOLATILE, f.ECC_DBE_AGGREGATE, f.ROW_REMAP_PENDING):
        assert not found.get(field.name, ("", False))[1], (tag, field.name)


def test_the_sidecar_exports_both_causes_per_gpu() -> None:
    text = GOLDEN.read_text(encoding="utf-8")
    assert "# TYPE gpu_remapped_rows_total counter" in text
    uncorrectable = re.findall(r'^gpu_remapped_rows_total\{cause="uncorrectable",', text, re.M)
    correctable = re.findall(r'^gpu_remapped_rows_total\{cause="correctable",', text, re.M)
    assert uncorrectable and len(uncorrectable) == len(correctable)


@pytest.mark.parametrize(("exporter", "dcgm"), SOURCES, ids=SOURCE_IDS)
def test_health_alerts_fire_on_their_fault_and_stay_quiet_on_a_healthy_node(
    tmp_path: Path, exporter: str, dcgm: dict[str, Any]
) -> None:
    spec = write_spec(tmp_path, _data(exporter, dcgm), "health.yaml")
    files = render_to(spec, tmp_path / "out")
    test = _health_file(files, tmp_path / "health.test.yaml")
    run = _promtool(test)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    names = [n for g in yaml.safe_load(test.read_text())["tests"] for n in g["name"].split(" | ")]
    for alert in HEALTH:
        assert any(n.startswith(alert) and "fires" in n for n in names), alert
        assert f"{alert} stays quiet" in names, alert
    for control in ("a correctable remap", "remaps before the window"):
        assert f"{ALERT}: {control} stays quiet" in names


@pytest.mark.parametrize(("exporter", "dcgm"), SOURCES[:2], ids=SOURCE_IDS[:2])
def test_the_firing_case_fails_against_a_rule_that_cannot_fire(
    tmp_path: Path, exporter: str, dcgm: dict[str, Any]
) -> None:
    spec = write_spec(tmp_path, _data(exporter, dcgm), "health.yaml")
    files = render_to(spec, tmp_path / "out")
    rules = next(p for p in files.values() if p.name.endswith(".rules.yaml"))
    doc = yaml.safe_load(rules.read_text())
    broken = 0
    for group in doc["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == ALERT:
                rule["expr"] = rule["expr"].replace("> 0", "> 1000")
                broken += 1
    assert broken == 1
    rules.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    test = _health_file(files, tmp_path / "health.test.yaml")
    run = _promtool(test)
    assert run.returncode != 0
    assert f"{ALERT} fires" in run.stdout + run.stderr


@pytest.mark.parametrize(("exporter", "dcgm"), SOURCES[:2], ids=SOURCE_IDS[:2])
def test_a_healthy_node_carries_both_remapped_row_counts_at_zero(
    tmp_path: Path, exporter: str, dcgm: dict[str, Any]
) -> None:
    plan = _plan(tmp_path, _data(exporter, dcgm))
    s = healthy(plan, [Klass(BASE_PER_MIN)])
    if exporter == "dcgm":
        names = {f.UNCORRECTABLE_REMAPPED_ROWS.name, f.CORRECTABLE_REMAPPED_ROWS.name}
        values = {k[0]: v for k, v in s.gauges.items() if k[0] in names}
        assert set(values) == names
    else:
        values = {
            dict(k[1])["cause"]: v for k, v in s.gauges.items() if k[0] == naming.GPU_REMAPPED_ROWS
        }
        assert set(values) == {"correctable", "uncorrectable"}
    assert all(gpu_series.expand(v)[0] == 0 for v in values.values())


def test_under_dcgm_a_missing_field_is_a_guard_naming_its_line(tmp_path: Path) -> None:
    plan = _plan(tmp_path, _data("dcgm", {}))
    guards = [
        i
        for i in signal_inputs(plan)
        if i.signal == "gpuRowRemap" and i.metric == f.UNCORRECTABLE_REMAPPED_ROWS.name
    ]
    assert len(guards) == 1 and guards[0].readers == (ALERT,)
    assert (
        "`DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS, counter, Number of remapped rows for "
        "uncorrectable errors`" in guards[0].remedy
    )


def test_on_the_sidecar_the_guard_is_excused_without_a_row_remapper(tmp_path: Path) -> None:
    plan = _plan(tmp_path, _data("sidecar", {}))
    guards = [
        i
        for i in signal_inputs(plan)
        if i.signal == "gpuRowRemap" and i.metric == naming.GPU_REMAPPED_ROWS
    ]
    assert len(guards) == 1 and guards[0].readers == (ALERT,)
    excused = guards[0].excused[0]
    assert excused.metric == naming.GPU_READING_UNSUPPORTED
    assert any(m.value == "remapped_rows" for m in excused.matchers)


@pytest.mark.parametrize("exporter", ["sidecar", "dcgm"])
def test_disabling_the_alert_drops_it_and_its_guard(tmp_path: Path, exporter: str) -> None:
    data = set_path(_data(exporter, {}), "spec.alerts.gpuUncorrectableRemaps", {"enabled": False})
    plan = _plan(tmp_path, data)
    assert all(ALERT not in i.readers for i in signal_inputs(plan))
    assert ALERT not in {r.get("alert") for r in gpu_alerts(plan)}


@pytest.mark.parametrize("tier", xid_catalog.TIERS, ids=lambda t: t.alert)
def test_a_repeated_xid_is_seen_through_the_count_field_where_enabled(
    tmp_path: Path, tier: xid_catalog.Tier
) -> None:
    """dcgm-exporter's default Xid field holds the last Xid: a second Xid of the same code
    leaves it unchanged and no tier can see it (the quiet case). Where the counters file
    enables ``DCGM_EXP_XID_ERRORS_COUNT`` (Xids per code within its window, 5m by default),
    the repeat fires the tier's alert with its ``xid``."""
    plan = _plan(tmp_path, _data("dcgm", {}))
    rule = next(r for r in gpu_alerts(plan) if r.get("alert") == tier.alert)
    at = after_for(plan, tier.key)
    step = at // 60_000

    def series(counted: bool) -> Any:
        s = healthy(plan, [Klass(BASE_PER_MIN)])
        gpu_series.xid(plan, s, tier.example, "1x60")  # the last Xid since before the window
        if counted:
            labels = {
                **gpu_series.device_labels(plan),
                f.XID_LABEL: str(tier.example),
                f.WINDOW_LABEL: "300000",
            }
            s.gauge(f.XID_COUNT.name, labels, f"0x{step - 2} 1x5 0x{60 - step - 3}")
        return s

    labels = gpu_series.alert_labels(plan) | {"xid": str(tier.example)}
    groups = [
        family_case(
            plan,
            "repeat counted",
            series(True),
            tier.alert,
            [expected_alert(rule, labels, None)],
            at,
        ),
        family_case(plan, "repeat uncounted", series(False), tier.alert, [], at),
    ]
    (tmp_path / "rules.yaml").write_text(dump_yaml(rule_file(plan)), encoding="utf-8")
    suite = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "xid.test.yaml").write_text(dump_yaml(suite), encoding="utf-8")
    run = _promtool(tmp_path / "xid.test.yaml")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
