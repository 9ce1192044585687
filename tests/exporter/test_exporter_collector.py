"""NvmlCollector on the scripted fake: values, units, and every per-call/per-GPU failure."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from prometheus_client.core import Metric
from prometheus_client.registry import CollectorRegistry

from nvml_exporter import collector as collector_module
from nvml_exporter import nvml
from nvml_exporter.collector import REPROBE_INITIAL_S, NvmlCollector
from nvml_exporter.fake import FakeNvml, default_fake, unified_memory_fake

GiB = 1024**3
MiB = 1024**2


class _Frozen:
    def __init__(self, families: Iterable[Metric]) -> None:
        self.families = list(families)

    def collect(self) -> list[Metric]:
        return self.families


def scrape(collector: NvmlCollector) -> CollectorRegistry:
    """Run exactly one collection; return a registry that answers from it (no re-reads)."""
    frozen = CollectorRegistry(auto_describe=False)
    frozen.register(_Frozen(collector.collect()))  # type: ignore[arg-type]
    return frozen


def gpu(fake: FakeNvml, index: int, **extra: str) -> dict[str, str]:
    return {"uuid": fake.gpus[index].uuid, "gpu": str(index), **extra}


def device_samples(reg: CollectorRegistry, index: int) -> dict[tuple[str, tuple], float]:
    """Every device sample of GPU ``index``, keyed by (name, sorted labels)."""
    out = {}
    for family in reg.collect():
        for s in family.samples:
            if s.labels.get("gpu") == str(index):
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


# --- registration and self metrics -------------------------------------------------------


def test_registering_the_collector_reads_no_nvml(fake: FakeNvml) -> None:
    registry = CollectorRegistry(auto_describe=True)
    NvmlCollector(fake, registry=registry)
    assert sum(fake.calls.values()) == 0


def test_describe_lists_every_metric_without_samples(collector: NvmlCollector) -> None:
    families = list(collector.describe())
    names = {f.name for f in families}
    assert "gpu_memory_used_bytes" in names
    assert "gpu_exporter_nvml_up" in names
    assert all(not f.samples for f in families)


def test_before_init_only_self_metrics_with_nvml_up_0(fake: FakeNvml) -> None:
    c = NvmlCollector(fake)
    reg = scrape(c)
    assert reg.get_sample_value("gpu_exporter_nvml_up") == 0
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 0)) is None
    assert reg.get_sample_value("gpu_exporter_scrape_duration_seconds") is not None
    assert sum(n for (method, _), n in fake.calls.items() if method != "init") == 0


def test_build_info_and_nvml_up(collector: NvmlCollector) -> None:
    reg = scrape(collector)
    assert reg.get_sample_value("gpu_exporter_nvml_up") == 1
    build = [s for f in reg.collect() for s in f.samples if s.name == "gpu_exporter_build_info"]
    assert len(build) == 1
    assert set(build[0].labels) == {"version", "nvidia_ml_py_version", "python_version"}


# --- values and base units -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "labels", "expected"),
    [
        pytest.param("gpu_device_up", {}, 1, id="device-up"),
        pytest.param("gpu_memory_total_bytes", {}, 81559 * MiB, id="memory-total-bytes"),
        pytest.param("gpu_memory_used_bytes", {}, 10_000 * MiB, id="memory-used-bytes"),
        pytest.param("gpu_memory_reserved_bytes", {}, 566 * MiB, id="memory-reserved-bytes"),
        pytest.param(
            "gpu_memory_free_bytes", {}, (81559 - 566 - 10_000) * MiB, id="memory-free-bytes"
        ),
        pytest.param("gpu_utilization_ratio", {}, 0.15, id="percent-becomes-ratio"),
        pytest.param("gpu_memory_controller_utilization_ratio", {}, 0.07, id="mem-ctrl-ratio"),
        pytest.param("gpu_temperature_celsius", {}, 34, id="celsius"),
        pytest.param("gpu_power_usage_watts", {}, 120.5, id="milliwatts-become-watts"),
        pytest.param("gpu_power_limit_watts", {}, 700, id="limit-watts"),
        pytest.param("gpu_energy_joules_total", {}, 3_600_000, id="millijoules-become-joules"),
        pytest.param("gpu_sm_clock_hertz", {}, 1.98e9, id="megahertz-become-hertz"),
        pytest.param("gpu_memory_clock_hertz", {}, 2.619e9, id="memory-clock-hertz"),
        pytest.param("gpu_ecc_errors_total", {"error_type": "corrected"}, 0, id="ecc"),
        pytest.param("gpu_remapped_rows_total", {"cause": "uncorrectable"}, 0, id="remap"),
        pytest.param("gpu_pcie_replay_errors_total", {}, 0, id="pcie-replays"),
        pytest.param("gpu_clock_event_active", {"reason": "gpu_idle"}, 1, id="idle-reason-on"),
        pytest.param("gpu_clock_event_active", {"reason": "sw_power_cap"}, 0, id="reason-off"),
    ],
)
def test_healthy_gpu_is_reported_in_base_units(
    fake: FakeNvml, collector: NvmlCollector, name: str, labels: dict[str, str], expected: float
) -> None:
    assert scrape(collector).get_sample_value(name, gpu(fake, 0, **labels)) == pytest.approx(
        expected
    )


def test_identity_is_only_on_gpu_info(fake: FakeNvml, collector: NvmlCollector) -> None:
    reg = scrape(collector)
    info = gpu(
        fake,
        0,
        model_name="NVIDIA H100 80GB HBM3",
        pci_bus_id="00000000:18:00.0",
        driver_version="550.54.15",
        cuda_driver_version="12.4",
        mig_mode="disabled",
    )
    assert reg.get_sample_value("gpu_info", info) == 1
    for family in reg.collect():
        if family.name.startswith("gpu_") and family.name != "gpu_info":
            for s in family.samples:
                assert "model_name" not in s.labels and "pci_bus_id" not in s.labels


def test_every_gpu_is_reported_with_uuid_and_index(
    fake: FakeNvml, collector: NvmlCollector
) -> None:
    reg = scrape(collector)
    for i in range(8):
        assert reg.get_sample_value("gpu_device_up", gpu(fake, i)) == 1
        assert reg.get_sample_value("gpu_memory_total_bytes", gpu(fake, i)) == 81559 * MiB


def test_gpu_uuids_limits_the_report_to_those_gpus(fake: FakeNvml) -> None:
    wanted = [fake.gpus[2].uuid, fake.gpus[5].uuid, "GPU-not-on-this-node"]
    c = NvmlCollector(fake, gpu_uuids=wanted)
    assert c.initialise()
    reg = scrape(c)
    reported = [i for i in range(8) if reg.get_sample_value("gpu_device_up", gpu(fake, i))]
    assert reported == [2, 5]
    assert fake.calls[("device_power_usage", 0)] == 0


# --- NotSupported / FunctionNotFound: omitted, cached, not counted -------------------------


def test_not_supported_reading_is_omitted_not_zero(
    fake: FakeNvml, collector: NvmlCollector
) -> None:
    reg = scrape(collector)
    for error_type in ("corrected", "uncorrected"):
        assert (
            reg.get_sample_value("gpu_ecc_errors_total", gpu(fake, 1, error_type=error_type))
            is None
        )
    # everything else of that GPU is still there
    assert reg.get_sample_value("gpu_power_usage_watts", gpu(fake, 1)) == pytest.approx(165.75)
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 1)) == 1
    # an expected absence is not an error
    assert (
        reg.get_sample_value(
            "gpu_exporter_collector_errors_total", {"collector": "ecc", "error": "NotSupported"}
        )
        is None
    )


def test_not_supported_answer_is_cached_per_gpu_and_reading(
    fake: FakeNvml, collector: NvmlCollector
) -> None:
    for _ in range(3):
        scrape(collector)
    # corrected + uncorrected, aggregate + volatile: each asked once
    assert fake.calls[("device_total_ecc_errors", 1)] == 4
    assert fake.calls[("device_total_ecc_errors", 0)] == 12  # supported: read every scrape
    assert fake.calls[("device_pcie_replay_counter", 3)] == 1


def test_unified_memory_gpu_reports_memory_info_unsupported_and_logs_it_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """GB10 (DGX Spark): NVML answers NotSupported for frame-buffer memory, v2 and v1. The
    series are omitted, ``gpu_reading_unsupported{reading="memory_info"}`` says why, and the
    log says so once at info (not once per scrape, not only at debug)."""
    fake = unified_memory_fake()
    c = NvmlCollector(fake, registry=CollectorRegistry())
    assert c.initialise()
    with caplog.at_level("INFO", logger=collector_module.log.name):
        for _ in range(3):
            reg = scrape(c)
    labels = gpu(fake, 0)
    assert reg.get_sample_value("gpu_memory_total_bytes", labels) is None
    assert reg.get_sample_value("gpu_memory_free_bytes", labels) is None
    assert (
        reg.get_sample_value("gpu_reading_unsupported", {**labels, "reading": "memory_info"}) == 1
    )
    unsupported = [
        s.labels["reading"]
        for f in reg.collect()
        for s in f.samples
        if s.name == "gpu_reading_unsupported"
    ]
    assert unsupported == ["memory_info"]  # every other reading is served
    assert reg.get_sample_value("gpu_temperature_celsius", labels) == 48
    said = [r for r in caplog.records if r.levelname == "INFO" and "memory_info" in r.getMessage()]
    assert len(said) == 1
    assert said[0].getMessage() == (
        f"GPU {fake.gpus[0].uuid}: NVML answers NotSupported for memory_info; its series are omitted"
    )
    assert (
        reg.get_sample_value(
            "gpu_exporter_collector_errors_total", {"collector": "memory", "error": "NotSupported"}
        )
        is None
    )


def test_each_unsupported_reading_is_logged_once_per_gpu_at_info(
    fake: FakeNvml, collector: NvmlCollector, caplog: pytest.LogCaptureFixture
) -> None:
    """GPU 1 has no ECC counters, GPU 3 no PCIe replay counter, no NVLink and no page retirement
    (one reading for its three calls); a fallback that
    answers (GPU 2's memory info v1, GPU 7's throttle reasons) is no unsupported reading. GPU 4
    has NVLink with no link active: reported every scrape (links may come up), never logged."""
    with caplog.at_level("INFO", logger=collector_module.log.name):
        for _ in range(3):
            reg = scrape(collector)
    said = sorted(
        r.getMessage() for r in caplog.records if "its series are omitted" in r.getMessage()
    )
    expected = {
        (1, "ecc_corrected"),
        (1, "ecc_uncorrected"),
        (1, "ecc_volatile_corrected"),
        (1, "ecc_volatile_uncorrected"),
        (3, "pcie_replays"),
        (3, "nvlink"),
        (3, "retired_pages"),
        (6, "utilization"),
    }
    assert said == sorted(
        f"GPU {fake.gpus[i].uuid}: NVML answers NotSupported for {r}; its series are omitted"
        for i, r in expected
    )
    found = {
        (int(s.labels["gpu"]), s.labels["reading"])
        for f in reg.collect()
        for s in f.samples
        if s.name == "gpu_reading_unsupported"
    }
    assert found == expected | {(4, "nvlink")}


def test_mig_gpu_omits_utilization(fake: FakeNvml, collector: NvmlCollector) -> None:
    reg = scrape(collector)
    assert reg.get_sample_value("gpu_utilization_ratio", gpu(fake, 6)) is None
    assert reg.get_sample_value("gpu_memory_controller_utilization_ratio", gpu(fake, 6)) is None


def test_memory_info_falls_back_to_v1_without_reserved(
    fake: FakeNvml, collector: NvmlCollector
) -> None:
    reg = scrape(collector)
    scrape(collector)
    assert reg.get_sample_value("gpu_memory_reserved_bytes", gpu(fake, 2)) is None
    # v1 "used" includes the reserved memory
    used = (10_000 + 8_000 * 2 + 566) * MiB
    assert reg.get_sample_value("gpu_memory_used_bytes", gpu(fake, 2)) == used
    assert fake.calls[("device_memory_info_v2", 2)] == 1
    assert fake.calls[("device_memory_info_v1", 2)] == 2


def test_temperature_falls_back_to_the_deprecated_call(
    fake: FakeNvml, collector: NvmlCollector
) -> None:
    reg = scrape(collector)
    scrape(collector)
    assert reg.get_sample_value("gpu_temperature_celsius", gpu(fake, 3)) == 43
    assert fake.calls[("device_temperature_v", 3)] == 1
    assert fake.calls[("device_temperature_legacy", 3)] == 2
    assert fake.calls[("device_temperature_legacy", 0)] == 0


def test_clock_reasons_fall_back_to_throttle_reason_calls(
    fake: FakeNvml, collector: NvmlCollector
) -> None:
    reg = scrape(collector)
    assert reg.get_sample_value("gpu_clock_event_active", gpu(fake, 7, reason="sw_power_cap")) == 1


def test_only_clock_event_reasons_the_gpu_supports_are_listed(fake: FakeNvml) -> None:
    fake.gpus[4].supported_reasons = 0x4 | 0x40  # sw_power_cap, hw_thermal_slowdown
    c = NvmlCollector(fake)
    assert c.initialise()
    reg = scrape(c)
    reasons = {
        s.labels["reason"]
        for f in reg.collect()
        for s in f.samples
        if s.name == "gpu_clock_event_active" and s.labels["gpu"] == "4"
    }
    assert reasons == {"sw_power_cap", "hw_thermal_slowdown"}
    assert reg.get_sample_value("gpu_clock_event_active", gpu(fake, 4, reason="sw_power_cap")) == 1
    assert (
        reg.get_sample_value("gpu_clock_event_active", gpu(fake, 4, reason="display_clock_setting"))
        is None
    )


# --- MIG -----------------------------------------------------------------------------------


def test_mig_memory_is_reported_per_gpu_instance(fake: FakeNvml, collector: NvmlCollector) -> None:
    reg = scrape(collector)
    first = gpu(fake, 6, mig_uuid="MIG-6a0b1c2d-0000-4000-8000-000000000001", gpu_instance_id="1")
    second = gpu(fake, 6, mig_uuid="MIG-6a0b1c2d-0000-4000-8000-000000000002", gpu_instance_id="5")
    assert reg.get_sample_value("gpu_mig_memory_total_bytes", first) == 40_192 * MiB
    assert reg.get_sample_value("gpu_mig_memory_used_bytes", first) == 30_000 * MiB
    assert reg.get_sample_value("gpu_mig_memory_free_bytes", second) == (19_968 - 1_024) * MiB
    mig_series = [
        s for f in reg.collect() for s in f.samples if s.name == "gpu_mig_memory_total_bytes"
    ]
    assert len(mig_series) == 2  # empty slots 1, 3-6 are skipped
    info = [s for f in reg.collect() for s in f.samples if s.name == "gpu_info"]
    assert {s.labels["gpu"]: s.labels["mig_mode"] for s in info}["6"] == "enabled"


# --- GpuIsLost -----------------------------------------------------------------------------


def test_lost_gpu_reports_device_up_0_and_others_are_unaffected(
    fake: FakeNvml, collector: NvmlCollector
) -> None:
    before = scrape(collector)
    fake.lose(5)
    after = scrape(collector)
    assert after.get_sample_value("gpu_device_up", gpu(fake, 5)) == 0
    assert after.get_sample_value("gpu_memory_used_bytes", gpu(fake, 5)) is None
    assert after.get_sample_value("gpu_temperature_celsius", gpu(fake, 5)) is None
    # identity is kept so that alerts can name the GPU
    assert len([k for k in device_samples(after, 5) if k[0] == "gpu_info"]) == 1
    for i in (0, 1, 2, 3, 4, 6, 7):
        assert device_samples(after, i) == device_samples(before, i), f"GPU {i} changed"
    assert after.get_sample_value("gpu_exporter_nvml_up") == 1


def test_gpu_lost_in_the_middle_of_its_reads_drops_its_partial_readings(
    fake: FakeNvml, collector: NvmlCollector
) -> None:
    fake.lose(3, after_calls=4)  # memory, utilisation... answer, then the GPU is lost
    reg = scrape(collector)
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 3)) == 0
    assert reg.get_sample_value("gpu_memory_total_bytes", gpu(fake, 3)) is None
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 4)) == 1
    assert reg.get_sample_value("gpu_memory_total_bytes", gpu(fake, 4)) == 81559 * MiB


def test_lost_gpu_is_reprobed_with_backoff_and_comes_back(
    fake: FakeNvml, collector: NvmlCollector, clock
) -> None:
    fake.lose(5)
    scrape(collector)
    calls_when_lost = sum(n for (_, i), n in fake.calls.items() if i == 5)

    scrape(collector)  # within the backoff: not touched
    assert sum(n for (_, i), n in fake.calls.items() if i == 5) == calls_when_lost

    clock.advance(REPROBE_INITIAL_S)
    reg = scrape(collector)  # probed, still lost: backoff doubles
    assert fake.calls[("device_handle_by_uuid", 5)] == 1
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 5)) == 0

    clock.advance(REPROBE_INITIAL_S)
    scrape(collector)  # 5 s later: inside the doubled 10 s backoff
    assert fake.calls[("device_handle_by_uuid", 5)] == 1

    fake.recover(5)
    clock.advance(REPROBE_INITIAL_S)
    reg = scrape(collector)
    assert fake.calls[("device_handle_by_uuid", 5)] == 2
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 5)) == 1
    assert reg.get_sample_value("gpu_temperature_celsius", gpu(fake, 5)) == 49


# --- other errors: counted, never escape collect() -----------------------------------------


def test_library_mismatch_error_in_one_call_is_counted_and_isolated(
    fake: FakeNvml, collector: NvmlCollector
) -> None:
    assert not issubclass(nvml.NVMLLibraryMismatchError, nvml.NVMLError)
    fake.fail("device_power_usage", nvml.NVMLLibraryMismatchError("unversioned call"), index=0)
    reg = scrape(collector)
    labels = {"collector": "power", "error": "NVMLLibraryMismatchError"}
    assert reg.get_sample_value("gpu_exporter_collector_errors_total", labels) == 1
    assert reg.get_sample_value("gpu_power_usage_watts", gpu(fake, 0)) is None
    assert reg.get_sample_value("gpu_power_limit_watts", gpu(fake, 0)) == 700
    assert reg.get_sample_value("gpu_power_usage_watts", gpu(fake, 1)) == pytest.approx(165.75)
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 0)) == 1


@pytest.mark.parametrize(
    ("exc", "error"),
    [
        pytest.param(nvml.Unknown(), "Unknown", id="nvml-unknown"),
        pytest.param(nvml.Timeout(), "Timeout", id="nvml-timeout"),
        pytest.param(RuntimeError("boom"), "RuntimeError", id="unexpected-exception"),
        pytest.param(OverflowError(), "OverflowError", id="arithmetic-error"),
    ],
)
def test_failed_call_is_counted_every_time_and_not_cached(
    fake: FakeNvml, collector: NvmlCollector, exc: BaseException, error: str
) -> None:
    fake.fail("device_utilization", exc, index=4)
    scrape(collector)
    reg = scrape(collector)
    labels = {"collector": "utilization", "error": error}
    assert reg.get_sample_value("gpu_exporter_collector_errors_total", labels) == 2
    assert fake.calls[("device_utilization", 4)] == 2  # retried: a failure is not "absent"
    assert reg.get_sample_value("gpu_utilization_ratio", gpu(fake, 4)) is None
    assert reg.get_sample_value("gpu_temperature_celsius", gpu(fake, 4)) == 46


def test_a_failing_reader_is_counted_and_the_other_readers_run(
    fake: FakeNvml, collector: NvmlCollector, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(ctx, dev, out):  # a bug in a reader, not an NVML error
        raise KeyError("oops")

    monkeypatch.setattr(
        collector_module, "READERS", (("broken", broken), *collector_module.READERS)
    )
    reg = scrape(collector)
    labels = {"collector": "broken", "error": "KeyError"}
    assert reg.get_sample_value("gpu_exporter_collector_errors_total", labels) == 8
    assert reg.get_sample_value("gpu_memory_total_bytes", gpu(fake, 7)) == 81559 * MiB


def test_exception_from_a_device_loop_never_escapes_collect(
    fake: FakeNvml, collector: NvmlCollector, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(dev):
        raise MemoryError("no")

    monkeypatch.setattr(collector, "_reprobe", explode)
    collector.devices[2].lost = True
    reg = scrape(collector)  # would raise if the device loop let it through
    assert (
        reg.get_sample_value(
            "gpu_exporter_collector_errors_total", {"collector": "device", "error": "MemoryError"}
        )
        == 1
    )
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 3)) == 1


# --- init ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "error"),
    [
        pytest.param(nvml.LibraryNotFound(), "LibraryNotFound", id="library-missing"),
        pytest.param(nvml.DriverNotLoaded(), "DriverNotLoaded", id="driver-not-loaded"),
        pytest.param(
            nvml.LibRmVersionMismatch(), "LibRmVersionMismatch", id="library-driver-mismatch"
        ),
        pytest.param(
            nvml.NVMLLibraryMismatchError("x"), "NVMLLibraryMismatchError", id="pynvml-mismatch"
        ),
    ],
)
def test_init_failure_is_counted_and_reported_as_nvml_up_0(exc: BaseException, error: str) -> None:
    fake = FakeNvml(default_fake().gpus, init_error_forever=exc)
    c = NvmlCollector(fake)
    assert not c.initialise()
    assert not c.initialise()
    reg = scrape(c)
    assert reg.get_sample_value("gpu_exporter_nvml_up") == 0
    labels = {"collector": "init", "error": error}
    assert reg.get_sample_value("gpu_exporter_collector_errors_total", labels) == 2


def test_init_succeeds_on_a_later_attempt() -> None:
    fake = FakeNvml(default_fake().gpus, init_errors=[nvml.DriverNotLoaded()])
    c = NvmlCollector(fake)
    assert not c.initialise()
    assert c.initialise()
    reg = scrape(c)
    assert reg.get_sample_value("gpu_exporter_nvml_up") == 1
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 0)) == 1


def test_enumeration_failure_shuts_nvml_down_and_reports_down() -> None:
    fake = default_fake()
    fake.fail("device_count", nvml.Unknown())
    c = NvmlCollector(fake)
    assert not c.initialise()
    assert fake.shutdown_calls == 1
    assert scrape(c).get_sample_value("gpu_exporter_nvml_up") == 0


def test_shutdown_calls_nvml_shutdown_once(fake: FakeNvml, collector: NvmlCollector) -> None:
    collector.shutdown()
    collector.shutdown()
    assert fake.shutdown_calls == 1
    assert scrape(collector).get_sample_value("gpu_exporter_nvml_up") == 0


# --- Xid -----------------------------------------------------------------------------------


def test_xid_counts_and_timestamps_are_reported_per_gpu(
    fake: FakeNvml, collector: NvmlCollector, xids
) -> None:
    xids.record(fake.gpus[5].uuid, 79)
    xids.record(fake.gpus[5].uuid, 79)
    xids.record(fake.gpus[5].uuid, 31)
    reg = scrape(collector)
    assert reg.get_sample_value("gpu_xid_errors_total", gpu(fake, 5, xid="79")) == 2
    assert reg.get_sample_value("gpu_xid_errors_total", gpu(fake, 5, xid="31")) == 1
    assert (
        reg.get_sample_value("gpu_xid_last_timestamp_seconds", gpu(fake, 5, xid="79"))
        == 1_700_000_123.0
    )
    assert reg.get_sample_value("gpu_xid_errors_total", gpu(fake, 4, xid="79")) is None


def test_lost_gpu_keeps_its_xid_series(fake: FakeNvml, collector: NvmlCollector, xids) -> None:
    xids.record(fake.gpus[5].uuid, 79)  # "GPU has fallen off the bus"
    fake.lose(5)
    reg = scrape(collector)
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 5)) == 0
    assert reg.get_sample_value("gpu_xid_errors_total", gpu(fake, 5, xid="79")) == 1


def test_leaving_mig_mode_forgets_what_was_cached_as_absent(
    fake: FakeNvml, collector: NvmlCollector
) -> None:
    assert scrape(collector).get_sample_value("gpu_utilization_ratio", gpu(fake, 6)) is None
    fake.gpus[6].mig_mode = 0  # MIG disabled (after a GPU reset): utilisation is readable again
    fake.gpus[6].unsupported.discard("device_utilization")
    reg = scrape(collector)
    assert reg.get_sample_value("gpu_utilization_ratio", gpu(fake, 6)) == pytest.approx(0.81)
    assert reg.get_sample_value("gpu_mig_memory_total_bytes", gpu(fake, 6)) is None


def test_gpu_that_cannot_be_identified_at_init_is_counted_and_others_reported() -> None:
    fake = default_fake()
    fake.fail("device_uuid", nvml.Unknown(), index=4)
    c = NvmlCollector(fake)
    assert c.initialise()
    reg = scrape(c)
    assert (
        reg.get_sample_value(
            "gpu_exporter_collector_errors_total", {"collector": "init", "error": "Unknown"}
        )
        == 1
    )
    assert [d.index for d in c.devices] == [0, 1, 2, 3, 5, 6, 7]
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 5)) == 1


# --- MIG: every slot read in isolation ----------------------------------

MIG_GPU = 6
SLOT0_UUID = "MIG-6a0b1c2d-0000-4000-8000-000000000001"
SLOT2_UUID = "MIG-6a0b1c2d-0000-4000-8000-000000000002"


def mig(fake: FakeNvml, mig_uuid: str, instance: str) -> dict[str, str]:
    return gpu(fake, MIG_GPU, mig_uuid=mig_uuid, gpu_instance_id=instance)


def errors_of(reg: CollectorRegistry, collector: str, error: str) -> float | None:
    return reg.get_sample_value(
        "gpu_exporter_collector_errors_total", {"collector": collector, "error": error}
    )


@pytest.mark.parametrize(
    "call",
    ["device_mig_device_handle", "device_uuid", "device_gpu_instance_id", "device_memory_info_v2"],
)
def test_container_seeing_only_its_own_mig_instance_still_gets_its_memory(
    fake: FakeNvml, clock, call: str
) -> None:
    """Issue 14, case 3: the parent's memory and slot 0 answer NoPermission; slot 2 (the
    pod's instance, 98.6 % full) is served, and each refusal is counted."""
    slot2 = fake.gpus[MIG_GPU].migs[1]
    slot2.memory_used = round(slot2.memory_total * 0.986)
    fake.fail("device_memory_info_v2", nvml.NoPermission(), index=MIG_GPU)
    fake.fail(call, nvml.NoPermission(), index=MIG_GPU, slot=0)
    c = NvmlCollector(fake, timer=clock)
    assert c.initialise()
    reg = scrape(c)
    labels = mig(fake, SLOT2_UUID, "5")
    used = reg.get_sample_value("gpu_mig_memory_used_bytes", labels)
    total = reg.get_sample_value("gpu_mig_memory_total_bytes", labels)
    assert used == slot2.memory_used
    assert used / total == pytest.approx(0.986, abs=1e-4)
    assert reg.get_sample_value("gpu_mig_memory_used_bytes", mig(fake, SLOT0_UUID, "1")) is None
    assert reg.get_sample_value("gpu_memory_used_bytes", gpu(fake, MIG_GPU)) is None
    assert reg.get_sample_value("gpu_device_up", gpu(fake, MIG_GPU)) == 1
    assert errors_of(reg, "mig", "NoPermission") == 1
    assert errors_of(reg, "memory", "NoPermission") == 1
    assert reg.get_sample_value("gpu_temperature_celsius", gpu(fake, MIG_GPU)) == 52

    fake.fail(call, None, index=MIG_GPU, slot=0)  # permission granted again
    reg = scrape(c)
    assert reg.get_sample_value("gpu_mig_memory_used_bytes", mig(fake, SLOT0_UUID, "1")) == (
        30_000 * MiB
    )
    assert errors_of(reg, "mig", "NoPermission") == 1  # not counted again


@pytest.mark.parametrize(
    "exc",
    [nvml.NoPermission(), nvml.GpuIsLost(), nvml.Unknown(), RuntimeError("binding bug")],
    ids=["no-permission", "gpu-is-lost", "unknown", "other-exception"],
)
def test_one_failing_mig_slot_drops_that_slot_only(fake: FakeNvml, clock, exc) -> None:
    fake.fail("device_memory_info_v2", exc, index=MIG_GPU, slot=2)
    c = NvmlCollector(fake, timer=clock)
    assert c.initialise()
    reg = scrape(c)
    assert reg.get_sample_value("gpu_mig_memory_used_bytes", mig(fake, SLOT2_UUID, "5")) is None
    assert reg.get_sample_value("gpu_mig_memory_used_bytes", mig(fake, SLOT0_UUID, "1")) == (
        30_000 * MiB
    )
    assert reg.get_sample_value("gpu_device_up", gpu(fake, MIG_GPU)) == 1
    assert reg.get_sample_value("gpu_memory_used_bytes", gpu(fake, MIG_GPU)) is not None
    assert errors_of(reg, "mig", nvml.error_name(exc)) == 1


def test_nvml_gone_on_a_mig_slot_still_ends_the_collection(fake: FakeNvml, clock) -> None:
    fake.fail("device_mig_device_handle", nvml.Uninitialized(), index=MIG_GPU, slot=2)
    c = NvmlCollector(fake, timer=clock)
    assert c.initialise()
    reg = scrape(c)
    assert reg.get_sample_value("gpu_exporter_nvml_up") == 0
    assert errors_of(reg, "nvml", "Uninitialized") == 1
