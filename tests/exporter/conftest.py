"""Fixtures for the exporter tests: the scripted 8-GPU fake, a collector over it, a clock."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from prometheus_client.registry import CollectorRegistry

from nvml_exporter.collector import NvmlCollector
from nvml_exporter.fake import FakeNvml, default_fake
from nvml_exporter.xid import XidWatcher


class FakeClock:
    """A monotonic clock that moves only when told to (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def fake() -> Iterator[FakeNvml]:
    backend = default_fake()
    yield backend
    backend.release()  # never leave a thread blocked in a hung fake call


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def xids(fake: FakeNvml) -> XidWatcher:
    return XidWatcher(fake, wall_clock=lambda: 1_700_000_123.0)


@pytest.fixture
def collector(
    fake: FakeNvml, registry: CollectorRegistry, clock: FakeClock, xids: XidWatcher
) -> NvmlCollector:
    """An initialised collector over the default fake, registered in ``registry``."""
    c = NvmlCollector(fake, xids=xids, registry=registry, timer=clock)
    assert c.initialise()
    return c


@pytest.fixture
def wait_for() -> Callable[..., None]:
    """Poll a condition until it holds; fail after ``timeout`` seconds (never a timing test)."""

    def wait(condition: Callable[[], object], timeout: float = 15.0, what: str = "") -> None:
        end = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > end:
                pytest.fail(f"timed out waiting for {what or condition}")
            time.sleep(0.005)

    return wait
