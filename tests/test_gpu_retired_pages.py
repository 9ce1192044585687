"""Page retirement, GPUs before Ampere: ``GPUUncorrectablePagesRetired`` (a page retired for a
double-bit ECC error) and ``GPUPageRetirementPending`` (pages wait for a reset), on both sources.

dcgm-exporter's default counters file lists ``DCGM_FI_DEV_RETIRED_SBE/DBE/PENDING`` commented out
at every tag read (tests/data/dcgm-exporter/), so a default GPU Operator install exports none:
the guard names the line, and is excused on GPUs with a row remapper (Ampere and later report
remapped rows and no retired pages). The sidecar reads NVML ``nvmlDeviceGetRetiredPages`` and
``nvmlDeviceGetRetiredPagesPendingStatus`` (the fake backend's GPU 5 has one double-bit retired
page and a retirement pending; GPU 3 answers NotSupported, as Ampere and later do). The
generated firing cases, healthy controls and quiet controls run in tests/test_gpu_health.py
(``HEALTH``) on both sources; here each firing case fails against a rule that cannot fire.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import dcgm_fields as f
from generator import naming
from generator.builders.gpu_rules import gpu_alerts
from generator.builders.guard_rules import signal_inputs
from generator.families import gpu_page_retirement_pending, gpu_pages_retired
from generator.parts import gpu_series
from generator.parts.guard_inputs import SignalInput
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
)
from generator.signals.healthy import healthy
from nvml_exporter.fake import default_fake
from tests.factories import set_path, write_spec
from tests.helpers_promtool import render_to
from tests.test_dcgm_source import TAGS, counters
from tests.test_gpu_health import GOLDEN, _data, _health_file, _plan, _promtool

RETIRED = naming.ALERT_GPU_PAGES_RETIRED
PENDING = naming.ALERT_GPU_RETIREMENT_PENDING
FIELDS = (f.RETIRED_SBE, f.RETIRED_DBE, f.RETIRED_PENDING)


@pytest.mark.parametrize("tag", TAGS)
def test_the_counters_file_lists_the_fields_commented_out(tag: str) -> None:
    """Names and kinds as each release's default counters file writes them; none enabled."""
    found = counters(tag)
    for field in FIELDS:
        assert found[field.name] == ("counter", False), (tag, field.name)
        assert not field.default


def test_the_sidecar_exports_both_causes_and_the_pending_status() -> None:
    text = GOLDEN.read_text(encoding="utf-8")
    assert "# TYPE gpu_retired_pages_total counter" in text
    assert "# TYPE gpu_retired_pages_pending gauge" in text
    fake = default_fake()
    five, three = fake.gpus[5].uuid, fake.gpus[3].uuid
    dbe = re.search(
        rf'^gpu_retired_pages_total\{{cause="double_bit_ecc",gpu="5",uuid="{five}"\}} (\S+)',
        text,
        re.M,
    )
    assert dbe and float(dbe[1]) == 1
    pending = re.search(rf'^gpu_retired_pages_pending\{{gpu="5",uuid="{five}"\}} (\S+)', text, re.M)
    assert pending and float(pending[1]) == 1
    # GPU 3 answers NotSupported (as Ampere and later do): reported, no series.
    assert f'gpu_reading_unsupported{{gpu="3",reading="retired_pages",uuid="{three}"}} 1.0' in text
    assert not re.search(rf'^gpu_retired_pages_\w+\{{.*uuid="{three}"', text, re.M)


@pytest.mark.parametrize("alert", [RETIRED, PENDING])
@pytest.mark.parametrize("exporter", ["sidecar", "dcgm"])
def test_the_firing_case_fails_against_a_rule_that_cannot_fire(
    tmp_path: Path, exporter: str, alert: str
) -> None:
    spec = write_spec(tmp_path, _data(exporter, {}), "health.yaml")
    files = render_to(spec, tmp_path / "out")
    rules = next(p for p in files.values() if p.name.endswith(".rules.yaml"))
    doc = yaml.safe_load(rules.read_text())
    broken = 0
    for group in doc["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == alert:
                rule["expr"] = rule["expr"].replace("> 0", "> 1000")
                broken += 1
    assert broken == 1
    rules.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    run = _promtool(_health_file(files, tmp_path / "health.test.yaml"))
    assert run.returncode != 0
    assert f"{alert} fires" in run.stdout + run.stderr


@pytest.mark.parametrize("exporter", ["sidecar", "dcgm"])
def test_the_cases_carry_their_quiet_controls(tmp_path: Path, exporter: str) -> None:
    plan = _plan(tmp_path, _data(exporter, {}))
    names = [g["name"] for g in gpu_pages_retired.cases(plan)]
    names += [g["name"] for g in gpu_page_retirement_pending.cases(plan)]
    for name in (
        f"{RETIRED} fires",
        f"{RETIRED} stays quiet",
        f"{RETIRED}: a single-bit retirement stays quiet",
        f"{RETIRED}: retirements before the window stays quiet",
        f"{PENDING} fires",
        f"{PENDING} stays quiet",
        f"{PENDING}: a retirement a reset completed stays quiet",
    ):
        assert any(n.startswith(name) for n in names), (name, names)


@pytest.mark.parametrize("exporter", ["sidecar", "dcgm"])
def test_a_healthy_node_reads_zero(tmp_path: Path, exporter: str) -> None:
    plan = _plan(tmp_path, _data(exporter, {}))
    s = healthy(plan, [Klass(BASE_PER_MIN)])
    if exporter == "dcgm":
        names = {field.name for field in FIELDS}
        values = {k[0]: v for k, v in s.gauges.items() if k[0] in names}
    else:
        sidecar = (naming.GPU_RETIRED_PAGES, naming.GPU_RETIRED_PAGES_PENDING)
        values = {(k[0], k[1]): v for k, v in s.gauges.items() if k[0] in sidecar}
    assert len(values) == 3
    assert all(gpu_series.expand(v)[0] == 0 for v in values.values())


def _guards(plan: Any, alert: str) -> list[SignalInput]:
    return [i for i in signal_inputs(plan) if i.signal == "gpuRetiredPages" and alert in i.readers]


def test_under_dcgm_the_guard_names_its_line_and_is_excused_with_a_row_remapper(
    tmp_path: Path,
) -> None:
    plan = _plan(tmp_path, _data("dcgm", {}))
    for alert, field in ((RETIRED, f.RETIRED_DBE), (PENDING, f.RETIRED_PENDING)):
        (guard,) = _guards(plan, alert)
        assert guard.metric == field.name
        assert f"`{field.line}`" in guard.remedy
        assert {s.metric for s in guard.excused} == {f.UNCORRECTABLE_REMAPPED_ROWS.name}


def test_on_the_sidecar_the_guard_is_excused_without_page_retirement(tmp_path: Path) -> None:
    plan = _plan(tmp_path, _data("sidecar", {}))
    for alert in (RETIRED, PENDING):
        (guard,) = _guards(plan, alert)
        (excused,) = guard.excused
        assert excused.metric == naming.GPU_READING_UNSUPPORTED
        assert any(m.value == "retired_pages" for m in excused.matchers)


@pytest.mark.parametrize("exporter", ["sidecar", "dcgm"])
def test_disabling_the_alerts_drops_them_and_their_guards(tmp_path: Path, exporter: str) -> None:
    data = set_path(_data(exporter, {}), "spec.alerts.gpuPagesRetired", {"enabled": False})
    data = set_path(data, "spec.alerts.gpuPageRetirementPending", {"enabled": False})
    plan = _plan(tmp_path, data)
    assert not _guards(plan, RETIRED) and not _guards(plan, PENDING)
    assert not {RETIRED, PENDING} & {r.get("alert") for r in gpu_alerts(plan)}


def test_the_pending_rule_reads_a_count_under_dcgm_and_a_flag_on_the_sidecar(
    tmp_path: Path,
) -> None:
    """dcgm-exporter's field counts pending pages (2 is pending too); the sidecar's is 0/1:
    the rule fires on anything above 0 on either."""
    for exporter in ("sidecar", "dcgm"):
        plan = _plan(tmp_path, _data(exporter, {}))
        (rule,) = gpu_page_retirement_pending.rules(plan)
        assert rule["expr"].endswith(") > 0"), rule["expr"]
