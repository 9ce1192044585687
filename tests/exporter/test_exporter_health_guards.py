"""The GPU health alerts' input guards on a sidecar spec, over what Prometheus would store from
the real collector: a healthy fake raises none (every series present, or reported unsupported),
an older sidecar that lacks one raises exactly its guard, and the pending-remap alert fires on
the exporter's own flag. Run with the real promtool."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import CollectorRegistry

from generator import naming
from nvml_exporter.collector import NvmlCollector
from nvml_exporter.fake import FakeGpu, FakeNvml, default_fake
from tests.test_guards import NS, expect, plan_of, run_case, series, spec_data

POD = "llama-7d9f8b6c5d-x2k4q"
TARGET = {"namespace": NS, "pod": POD, "container": "nvml-exporter", "job": "obsgen-llama-gpu"}


def stored(nvml: FakeNvml, drop: str | None = None) -> list[dict[str, str]]:
    """One scrape of the real collector over ``nvml`` held for 40 minutes, with the target
    labels obsgen's GPU PodMonitor gives the sidecar; ``drop``: a metric left out, as by a
    sidecar image older than it."""
    registry = CollectorRegistry()
    assert NvmlCollector(nvml, registry=registry).initialise()
    text = generate_latest(registry).decode()
    out = [series("up", TARGET, "1+0x40")]
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name.endswith("_created") or math.isnan(s.value) or s.name == drop:
                continue
            out.append(series(s.name, {**s.labels, **TARGET}, f"{s.value:.17g}+0x40"))
    return out


def _healthy_gpu() -> FakeGpu:
    return FakeGpu(index=0, uuid="GPU-0000aaaa-0000-4000-8000-000000000000", pci_bus_id="0:18:0")


def test_the_default_fake_raises_no_guard_and_its_pending_remap_pages(tmp_path: Path) -> None:
    """Eight GPUs with every quirk (ECC off, no NVLink, no active link, PCIe replays refused,
    MIG): each health reading is exported or reported unsupported, so no guard fires; GPU 5's
    pending row remapping is GPURowRemapPending's, read from the exporter's series."""
    plan = plan_of(spec_data())
    fake = default_fake()
    inputs = stored(fake)
    names = {s["series"].split("{")[0] for s in inputs}
    health = {
        naming.GPU_ECC_ERRORS,
        naming.GPU_ECC_VOLATILE_ERRORS,
        naming.GPU_ROW_REMAP_FAILURE,
        naming.GPU_ROW_REMAP_PENDING,
        naming.GPU_NVLINK_ERRORS,
        naming.GPU_PCIE_REPLAYS,
    }
    assert health <= names
    pending = {"namespace": NS, "pod": POD, "uuid": fake.gpus[5].uuid}
    run_case(
        tmp_path,
        plan,
        inputs,
        [
            ("20m", naming.ALERT_SIGNAL_MISSING, []),
            (
                "20m",
                naming.ALERT_GPU_REMAP_PENDING,
                [expect(plan, naming.ALERT_GPU_REMAP_PENDING, pending)],
            ),
            ("20m", naming.ALERT_GPU_REMAP_FAILED, []),
            ("20m", naming.ALERT_GPU_ECC, []),
            ("20m", naming.ALERT_GPU_NVLINK, []),
            ("20m", naming.ALERT_GPU_PCIE, []),
        ],
    )


@pytest.mark.parametrize(
    ("metric", "signal"),
    [
        (naming.GPU_ECC_ERRORS, "gpuEcc"),
        (naming.GPU_ECC_VOLATILE_ERRORS, "gpuEcc"),
        (naming.GPU_ROW_REMAP_FAILURE, "gpuRowRemap"),
        (naming.GPU_ROW_REMAP_PENDING, "gpuRowRemap"),
        (naming.GPU_NVLINK_ERRORS, "gpuNvLink"),
        (naming.GPU_PCIE_REPLAYS, "gpuPcieReplays"),
    ],
)
def test_a_sidecar_without_a_health_series_raises_exactly_its_guard(
    tmp_path: Path, metric: str, signal: str
) -> None:
    plan = plan_of(spec_data())
    gpu = _healthy_gpu()
    labels = {"namespace": NS, "pod": POD, "uuid": gpu.uuid}
    guard = expect(plan, naming.ALERT_SIGNAL_MISSING, labels, signal=signal, metric=metric)
    run_case(
        tmp_path,
        plan,
        stored(FakeNvml([gpu]), drop=metric),
        [("10m", naming.ALERT_SIGNAL_MISSING, []), ("20m", naming.ALERT_SIGNAL_MISSING, [guard])],
    )


def test_a_gpu_without_ecc_remapper_nvlink_or_replay_counter_is_excused(tmp_path: Path) -> None:
    """An older PCIe GPU: NVML answers NotSupported for all of them; the exporter says so and
    the guards stay quiet."""
    gpu = _healthy_gpu()
    gpu.nvlink_states = ()
    gpu.unsupported.update(
        {"device_total_ecc_errors", "device_remapped_rows", "device_pcie_replay_counter"}
    )
    inputs = stored(FakeNvml([gpu]))
    names = {s["series"].split("{")[0] for s in inputs}
    assert naming.GPU_NVLINK_ERRORS not in names and naming.GPU_ROW_REMAP_PENDING not in names
    run_case(tmp_path, plan_of(spec_data()), inputs, [("20m", naming.ALERT_SIGNAL_MISSING, [])])
