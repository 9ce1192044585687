"""XidWatcher: the NVML event thread that counts Xid critical errors."""

from __future__ import annotations

from collections import Counter

from nvml_exporter import nvml
from nvml_exporter.fake import FakeGpu, FakeNvml
from nvml_exporter.xid import XidWatcher


def pairs(gpus: list[FakeGpu]) -> list[tuple[FakeGpu, str]]:
    """``(handle, uuid)`` of each fake GPU, as the collector registers them."""
    return [(g, g.uuid) for g in gpus]


def _start(fake: FakeNvml, **kwargs) -> tuple[XidWatcher, Counter[tuple[str, str]]]:
    errors: Counter[tuple[str, str]] = Counter()
    watcher = XidWatcher(
        fake,
        wall_clock=lambda: 42.0,
        on_error=lambda c, e: errors.update([(c, nvml.error_name(e))]),
        wait_ms=10,
        **kwargs,
    )
    fake.init()
    return watcher, errors


def test_events_are_counted_per_gpu_and_xid(fake: FakeNvml, wait_for) -> None:
    watcher, errors = _start(fake)
    assert watcher.start(pairs(fake.gpus))
    try:
        fake.emit_xid(5, 79)
        fake.emit_xid(5, 79)
        fake.emit_xid(2, 48)
        wait_for(lambda: sum(c for c, _ in watcher.snapshot().values()) == 3, what="3 Xids")
        assert watcher.snapshot() == {
            (fake.gpus[5].uuid, 79): (2, 42.0),
            (fake.gpus[2].uuid, 48): (1, 42.0),
        }
        assert fake.calls[("device_register_events", 7)] == 1
        assert not errors
    finally:
        watcher.stop()
    assert fake.calls[("event_set_free", None)] == 1


def test_failed_wait_is_counted_and_the_thread_keeps_going(fake: FakeNvml, wait_for) -> None:
    watcher, errors = _start(fake, retry_s=0.001)
    assert watcher.start(pairs(fake.gpus))
    try:
        fake.fail("event_set_wait", nvml.Unknown())
        wait_for(lambda: errors[("xid", "Unknown")] >= 1, what="a counted wait error")
        fake.fail("event_set_wait", None)
        fake.emit_xid(0, 13)
        wait_for(lambda: watcher.snapshot(), what="the Xid after the error")
    finally:
        watcher.stop()


def test_no_thread_when_event_sets_are_unsupported(fake: FakeNvml) -> None:
    watcher, errors = _start(fake)
    fake.fail("event_set_create", nvml.NotSupported())
    assert not watcher.start(pairs(fake.gpus))
    assert not errors  # not offered here: absent like any NotSupported reading, not a failure
    watcher.stop()  # harmless without a thread


def test_a_failed_event_set_creation_is_counted(fake: FakeNvml) -> None:
    watcher, errors = _start(fake)
    fake.fail("event_set_create", nvml.Unknown())
    assert not watcher.start(pairs(fake.gpus))
    assert errors == {("xid", "Unknown"): 1}


def test_no_thread_when_no_gpu_supports_xid_events(fake: FakeNvml) -> None:
    watcher, errors = _start(fake)
    for g in fake.gpus:
        g.unsupported.add("device_supported_event_types")
    assert not watcher.start(pairs(fake.gpus))
    assert fake.calls[("event_set_free", None)] == 1
    assert not errors


def test_stop_is_prompt_and_idempotent(fake: FakeNvml) -> None:
    watcher, _ = _start(fake)
    assert watcher.start(pairs(fake.gpus))
    watcher.stop()
    watcher.stop()
    assert fake.calls[("event_set_free", None)] == 1


def test_a_stop_that_times_out_keeps_the_event_set_and_can_be_retried(
    fake: FakeNvml, wait_for
) -> None:
    watcher, _ = _start(fake)
    assert watcher.start(pairs(fake.gpus))
    fake.hang("event_set_wait")
    try:
        wait_for(fake.hanging.is_set, what="the thread to enter the hung wait")
        assert not watcher.stop(timeout_s=0.05)  # the thread is inside nvmlEventSetWait
        assert fake.calls[("event_set_free", None)] == 0  # never freed under a waiting call
    finally:
        fake.release()
    assert watcher.stop()
    assert fake.calls[("event_set_free", None)] == 1


def test_watch_after_stop_registers_nothing(fake: FakeNvml) -> None:
    watcher, _ = _start(fake)
    assert watcher.start(pairs(fake.gpus[:2]))
    assert watcher.stop()
    assert not watcher.watch(fake.gpus[3], fake.gpus[3].uuid)
    assert fake.calls[("event_set_create", None)] == 1
    assert not fake.xid_registered(3)


def test_watch_adds_a_gpu_to_the_running_watcher(fake: FakeNvml, wait_for) -> None:
    watcher, _ = _start(fake)
    assert watcher.start(pairs(fake.gpus[:2]))
    try:
        fake.emit_xid(3, 31)
        assert fake.dropped_xids == 1  # GPU 3 is not registered yet
        assert watcher.watch(fake.gpus[3], fake.gpus[3].uuid)
        fake.emit_xid(3, 31)
        wait_for(lambda: watcher.snapshot(), what="the Xid of the added GPU")
        assert fake.calls[("event_set_create", None)] == 1
    finally:
        watcher.stop()
