"""The HTTP server on 127.0.0.1 with an ephemeral port, over the fake backend."""

from __future__ import annotations

import gzip
import http.client
import threading
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from nvml_exporter import nvml
from nvml_exporter.fake import FakeNvml, default_fake
from nvml_exporter.server import Exporter, collection_deadline

TIMEOUT = "X-Prometheus-Scrape-Timeout-Seconds"


def get(
    exporter: Exporter, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", exporter.port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def samples(body: bytes) -> dict[tuple[str, tuple], float]:
    """Parse a text exposition into {(name, sorted labels): value}."""
    out = {}
    for family in text_string_to_metric_families(body.decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(body: bytes, name: str, **labels: str) -> float | None:
    return samples(body).get((name, tuple(sorted(labels.items()))))


def up_gpus(body: bytes) -> list[int]:
    return sorted(
        int(dict(k[1])["gpu"]) for k, v in samples(body).items() if k[0] == "gpu_device_up"
    )


@pytest.fixture
def start_exporter() -> Iterator:
    started: list[Exporter] = []

    def start(backend: FakeNvml, **kwargs) -> Exporter:
        kwargs.setdefault("init_backoff", (0.01, 0.05))
        exporter = Exporter(backend, host="127.0.0.1", port=0, **kwargs)
        exporter.start()
        started.append(exporter)
        return exporter

    yield start
    for exporter in started:
        for backend in (exporter.collector.backend,):
            if isinstance(backend, FakeNvml):
                backend.release()
        exporter.stop()


@pytest.fixture
def ready(fake: FakeNvml, start_exporter, wait_for) -> Exporter:
    exporter = start_exporter(fake)
    wait_for(lambda: exporter.ready, what="NVML init")
    return exporter


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        pytest.param(None, 9.5, id="no-header-means-10s"),
        pytest.param("10", 9.5, id="half-second-margin"),
        pytest.param("2.5", 2.0, id="fractional"),
        pytest.param("0.4", 0.2, id="short-timeout-keeps-half"),
        pytest.param("abc", 9.5, id="unparsable"),
        pytest.param("-1", 9.5, id="negative"),
        pytest.param("nan", 9.5, id="nan"),
        pytest.param("inf", 9.5, id="infinite"),
    ],
)
def test_collection_deadline_from_the_scrape_timeout_header(
    header: str | None, expected: float
) -> None:
    assert collection_deadline(header) == pytest.approx(expected)


def test_library_missing_still_answers_200_with_nvml_up_0(start_exporter, wait_for) -> None:
    fake = FakeNvml(default_fake().gpus, init_error_forever=nvml.LibraryNotFound())
    exporter = start_exporter(fake)
    wait_for(lambda: fake.calls[("init", None)] >= 3, what="init to be retried")
    status, _, body = get(exporter, "/metrics")
    assert status == 200
    assert value(body, "gpu_exporter_nvml_up") == 0
    assert (
        value(
            body, "gpu_exporter_collector_errors_total", collector="init", error="LibraryNotFound"
        )
        >= 3
    )
    assert get(exporter, "/readyz")[0] == 503
    assert get(exporter, "/healthz")[0] == 200


def test_readyz_turns_200_once_init_succeeds_on_retry(start_exporter, wait_for) -> None:
    fake = FakeNvml(
        default_fake().gpus, init_errors=[nvml.DriverNotLoaded(), nvml.LibRmVersionMismatch()]
    )
    exporter = start_exporter(fake)
    wait_for(lambda: get(exporter, "/readyz")[0] == 200, what="/readyz 200")
    assert fake.calls[("init", None)] == 3
    status, _, body = get(exporter, "/metrics")
    assert status == 200
    assert value(body, "gpu_exporter_nvml_up") == 1
    assert up_gpus(body) == list(range(8))


def test_metrics_serves_every_gpu_and_process_metrics(ready: Exporter) -> None:
    status, headers, body = get(ready, "/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert up_gpus(body) == list(range(8))
    assert value(body, "process_resident_memory_bytes") > 0
    assert value(body, "gpu_exporter_scrape_duration_seconds") >= 0


def test_openmetrics_and_gzip_are_negotiated(ready: Exporter) -> None:
    status, headers, body = get(
        ready,
        "/metrics",
        {"Accept": "application/openmetrics-text; version=1.0.0", "Accept-Encoding": "gzip"},
    )
    assert status == 200
    assert headers["Content-Encoding"] == "gzip"
    assert headers["Content-Type"].startswith("application/openmetrics-text")
    assert gzip.decompress(body).rstrip().endswith(b"# EOF")


def test_unknown_path_is_404(ready: Exporter) -> None:
    assert get(ready, "/nope")[0] == 404


def test_hung_call_serves_the_gpus_read_before_it_at_the_deadline(
    fake: FakeNvml, ready: Exporter
) -> None:
    fake.hang("device_memory_info_v2", 3)
    status, _, body = get(ready, "/metrics", {TIMEOUT: "0.5"})
    assert status == 200
    assert up_gpus(body) == [0, 1, 2]
    assert value(body, "gpu_exporter_nvml_up") == 1
    assert (
        value(
            body,
            "gpu_exporter_collector_errors_total",
            collector="scrape",
            error="DeadlineExceeded",
        )
        == 1
    )


def test_while_a_collection_stays_hung_later_scrapes_start_no_new_one(
    fake: FakeNvml, ready: Exporter, wait_for
) -> None:
    fake.hang("device_memory_info_v2", 3)
    get(ready, "/metrics", {TIMEOUT: "0.5"})
    status, _, body = get(ready, "/metrics", {TIMEOUT: "0.5"})
    assert status == 200
    assert up_gpus(body) == []  # the hung collection's readings may be stale: not served
    assert (
        value(
            body,
            "gpu_exporter_collector_errors_total",
            collector="scrape",
            error="PreviousCollectionHung",
        )
        == 1
    )
    assert fake.calls[("device_memory_info_v2", 3)] == 1
    assert ready.flight.started == 1

    fake.release()
    wait_for(lambda: ready.flight.wait_idle(0), what="the hung collection to end")
    status, _, body = get(ready, "/metrics", {TIMEOUT: "5"})
    assert up_gpus(body) == list(range(8))
    assert ready.flight.started == 2


def test_concurrent_scrapes_share_one_collection(fake: FakeNvml, ready: Exporter, wait_for) -> None:
    fake.hang("device_memory_info_v2", 0)
    bodies: list[bytes] = []
    lock = threading.Lock()

    def scrape() -> None:
        _, _, body = get(ready, "/metrics", {TIMEOUT: "60"})
        with lock:
            bodies.append(body)

    threads = [threading.Thread(target=scrape) for _ in range(4)]
    threads[0].start()
    wait_for(fake.hanging.is_set, what="the first collection to reach the hung call")
    for t in threads[1:]:
        t.start()
    wait_for(lambda: ready.flight.joined == 3, what="three scrapes to join")
    fake.release()
    for t in threads:
        t.join(30)
    assert len(bodies) == 4
    assert all(up_gpus(b) == list(range(8)) for b in bodies)
    assert ready.flight.started == 1
    assert fake.calls[("device_memory_info_v2", 0)] == 1


def test_unexpected_failure_in_gathering_still_answers_200(
    ready: Exporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(deadline_s: float):
        raise RuntimeError("bug")

    monkeypatch.setattr(ready.flight, "gather", broken)
    status, _, body = get(ready, "/metrics")
    assert status == 200
    assert value(body, "gpu_exporter_nvml_up") == 1
    assert (
        value(body, "gpu_exporter_collector_errors_total", collector="scrape", error="RuntimeError")
        == 1
    )


def test_stop_shuts_nvml_down_and_stops_serving(fake: FakeNvml, ready: Exporter) -> None:
    port = ready.port
    ready.stop()
    ready.stop()
    assert fake.shutdown_calls == 1
    assert ready.xids._thread is None
    with pytest.raises(OSError):
        http.client.HTTPConnection("127.0.0.1", port, timeout=5).request("GET", "/healthz")


def test_stop_skips_nvml_shutdown_while_a_call_is_hung(
    fake: FakeNvml, ready: Exporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("nvml_exporter.server.SHUTDOWN_GRACE_S", 0.05)
    fake.hang("device_power_usage", 1)
    get(ready, "/metrics", {TIMEOUT: "0.3"})
    ready.stop()
    assert fake.shutdown_calls == 0  # never race nvmlShutdown against a call in progress


def test_a_scrape_that_found_nvml_gone_reports_it_down_though_it_came_back_since(
    fake: FakeNvml, ready: Exporter, wait_for
) -> None:
    """The re-init thread, woken by the collection that found NVML gone, may re-initialise it
    before that scrape reads its self metrics: the scrape still reports what it saw (no GPU
    readings, NVML down), never NVML up beside no GPUs."""
    wake = ready.collector.on_nvml_lost
    assert wake is not None

    def woken_and_back() -> None:
        wake()
        wait_for(lambda: ready.collector.up, what="re-init")  # the re-init thread wins

    ready.collector.on_nvml_lost = woken_and_back
    fake.restart_driver()
    status, _, body = get(ready, "/metrics")
    assert status == 200
    assert up_gpus(body) == []
    assert value(body, "gpu_exporter_nvml_up") == 0
    _, _, body = get(ready, "/metrics")
    assert value(body, "gpu_exporter_nvml_up") == 1 and up_gpus(body)


def test_driver_restart_reinitialises_nvml_and_registers_xid_events_again(
    fake: FakeNvml, ready: Exporter, wait_for
) -> None:
    assert fake.xid_registered(2)
    fake.restart_driver()
    status, _, body = get(ready, "/metrics")
    assert status == 200
    assert value(body, "gpu_exporter_nvml_up") == 0  # this scrape found NVML gone
    assert up_gpus(body) == []
    wait_for(lambda: fake.initialised and fake.xid_registered(2), what="re-init and Xid watch")
    assert fake.shutdown_calls == 1  # the old session is closed before nvmlInit
    fake.emit_xid(2, 79)
    wait_for(
        lambda: (
            value(get(ready, "/metrics")[2], "gpu_xid_errors_total", **_gpu(fake, 2, "79")) == 1
        ),
        what="the Xid after the re-init",
    )
    _, _, body = get(ready, "/metrics")
    assert value(body, "gpu_exporter_nvml_up") == 1
    assert up_gpus(body) == list(range(8))
    assert get(ready, "/readyz")[0] == 200


def _gpu(fake: FakeNvml, index: int, xid: str) -> dict[str, str]:
    return {"uuid": fake.gpus[index].uuid, "gpu": str(index), "xid": xid}


def test_stop_skips_nvml_shutdown_while_the_xid_thread_is_hung(
    fake: FakeNvml, ready: Exporter, wait_for, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("nvml_exporter.server.SHUTDOWN_GRACE_S", 0.05)
    fake.hang("event_set_wait")
    wait_for(fake.hanging.is_set, what="the Xid thread to enter the hung wait")
    ready.stop()
    assert fake.shutdown_calls == 0  # never race nvmlShutdown against nvmlEventSetWait
