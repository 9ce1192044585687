"""``spec.gpu.exporter: dcgm`` and the GPU health alerts, on both GPU sources.

dcgm-exporter's field names and types are held to its counters files at three tags
(tests/data/dcgm-exporter/); a dcgm spec and a sidecar spec render and their generated cases
(the same cases, series written per source) pass the real promtool 3 and 2.53; each health
alert has a firing case and quiet controls; the dcgm cases' series are shaped as the release
exposes them; a field the counters file lacks is a guard naming the line to add.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import dcgm_fields as f
from generator.builders.guard_rules import signal_inputs
from generator.families import xid_catalog
from generator.parts import gpu_series
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    Klass,
)
from generator.render import load_plans
from generator.signals.healthy import healthy
from tests.factories import good_spec, set_path, write_spec
from tests.helpers_promtool import ROOT, render_to
from tests.toolchain import binary

DATA = Path(__file__).parent / "data" / "dcgm-exporter"
TAGS = ("2.4.7-2.6.11", "3.3.9-3.6.1", "4.5.2-4.8.1")
HEALTH = (
    "GPUUncorrectableECCErrors",
    "GPURowRemapFailed",
    "GPURowRemapPending",
    "GPUUncorrectableRowsRemapped",
    "GPUUncorrectablePagesRetired",
    "GPUPageRetirementPending",
    "GPUNVLinkErrors",
    "GPUPCIeReplays",
    "GPUXidNodeRebootRequired",
    "GPUXidResetRequired",
    "GPUXidApplicationError",
)
GPU_ALERTS = (
    "GPUMemoryHeadroomLow",
    "GPUTemperatureHigh",
    "GPUXidErrors",
    "GPUExporterDown",
    "GPUDeviceLost",
    "GPUHardwareSlowdown",
    *HEALTH,
)


def counters(tag: str) -> dict[str, tuple[str, bool]]:
    """{field name: (type, enabled)} of a tag's default counters file (commented lines too)."""
    out: dict[str, tuple[str, bool]] = {}
    for line in (DATA / tag / "default-counters.csv").read_text().splitlines():
        m = re.match(r"^(#\s*)?(DCGM_\w+)\s*,\s*(\w+)\s*,", line)
        if m:
            out[m.group(2)] = (m.group(3), m.group(1) is None)
    return out


@pytest.mark.parametrize("tag", TAGS)
def test_default_fields_are_enabled_at_every_tag(tag: str) -> None:
    found = counters(tag)
    for field in f.FIELDS:
        if field.default:
            assert found.get(field.name) == (field.kind, True), (tag, field.name)


@pytest.mark.parametrize("tag", TAGS)
def test_fields_users_must_add_are_not_enabled_by_default(tag: str) -> None:
    found = counters(tag)
    for field in f.FIELDS:
        if not field.default:
            assert all(not found.get(n, ("", False))[1] for n in field.names) or (
                field is f.FB_RESERVED and tag == "4.5.2-4.8.1"
            ), (tag, field.name)


def test_each_line_to_add_is_the_newest_files_line_where_it_has_one() -> None:
    newest = {}
    for line in (DATA / "4.5.2-4.8.1" / "default-counters.csv").read_text().splitlines():
        m = re.match(r"^#?\s*((DCGM_\w+)\s*,\s*(\w+)\s*,\s*(.*))$", line)
        if m:
            newest[m.group(2)] = f"{m.group(2)}, {m.group(3)}, {m.group(4).strip()}"
    checked = 0
    for field in f.FIELDS:
        if field.name in newest:
            assert field.line == newest[field.name], field.name
            checked += 1
    assert checked >= 15


def test_fb_help_changed_unit_wording_but_not_the_field() -> None:
    """3.3.x says "(in MB)"; the value is MiB in every release: obsgen scales by 2^20."""
    text = (DATA / "3.3.9-3.6.1" / "default-counters.csv").read_text()
    assert "DCGM_FI_DEV_FB_FREE, gauge, Frame buffer memory free (in MB)." in text
    assert f.MIB == 1048576


def test_xid_tiers_are_disjoint_and_place_the_catalogue_examples() -> None:
    tiers = [set(t.codes) for t in xid_catalog.TIERS]
    assert not (tiers[0] & tiers[1]) and not (tiers[0] & tiers[2]) and not (tiers[1] & tiers[2])
    drain = tiers[0] | tiers[1]
    assert {48, 64, 74, 79, 95, 119, 120} <= drain
    assert {13, 31, 43, 94} <= tiers[2]
    assert all(t.example in t.codes for t in xid_catalog.TIERS)


def _spec(tmp_path: Path, exporter: str, **dcgm: Any) -> Path:
    data = set_path(
        good_spec(), "spec.gpu", {"exporter": exporter, **({"dcgm": dcgm} if dcgm else {})}
    )
    data = set_path(data, "metadata.name", f"gpu-{exporter}")
    data = set_path(data, "spec.selector.job", f"gpu-{exporter}")
    return write_spec(tmp_path, data, f"gpu-{exporter}.yaml")


def _tests(files: dict[str, Path]) -> list[dict[str, Any]]:
    doc = yaml.safe_load(
        files[next(p for p in files if p.endswith(".test.yaml") and "slow" not in p)].read_text()
    )
    return list(doc["tests"])


def _prove_gpu_families(
    tmp_path: Path, exporter: str, dcgm: dict[str, Any], prometheus: str
) -> None:
    files = render_to(_spec(tmp_path, exporter, **dcgm), tmp_path / "out")
    tests = [p for p in files.values() if p.name.endswith(".test.yaml")]
    promtool = binary(prometheus, "promtool")
    rules = next(p for p in files.values() if p.name.endswith(".rules.yaml"))
    check = subprocess.run([promtool, "check", "rules", str(rules)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    run = subprocess.run(
        [promtool, "test", "rules", *map(str, tests)], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    # Cases that can share an input block are merged: "case | case | …".
    names = [n for g in _tests(files) for n in g["name"].split(" | ")]
    for alert in GPU_ALERTS:
        assert any(n.startswith(alert) and "fires" in n for n in names), alert
        assert any(n.startswith(alert) and "quiet" in n for n in names), alert


SOURCES = pytest.mark.parametrize(
    ("exporter", "dcgm"),
    [("sidecar", {}), ("dcgm", {}), ("dcgm", {"honorLabels": True})],
    ids=["sidecar", "dcgm behind a ServiceMonitor without honorLabels", "dcgm with honorLabels"],
)


# One class per Prometheus major: `make test` distributes tests by module and class (--dist
# loadscope), so the two majors' proofs (about 40 s each) can run on different workers.
class TestGpuFamiliesProvedOnPrometheus3:
    """The GPU families' generated cases pass promtool 3 on each source."""

    @SOURCES
    def test_on_each_source(self, tmp_path: Path, exporter: str, dcgm: dict[str, Any]) -> None:
        _prove_gpu_families(tmp_path, exporter, dcgm, "prometheus3")


class TestGpuFamiliesProvedOnPrometheus2:
    """The GPU families' generated cases pass promtool 2.53 on each source."""

    @SOURCES
    def test_on_each_source(self, tmp_path: Path, exporter: str, dcgm: dict[str, Any]) -> None:
        _prove_gpu_families(tmp_path, exporter, dcgm, "prometheus2")


def test_dcgm_cases_are_shaped_as_the_release_exposes_them(tmp_path: Path) -> None:
    """Every dcgm-exporter series of the dcgm spec's cases is a field of the 4.5.2-4.8.1 file
    (or one obsgen asks to add), with the exposition template's labels."""
    files = render_to(_spec(tmp_path, "dcgm"), tmp_path / "out")
    known = set(counters("4.5.2-4.8.1")) | {n for field in f.FIELDS for n in field.names}
    template = {"gpu", f.UUID, "pci_bus_id", "device", "modelName", f.HOSTNAME}
    seen = set()
    for group in _tests(files):
        for series in group["input_series"]:
            name = series["series"].split("{", 1)[0]
            if not name.startswith("DCGM_"):
                continue
            seen.add(name)
            assert name in known, name
            labels = set(re.findall(r'(\w+)="', series["series"]))
            assert template <= labels, (name, labels)
            assert "DCGM_FI_DRIVER_VERSION" in labels  # a `label` line of the file
            assert {"exported_pod", "exported_namespace"} <= labels
    assert {f.FB_FREE.name, f.FB_USED.name, f.GPU_TEMP.name, f.XID_ERRORS.name} <= seen


def _plan(tmp_path: Path) -> Any:
    return next(iter(load_plans([_spec(tmp_path, "dcgm")], ROOT)))


def test_dcgm_memory_is_mib_and_xid_a_last_value_gauge(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    s = healthy(plan, [Klass(BASE_PER_MIN)])
    gpu_series.xid(plan, s, 79, "0x2 1x2")
    gauges = {(k[0], dict(k[1]).get(f.XID_CODE)): v for k, v in s.gauges.items()}
    assert gauges[(f.XID_ERRORS.name, "0")] == "0 0 0 stale _ _"
    assert gauges[(f.XID_ERRORS.name, "79")] == "_ _ _ 79 79 79"
    free = next(v for k, v in s.gauges.items() if k[0] == f.FB_FREE.name)
    assert (
        float(gpu_series.expand(free)[0] or 0) * f.MIB == gpu_series.TOTAL - gpu_series.TOTAL // 2
    )


@pytest.mark.parametrize(
    ("signal", "line"),
    [
        (
            "gpuEcc",
            "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, counter, Total number of double-bit volatile ECC errors.",
        ),
        (
            "gpuNvLink",
            "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL, counter, Total number of NVLink retries.",
        ),
        ("gpuClockEvents", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS, gauge,"),
        ("gpuRowRemap", "DCGM_FI_DEV_ROW_REMAP_PENDING, gauge,"),
        ("gpuTemperature", "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C)."),
    ],
)
def test_a_field_the_counters_file_lacks_is_a_guard_naming_its_line(
    tmp_path: Path, signal: str, line: str
) -> None:
    plan = _plan(tmp_path)
    remedies = " ".join(i.remedy for i in signal_inputs(plan) if i.signal == signal)
    assert line in remedies


@pytest.mark.parametrize("xid_errors", [True, False], ids=["GPUXidErrors on", "GPUXidErrors off"])
def test_the_xid_tiers_read_the_last_xid_field_under_its_guard(
    tmp_path: Path, xid_errors: bool
) -> None:
    """Each Xid tier reads dcgm-exporter's last-Xid field: it is among the readers of the one
    ``gpuXid`` guard, which stays when GPUXidErrors is off."""
    data = set_path(good_spec(), "spec.gpu", {"exporter": "dcgm"})
    if not xid_errors:
        data = set_path(data, "spec.alerts.gpuXidErrors", {"enabled": False})
    plan = next(iter(load_plans([write_spec(tmp_path, data, "xid.yaml")], ROOT)))
    guards = [i for i in signal_inputs(plan) if i.signal == "gpuXid"]
    assert len(guards) == 1
    assert guards[0].metric == f.XID_ERRORS.name
    tiers = {t.alert for t in xid_catalog.TIERS}
    assert set(guards[0].readers) == tiers | ({"GPUXidErrors"} if xid_errors else set())
