"""The GPU smoke comparison (nvml_exporter/smoke.py, scripts/gpu-smoke.sh) without a GPU: canned
nvidia-smi CSV against a scrape of the exporter on the fake backend."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from nvml_exporter.fake import FakeGpu, FakeNvml, default_fake
from nvml_exporter.server import Exporter
from nvml_exporter.smoke import (
    QUERY_FIELDS,
    compare,
    main,
    nvidia_smi_command,
    parse_exposition,
    parse_smi_csv,
)
from tests.exporter.test_exporter_server import get

REPO = Path(__file__).resolve().parents[2]
MIB = 1024 * 1024


def smi_line(gpu: FakeGpu, **override: str) -> str:
    """What nvidia-smi would print for ``gpu`` (``--format=csv,noheader,nounits``)."""
    used = gpu.memory_used + (gpu.memory_reserved if "device_memory_info_v2" in gpu.missing else 0)
    util = "device_utilization" in gpu.unsupported
    values = {
        "uuid": gpu.uuid,
        "index": str(gpu.index),
        "name": gpu.name,
        "pci.bus_id": gpu.pci_bus_id,
        "memory.total": str(gpu.memory_total // MIB),
        "memory.used": str(used // MIB),
        "memory.free": str(gpu.memory_free // MIB),
        "temperature.gpu": str(gpu.temperature),
        "power.draw": f"{gpu.power_usage_mw / 1000:.2f}",
        "enforced.power.limit": f"{gpu.power_limit_mw / 1000:.2f}",
        "clocks.sm": str(gpu.sm_clock_mhz),
        "clocks.mem": str(gpu.mem_clock_mhz),
        "utilization.gpu": "[N/A]" if util else str(gpu.utilization_gpu),
        "utilization.memory": "[N/A]" if util else str(gpu.utilization_memory),
        **override,
    }
    return ", ".join(values[field] for field in QUERY_FIELDS)


def smi_csv(fake: FakeNvml, **override: str) -> str:
    return "".join(smi_line(g, **override) + "\n" for g in fake.gpus)


@pytest.fixture
def scrape(fake: FakeNvml, wait_for) -> Iterator[dict]:
    exporter = Exporter(fake, host="127.0.0.1", port=0, init_backoff=(0.01, 0.05))
    exporter.start()
    try:
        wait_for(lambda: exporter.ready, what="NVML init")
        yield parse_exposition(get(exporter, "/metrics")[2].decode())
    finally:
        exporter.stop()


def test_matching_readings_pass(fake: FakeNvml, scrape) -> None:
    readings = parse_smi_csv(smi_csv(fake))
    rows = compare(readings, readings, scrape)
    assert {r.status for r in rows} == {"ok", "n/a"}
    assert len([r for r in rows if r.status == "n/a"]) == 2  # GPU 6 (MIG): no utilisation
    temp = next(r for r in rows if r.gpu.startswith("3 ") and r.what.startswith("temperature"))
    assert (temp.exporter, temp.nvidia_smi, temp.status) == ("43", "43", "ok")


def test_a_unit_mistake_is_a_mismatch(fake: FakeNvml, scrape) -> None:
    readings = parse_smi_csv(smi_csv(fake, **{"power.draw": "120500"}))  # mW, not W
    rows = compare(readings, readings, scrape)
    bad = [r for r in rows if r.status != "ok" and r.status != "n/a"]
    assert {(r.what, r.status) for r in bad} == {("power.draw / gpu_power_usage_watts", "MISMATCH")}


def test_drift_between_the_two_reads_is_allowed_beyond_it_is_not(fake: FakeNvml, scrape) -> None:
    before = parse_smi_csv(smi_csv(fake, **{"temperature.gpu": "30"}))
    after = parse_smi_csv(smi_csv(fake, **{"temperature.gpu": "60"}))
    rows = compare(before, after, scrape)
    assert all(r.status in ("ok", "n/a") for r in rows)  # 34..55 °C lie within 30 -> 60
    far = parse_smi_csv(smi_csv(fake, **{"temperature.gpu": "90"}))
    temps = [r for r in compare(far, far, scrape) if r.what.startswith("temperature")]
    assert {r.status for r in temps} == {"MISMATCH"}
    assert temps[0].relative == f"{(90 - 34) / 90:.2%}"


def test_a_reading_nvidia_smi_has_and_the_exporter_lacks_is_missing(fake: FakeNvml, scrape) -> None:
    del scrape[("gpu_temperature_celsius", fake.gpus[0].uuid)]
    del scrape[("gpu_device_up", fake.gpus[7].uuid)]
    readings = parse_smi_csv(smi_csv(fake))
    missing = [
        (r.gpu[0], r.what) for r in compare(readings, readings, scrape) if r.status == "MISSING"
    ]
    assert missing == [("0", "temperature.gpu / gpu_temperature_celsius"), ("7", "GPU")]


def test_a_different_gpu_identity_is_a_mismatch(fake: FakeNvml, scrape) -> None:
    readings = parse_smi_csv(smi_csv(fake, name="NVIDIA A100-SXM4-40GB"))
    rows = compare(readings, readings, scrape)
    assert {r.status for r in rows if r.what.startswith("name")} == {"MISMATCH"}


def test_smi_csv_parsing() -> None:
    line = smi_line(default_fake().gpus[0], **{"power.draw": "[Not Supported]", "clocks.sm": "N/A"})
    reading = parse_smi_csv(line + "\n\n")[default_fake().gpus[0].uuid]
    assert reading["power.draw"] is None and reading["clocks.sm"] is None
    assert reading["memory.total"] == 81559.0
    with pytest.raises(ValueError, match="columns"):
        parse_smi_csv("GPU-x, 0\n")
    assert nvidia_smi_command()[1].startswith("--query-gpu=uuid,index,name,pci.bus_id,")


def test_main_exits_2_when_nvidia_smi_cannot_run(capsys) -> None:
    assert main(["--url", "http://127.0.0.1:9/metrics", "--nvidia-smi", "/nonexistent"]) == 2
    assert "cannot compare" in capsys.readouterr().err


def _run_script(tmp_path: Path, csv: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "smi.csv").write_text(csv)
    stand_in = tmp_path / "nvidia-smi"
    stand_in.write_text(f"#!/bin/sh\ncat '{tmp_path / 'smi.csv'}'\n")
    stand_in.chmod(0o755)
    env = {
        **os.environ,
        "SKIP_INSTALL": "1",
        "VENV": str(REPO / ".venv"),
        "SMOKE_BACKEND": "fake",
        "NVIDIA_SMI": str(stand_in),
    }
    return subprocess.run(
        ["bash", str(REPO / "scripts" / "gpu-smoke.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=200,
        check=False,
        cwd=tmp_path,
    )


def test_the_smoke_script_passes_on_matching_readings(tmp_path: Path) -> None:
    result = _run_script(tmp_path, smi_csv(default_fake()))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "| GPU | nvidia-smi / exporter |" in result.stdout
    assert "all within tolerance" in result.stdout
    assert result.stdout.rstrip().endswith("PASS")


def test_the_smoke_script_fails_on_a_mismatch(tmp_path: Path) -> None:
    result = _run_script(tmp_path, smi_csv(default_fake(), **{"memory.total": "81559000"}))
    assert result.returncode == 1
    assert "MISMATCH" in result.stdout
    assert "FAIL: readings differ from nvidia-smi" in result.stdout
