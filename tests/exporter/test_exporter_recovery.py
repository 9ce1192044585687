"""Coming back: lost GPUs, GPUs unidentified at start and NVML itself, with their Xid events."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nvml_exporter import nvml
from nvml_exporter.collector import REPROBE_INITIAL_S, NvmlCollector
from nvml_exporter.fake import FakeNvml, default_fake
from nvml_exporter.xid import XidWatcher
from tests.exporter.test_exporter_collector import gpu, scrape

LONG_AFTER_S = 1000.0
"""Far past every re-probe backoff, in seconds."""


@pytest.fixture
def watcher(fake: FakeNvml) -> Iterator[XidWatcher]:
    """A fast Xid watcher over ``fake``, not started; stopped after the test."""
    w = XidWatcher(fake, wall_clock=lambda: 1_700_000_123.0, wait_ms=10, retry_s=0.01)
    yield w
    fake.release()
    w.stop()


def xid_count(collector: NvmlCollector, fake: FakeNvml, index: int, xid: int) -> float | None:
    return scrape(collector).get_sample_value(
        "gpu_xid_errors_total", gpu(fake, index, xid=str(xid))
    )


# --- a lost GPU that comes back ------------------------------------------------------------


def test_recovered_gpu_is_registered_for_xid_events_again(
    fake: FakeNvml, clock, watcher: XidWatcher, wait_for
) -> None:
    c = NvmlCollector(fake, xids=watcher, timer=clock)
    assert c.initialise()
    assert watcher.start([(d.handle, d.uuid) for d in c.devices])
    fake.lose(5)  # a lost GPU (later reset) forgets its event registration
    scrape(c)
    assert not fake.xid_registered(5)

    fake.recover(5)
    clock.advance(REPROBE_INITIAL_S)
    assert scrape(c).get_sample_value("gpu_device_up", gpu(fake, 5)) == 1
    assert fake.xid_registered(5)
    fake.emit_xid(5, 79)
    wait_for(lambda: watcher.snapshot(), what="the Xid after the recovery")
    assert xid_count(c, fake, 5, 79) == 1
    assert fake.dropped_xids == 0


def test_gpu_lost_at_init_gets_its_identity_when_it_recovers(fake: FakeNvml, clock) -> None:
    fake.lose(3, after_calls=2)  # handle and UUID answer, then the GPU is lost
    c = NvmlCollector(fake, timer=clock)
    assert c.initialise()
    assert scrape(c).get_sample_value("gpu_device_up", gpu(fake, 3)) == 0

    fake.recover(3)
    clock.advance(REPROBE_INITIAL_S)
    reg = scrape(c)
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 3)) == 1
    info = gpu(
        fake,
        3,
        model_name="NVIDIA H100 80GB HBM3",
        pci_bus_id="00000000:48:00.0",
        driver_version="550.54.15",
        cuda_driver_version="12.4",
        mig_mode="disabled",
    )
    assert reg.get_sample_value("gpu_info", info) == 1


# --- a GPU whose UUID cannot be read at start -----------------------------------------------


def test_gpu_unidentified_at_init_is_reprobed_with_backoff_and_then_reported(
    fake: FakeNvml, clock
) -> None:
    fake.fail("device_uuid", nvml.Unknown(), index=4)
    c = NvmlCollector(fake, timer=clock)
    assert c.initialise()
    assert scrape(c).get_sample_value("gpu_device_up", gpu(fake, 4)) is None
    assert fake.calls[("device_uuid", 4)] == 1

    scrape(c)  # within the backoff: not probed
    assert fake.calls[("device_uuid", 4)] == 1

    clock.advance(REPROBE_INITIAL_S)
    reg = scrape(c)  # probed, still failing: counted, backoff doubles
    assert fake.calls[("device_uuid", 4)] == 2
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 4)) is None
    errors = {"collector": "device", "error": "Unknown"}
    assert reg.get_sample_value("gpu_exporter_collector_errors_total", errors) == 1

    clock.advance(REPROBE_INITIAL_S)
    scrape(c)  # inside the doubled backoff
    assert fake.calls[("device_uuid", 4)] == 2

    fake.fail("device_uuid", None, index=4)
    clock.advance(REPROBE_INITIAL_S)
    reg = scrape(c)
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 4)) == 1
    assert reg.get_sample_value("gpu_temperature_celsius", gpu(fake, 4)) == 46
    info = gpu(
        fake,
        4,
        model_name="NVIDIA H100 80GB HBM3",
        pci_bus_id="00000000:58:00.0",
        driver_version="550.54.15",
        cuda_driver_version="12.4",
        mig_mode="disabled",
    )
    assert reg.get_sample_value("gpu_info", info) == 1
    assert [d.index for d in c.devices] == list(range(8))

    clock.advance(LONG_AFTER_S)
    scrape(c)
    assert fake.calls[("device_uuid", 4)] == 3  # identified: never probed again


def test_gpu_unidentified_at_init_and_not_in_gpu_uuids_is_dropped_once_identified(
    fake: FakeNvml, clock
) -> None:
    fake.fail("device_uuid", nvml.Unknown(), index=4)
    c = NvmlCollector(fake, gpu_uuids=[fake.gpus[2].uuid], timer=clock)
    assert c.initialise()
    fake.fail("device_uuid", None, index=4)
    clock.advance(REPROBE_INITIAL_S)
    reg = scrape(c)
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 4)) is None
    assert [d.index for d in c.devices] == [2]
    clock.advance(LONG_AFTER_S)
    scrape(c)
    assert fake.calls[("device_uuid", 4)] == 2  # not probed again: it is not ours


def test_gpu_identified_late_is_registered_for_xid_events(
    fake: FakeNvml, clock, watcher: XidWatcher, wait_for
) -> None:
    fake.fail("device_uuid", nvml.Unknown(), index=4)
    c = NvmlCollector(fake, xids=watcher, timer=clock)
    assert c.initialise()
    assert watcher.start([(d.handle, d.uuid) for d in c.devices])
    assert not fake.xid_registered(4)
    fake.fail("device_uuid", None, index=4)
    clock.advance(REPROBE_INITIAL_S)
    scrape(c)
    assert fake.xid_registered(4)
    fake.emit_xid(4, 48)
    wait_for(lambda: watcher.snapshot(), what="the Xid of the late GPU")
    assert xid_count(c, fake, 4, 48) == 1


def test_gpu_unidentified_at_init_starts_the_xid_watcher_when_identified(clock, wait_for) -> None:
    fake = FakeNvml(default_fake().gpus[:1])
    fake.fail("device_uuid", nvml.Unknown(), index=0)
    watcher = XidWatcher(fake, wait_ms=10)
    try:
        c = NvmlCollector(fake, xids=watcher, timer=clock)
        assert c.initialise()
        assert not watcher.start([(d.handle, d.uuid) for d in c.devices])  # nothing to watch yet
        fake.fail("device_uuid", None, index=0)
        clock.advance(REPROBE_INITIAL_S)
        scrape(c)
        fake.emit_xid(0, 13)
        wait_for(lambda: watcher.snapshot(), what="the Xid of the only GPU")
    finally:
        watcher.stop()


# --- NVML itself gone (driver restarted) ---------------------------------------------------


def test_nvml_gone_mid_scrape_reports_nvml_up_0_and_reinitialises(fake: FakeNvml, clock) -> None:
    lost: list[bool] = []
    c = NvmlCollector(fake, timer=clock)
    c.on_nvml_lost = lambda: lost.append(True)
    assert c.initialise()
    fake.restart_driver()
    reg = scrape(c)
    assert reg.get_sample_value("gpu_exporter_nvml_up") == 0
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 0)) is None  # never a healthy lie
    errors = {"collector": "nvml", "error": "Uninitialized"}
    assert reg.get_sample_value("gpu_exporter_collector_errors_total", errors) == 1
    assert lost == [True]
    assert not c.up

    assert c.initialise()
    assert fake.shutdown_calls == 1  # the old NVML session is closed before the new one
    reg = scrape(c)
    assert reg.get_sample_value("gpu_exporter_nvml_up") == 1
    assert all(reg.get_sample_value("gpu_device_up", gpu(fake, i)) == 1 for i in range(8))


# --- an Xid of a GPU that is then lost ----------------------------------


def test_xid_of_a_gpu_lost_before_the_event_is_read_is_counted_and_survives_recovery(
    fake: FakeNvml, clock, watcher: XidWatcher, wait_for
) -> None:
    c = NvmlCollector(fake, xids=watcher, timer=clock)
    c.count_error = lambda collector, exc: pytest.fail(f"counted {collector}: {exc!r}")  # type: ignore[method-assign]
    assert c.initialise()
    assert watcher.start([(d.handle, d.uuid) for d in c.devices])
    uuid_calls = fake.calls[("device_uuid", 1)]
    fake.emit_xid(1, 79, lose_gpu=True)  # GPU 1 falls off the bus; it answers GpuIsLost
    wait_for(lambda: watcher.snapshot(), what="the Xid of the lost GPU")
    assert fake.calls[("device_uuid", 1)] == uuid_calls  # NVML not asked at event time

    reg = scrape(c)
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 1)) == 0
    assert xid_count(c, fake, 1, 79) == 1

    fake.recover(1)
    clock.advance(REPROBE_INITIAL_S)
    assert scrape(c).get_sample_value("gpu_device_up", gpu(fake, 1)) == 1
    assert xid_count(c, fake, 1, 79) == 1  # the count survives the loss and the recovery
    fake.emit_xid(1, 79)
    wait_for(lambda: watcher.snapshot()[(fake.gpus[1].uuid, 79)][0] == 2, what="a second Xid")
    assert xid_count(c, fake, 1, 79) == 2
