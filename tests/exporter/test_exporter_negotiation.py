"""The exporter's content negotiation never fails a scrape: any ``Accept`` header gets a valid
exposition whose ``Content-Type`` names the format the body really is.

Reproduced: ``version="1.0.0"`` (a quoted parameter) got no answer and a logged TypeError;
``version=99`` was echoed back in ``Content-Type``. The kind: quoted and unknown parameters,
q-values, wildcards, garbage, huge and repeated headers, each Prometheus 3 ``scrape_protocols``
(the real Prometheus 3 scrapes the exporter over the fake NVML with each of them).
"""

from __future__ import annotations

import http.client
import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as parse_openmetrics,
)
from prometheus_client.parser import text_string_to_metric_families as parse_text

from nvml_exporter.fake import FakeNvml, default_fake
from nvml_exporter.httpd import HttpLimits, HttpServer, Request, Response, Route
from nvml_exporter.negotiation import DEFAULT, OFFERS, Format, negotiate
from nvml_exporter.server import Exporter
from tests.fuzzing import budget
from tests.prometheus_process import PrometheusProcess

TEXT_004 = "text/plain; version=0.0.4; charset=utf-8"
TEXT_100 = "text/plain; version=1.0.0; charset=utf-8; escaping={}"
OM_100 = "application/openmetrics-text; version=1.0.0; charset=utf-8; escaping={}"
ESCAPINGS = ("underscores", "allow-utf-8", "dots", "values")
VALID = {TEXT_004} | {t.format(e) for t in (TEXT_100, OM_100) for e in ESCAPINGS}
"""Every Content-Type the exporter may send: each names a format its writer really writes."""

# What Prometheus 3.16 sends per scrape protocol (config.ScrapeProtocolsHeaders, and
# acceptHeader in scrape/scrape.go: escaping on the 1.0.0/2.0.0 text formats, q from 0.7 down
# in the configured order, then */*).
PROTOCOL_MEDIA = {
    "PrometheusProto": "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
    "encoding=delimited",
    "PrometheusText0.0.4": "text/plain;version=0.0.4",
    "PrometheusText1.0.0": "text/plain;version=1.0.0",
    "OpenMetricsText0.0.1": "application/openmetrics-text;version=0.0.1",
    "OpenMetricsText1.0.0": "application/openmetrics-text;version=1.0.0",
    "OpenMetricsText2.0.0": "application/openmetrics-text;version=2.0.0",
}
DEFAULT_PROTOCOLS = (
    "OpenMetricsText1.0.0",
    "OpenMetricsText0.0.1",
    "PrometheusText1.0.0",
    "PrometheusText0.0.4",
)


def prometheus_accept(protocols: tuple[str, ...], escaping: str = "allow-utf-8") -> str:
    """The ``Accept`` header Prometheus 3.16 sends for ``protocols`` (checked against the real
    one in :func:`test_prometheus_3_scrapes_the_exporter_with_every_scrape_protocol`)."""
    weight = len(PROTOCOL_MEDIA) + 1
    values = []
    for protocol in protocols:
        value = PROTOCOL_MEDIA[protocol]
        if protocol in ("PrometheusText1.0.0", "OpenMetricsText1.0.0", "OpenMetricsText2.0.0"):
            value += f";escaping={escaping}"
        values.append(f"{value};q=0.{weight}")
        weight -= 1
    return ",".join([*values, f"*/*;q=0.{weight}"])


CASES = [
    # the two reproduced cases
    pytest.param(
        'application/openmetrics-text; version="1.0.0"',
        OM_100.format("underscores"),
        id="a quoted version is read unquoted (it got no answer and a TypeError)",
    ),
    pytest.param(
        "application/openmetrics-text; version=99",
        TEXT_004,
        id="an unknown OpenMetrics version is never echoed back (it was, as version=99)",
    ),
    # unknown or unsupported versions
    pytest.param(
        "text/plain; version=99",
        TEXT_004,
        id="an unknown text version gets the default format",
    ),
    pytest.param(
        "application/openmetrics-text;version=1.a",
        TEXT_004,
        id="a version that is no number gets the default format",
    ),
    pytest.param(
        "application/openmetrics-text;version=",
        TEXT_004,
        id="an empty version gets the default format",
    ),
    pytest.param(
        'application/openmetrics-text;version="2.0.0"',
        TEXT_004,
        id="OpenMetrics 2.0 (experimental) is not claimed",
    ),
    pytest.param(
        "application/openmetrics-text;version=0.0.1",
        TEXT_004,
        id="the pre-release OpenMetrics 0.0.1 is not claimed",
    ),
    pytest.param(
        "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
        "encoding=delimited",
        TEXT_004,
        id="protobuf asked for alone gets text",
    ),
    # quoting, case and spacing
    pytest.param(
        'text/plain;version="1.0.0";escaping="allow-utf-8"',
        TEXT_100.format("allow-utf-8"),
        id="quoted version and escaping",
    ),
    pytest.param(
        r'application/openmetrics-text;version="1\.0\.0";x="a,b;c"',
        OM_100.format("underscores"),
        id="quoted-pair escapes and separators inside quotes",
    ),
    pytest.param(
        "TEXT/Plain; VERSION=1.0.0; Escaping=values",
        TEXT_100.format("values"),
        id="media types and parameter names are case-insensitive",
    ),
    pytest.param(
        "   application/openmetrics-text  ;  version = 1.0.0 ; charset=utf-8  ",
        OM_100.format("underscores"),
        id="whitespace around every part",
    ),
    pytest.param(
        "text/plain;version=1.0.0;escaping=rot13",
        TEXT_100.format("underscores"),
        id="an unknown escaping means underscores",
    ),
    pytest.param(
        "text/plain;version=0.0.4;escaping=allow-utf-8",
        TEXT_004,
        id="text 0.0.4 never claims an escaping",
    ),
    # q-values
    pytest.param(
        "text/plain;version=1.0.0;q=0.1,application/openmetrics-text;version=1.0.0;q=0.9",
        OM_100.format("underscores"),
        id="the higher q-value wins over the order",
    ),
    pytest.param(
        "application/openmetrics-text;version=1.0.0;q=0, text/plain",
        TEXT_004,
        id="q=0 refuses a format",
    ),
    pytest.param(
        "application/openmetrics-text;version=1.0.0;q=0",
        TEXT_004,
        id="nothing acceptable gets the default format, not an error",
    ),
    pytest.param(
        "*/*;q=0",
        TEXT_004,
        id="everything refused still gets the default format",
    ),
    pytest.param(
        "application/openmetrics-text;version=1.0.0;q=2, text/plain;version=1.0.0;q=0.5",
        TEXT_100.format("underscores"),
        id="a q-value above 1 drops its element",
    ),
    pytest.param(
        "application/openmetrics-text;version=1.0.0;q=abc",
        TEXT_004,
        id="a q-value that is no number drops its element",
    ),
    pytest.param(
        "application/openmetrics-text, text/plain",
        OM_100.format("underscores"),
        id="equal q-values: the one listed first",
    ),
    pytest.param(
        "text/plain;q=0.5, text/plain;version=1.0.0;q=0.1",
        TEXT_004,
        id="the most specific range decides an offer's q-value",
    ),
    # wildcards and absence
    pytest.param("*/*", TEXT_004, id="anything: the default format"),
    pytest.param("text/*", TEXT_004, id="any text: text 0.0.4"),
    pytest.param("application/*", OM_100.format("underscores"), id="any application: OpenMetrics"),
    pytest.param("", TEXT_004, id="an empty header"),
    pytest.param(None, TEXT_004, id="no header"),
    pytest.param("application/json, text/html", TEXT_004, id="only formats not offered"),
    # garbage
    pytest.param('"', TEXT_004, id="a lone quote"),
    pytest.param("\\", TEXT_004, id="a lone backslash"),
    pytest.param('text/plain;version="1.0.0', TEXT_100.format("underscores"), id="an open quote"),
    pytest.param('"text/plain"', TEXT_004, id="a quoted media type"),
    pytest.param("*/text", TEXT_004, id="a wildcard type with a subtype"),
    pytest.param(";;;,,,;=;q=;=", TEXT_004, id="separators only"),
    pytest.param("\x00\x1b[31m\xff\u2603/\u2603", TEXT_004, id="control and non-ASCII bytes"),
    pytest.param(
        "x" * 10_000 + "/" + "y" * 10_000 + ";" * 10_000 + ",application/openmetrics-text",
        OM_100.format("underscores"),
        id="a huge header",
    ),
    # what Prometheus 3 sends
    pytest.param(
        prometheus_accept(DEFAULT_PROTOCOLS),
        OM_100.format("allow-utf-8"),
        id="Prometheus 3 default scrape_protocols",
    ),
    pytest.param(
        prometheus_accept(("PrometheusProto", *DEFAULT_PROTOCOLS)),
        OM_100.format("allow-utf-8"),
        id="Prometheus 3 protobuf first",
    ),
    pytest.param(
        prometheus_accept(("PrometheusProto",)), TEXT_004, id="Prometheus 3 protobuf only"
    ),
    pytest.param(
        prometheus_accept(("OpenMetricsText2.0.0",)),
        TEXT_004,
        id="Prometheus 3 OpenMetrics 2.0 only",
    ),
    pytest.param(
        prometheus_accept(("OpenMetricsText0.0.1",)),
        TEXT_004,
        id="Prometheus 3 OpenMetrics 0.0.1 only",
    ),
    pytest.param(
        prometheus_accept(("PrometheusText1.0.0",), "underscores"),
        TEXT_100.format("underscores"),
        id="Prometheus 3 text 1.0.0 with underscores escaping",
    ),
    pytest.param(
        prometheus_accept(("PrometheusText0.0.4",)), TEXT_004, id="Prometheus 3 text 0.0.4"
    ),
]


def _registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    Counter("demo_requests", "Requests served.", ["code"], registry=registry).labels("200").inc()
    Gauge("demo_temperature_celsius", "Temperature in degrees Celsius.", registry=registry).set(41)
    return registry


def check_body(content_type: str, body: bytes) -> int:
    """Parse ``body`` with the parser of ``content_type``; the number of samples.

    Raises:
        AssertionError, ValueError: the body is not what the Content-Type says.
    """
    assert content_type in VALID, content_type
    text = body.decode("utf-8")
    if content_type.startswith("application/openmetrics-text"):
        assert text.endswith("# EOF\n")
        families = list(parse_openmetrics(text))
    else:
        assert "# EOF" not in text
        families = list(parse_text(text))
    return sum(len(f.samples) for f in families)


@pytest.mark.parametrize(("header", "expected"), CASES)
def test_every_accept_header_gets_a_format_it_really_is(header: str | None, expected: str) -> None:
    chosen = negotiate(header)
    assert chosen.content_type == expected
    assert (
        check_body(chosen.content_type, chosen.encode(_registry())) == 3
    )  # a counter's _total and _created, a gauge


_PIECES = st.sampled_from(
    [
        "text/plain",
        "application/openmetrics-text",
        "application/vnd.google.protobuf",
        "*/*",
        "text/*",
        ";version=1.0.0",
        ";version=0.0.4",
        ';version="1.0.0"',
        ";version=99",
        ";version=2.0.0",
        ";escaping=allow-utf-8",
        ";escaping=dots",
        ";q=0",
        ";q=0.5",
        ";q=1",
        ";q=7",
        ",",
        ";",
        '"',
        "\\",
        " ",
        "=",
    ]
)
HEADERS = st.one_of(
    st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=24).map("".join),
    st.text(max_size=200),
)


@given(header=HEADERS)
@budget(300)
def test_no_accept_header_fails_negotiation(header: str) -> None:
    chosen = negotiate(header)
    assert chosen in {o.escaped(e) for o in OFFERS for e in ESCAPINGS}
    check_body(chosen.content_type, chosen.encode(_registry()))


# --- over HTTP: the exporter over the fake NVML ------------------------------------------------


@pytest.fixture
def exporter(fake: FakeNvml, wait_for: Callable[..., None]) -> Iterator[Exporter]:
    started = Exporter(fake, host="127.0.0.1", port=0, init_backoff=(0.01, 0.05))
    started.start()
    try:
        wait_for(lambda: started.ready, what="NVML init")
        yield started
    finally:
        fake.release()
        started.stop()


def scrape(exporter: Exporter, accepts: list[str]) -> tuple[int, dict[str, str], bytes]:
    """GET /metrics with one ``Accept`` line per item of ``accepts`` (none for ``[]``)."""
    conn = http.client.HTTPConnection("127.0.0.1", exporter.port, timeout=30)
    try:
        conn.putrequest("GET", "/metrics", skip_accept_encoding=True)
        for value in accepts:
            conn.putheader("Accept", value.encode("latin-1"))
        conn.endheaders()
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("accepts", "expected"),
    [
        pytest.param(
            ['application/openmetrics-text; version="1.0.0"'],
            OM_100.format("underscores"),
            id="the quoted version is answered",
        ),
        pytest.param(["application/openmetrics-text; version=99"], TEXT_004, id="version=99"),
        pytest.param(
            ["application/openmetrics-text;version=2.0.0;q=0.9", "text/plain;q=0.1"],
            TEXT_004,
            id="OpenMetrics 2.0",
        ),
        pytest.param(["\x7fgarbage;;\xff,\"'"], TEXT_004, id="latin-1 garbage in the header"),
        pytest.param(
            ["application/openmetrics-text;version=1.0.0", "text/plain;version=0.0.4;q=0.1"],
            OM_100.format("underscores"),
            id="repeated Accept headers are one list (the last one alone was read)",
        ),
        pytest.param(
            ["text/plain;q=0.1", "application/openmetrics-text;version=1.0.0;q=0", "*/*;q=0.2"],
            TEXT_004,
            id="three Accept headers",
        ),
        pytest.param(
            ["text/html;q=0.1," * 900 + 'application/openmetrics-text;version="1.0.0"'],
            OM_100.format("underscores"),
            id="a 15 KB Accept header within the header limit",
        ),
        pytest.param([], TEXT_004, id="no Accept header"),
    ],
)
def test_every_scrape_is_answered_in_the_format_its_content_type_names(
    exporter: Exporter, accepts: list[str], expected: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        status, headers, body = scrape(exporter, accepts)
    assert status == 200
    assert headers["Content-Type"] == expected
    assert check_body(headers["Content-Type"], body) > 100
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_a_head_larger_than_the_limit_is_answered_431_not_dropped(exporter: Exporter) -> None:
    limit = HttpLimits().max_header_bytes
    status, _, body = scrape(exporter, ["text/html;q=0.1," * (limit // 15)])
    assert status == 431
    assert body.startswith(b"bad request")


def test_a_writer_that_fails_still_answers_the_default_format(
    exporter: Exporter, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = Format.encode

    def broken(self: Format, collector: object) -> bytes:
        if self.media_type == "application/openmetrics-text":
            raise TypeError("a writer bug")
        return real(self, collector)  # type: ignore[arg-type]

    monkeypatch.setattr(Format, "encode", broken)
    with caplog.at_level(logging.ERROR):
        status, headers, body = scrape(exporter, ["application/openmetrics-text"])
    assert (status, headers["Content-Type"]) == (200, DEFAULT.content_type)
    assert check_body(headers["Content-Type"], body) > 100
    assert [r.getMessage() for r in caplog.records] == [
        "writing application/openmetrics-text; version=1.0.0; charset=utf-8; "
        "escaping=underscores failed; answering text/plain; version=0.0.4; charset=utf-8"
    ]


def test_a_handler_that_raises_is_answered_500_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def boom(request: Request) -> Response:
        raise TypeError("a handler bug")

    server = HttpServer(
        "127.0.0.1", 0, {"/a": Route(boom), "/b": Route(boom, blocking=True)}, HttpLimits()
    )
    server.start()
    try:
        with caplog.at_level(logging.ERROR, logger="nvml_exporter.httpd"):
            for path in ("/a", "/b"):
                conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
                conn.request("GET", path)
                response = conn.getresponse()
                assert (response.status, response.read()) == (500, b"internal error\n")
                conn.close()
    finally:
        server.stop()
    assert [r.getMessage() for r in caplog.records] == [
        "handler of /a failed: TypeError('a handler bug')",
        "handler of /b failed: TypeError('a handler bug')",
    ]


# --- the real Prometheus 3 scrapes the exporter -------------------------------------------------


@dataclass
class _Job:
    """One scrape job: its scrape-config options and what its exporter saw and answered."""

    name: str
    options: dict[str, object]
    expected: str
    exporter: Exporter | None = None
    seen: list[tuple[str | None, str]] = field(default_factory=list)


JOBS = [
    _Job("default", {}, OM_100.format("allow-utf-8")),
    _Job(
        "proto-first",
        {"scrape_protocols": ["PrometheusProto", *DEFAULT_PROTOCOLS]},
        OM_100.format("allow-utf-8"),
    ),
    _Job("proto", {"scrape_protocols": ["PrometheusProto"]}, TEXT_004),
    _Job("text-0.0.4", {"scrape_protocols": ["PrometheusText0.0.4"]}, TEXT_004),
    _Job(
        "text-1.0.0", {"scrape_protocols": ["PrometheusText1.0.0"]}, TEXT_100.format("allow-utf-8")
    ),
    _Job("om-0.0.1", {"scrape_protocols": ["OpenMetricsText0.0.1"]}, TEXT_004),
    _Job("om-2.0.0", {"scrape_protocols": ["OpenMetricsText2.0.0"]}, TEXT_004),
    _Job(
        "om-1.0.0-underscores",
        {
            "scrape_protocols": ["OpenMetricsText1.0.0"],
            "metric_name_escaping_scheme": "underscores",
        },
        OM_100.format("underscores"),
    ),
    _Job(
        "text-1.0.0-dots",
        {"scrape_protocols": ["PrometheusText1.0.0"], "metric_name_escaping_scheme": "dots"},
        TEXT_100.format("dots"),
    ),
]


def _accept_of(job: _Job) -> str:
    protocols = tuple(job.options.get("scrape_protocols", DEFAULT_PROTOCOLS))  # type: ignore[arg-type]
    return prometheus_accept(
        protocols, str(job.options.get("metric_name_escaping_scheme", "allow-utf-8"))
    )


def _recording(exporter: Exporter, job: _Job) -> None:
    """Record the ``Accept`` each scrape of ``exporter`` sent and the Content-Type it got."""
    assert exporter.http is not None
    route = exporter.http.routes["/metrics"]

    def handler(request: Request) -> Response:
        response = route.handler(request)
        job.seen.append((request.headers.get("accept"), response.content_type))
        return response

    exporter.http.routes["/metrics"] = Route(handler, blocking=True)


@pytest.fixture(scope="module")
def scraped() -> Iterator[tuple[str, list[_Job]]]:
    """A Prometheus 3 that has scraped one exporter per job at least twice; its URL."""
    workdir = Path(tempfile.mkdtemp(prefix="obsgen-negotiation-"))
    backends = [default_fake() for _ in JOBS]
    prometheus: PrometheusProcess | None = None
    try:
        configs = []
        for job, backend in zip(JOBS, backends, strict=True):
            job.exporter = Exporter(backend, host="127.0.0.1", port=0, init_backoff=(0.01, 0.05))
            job.exporter.start()
            _recording(job.exporter, job)
            target = f"127.0.0.1:{job.exporter.port}"
            configs.append(
                {"job_name": job.name, "static_configs": [{"targets": [target]}], **job.options}
            )
        config = {"global": {"scrape_interval": "1s", "scrape_timeout": "1s"}}
        prometheus = PrometheusProcess(workdir, {**config, "scrape_configs": configs}).start()
        _wait(lambda: all(len(j.seen) >= 2 for j in JOBS), "two scrapes of every job")
        yield prometheus.url, JOBS
    finally:
        if prometheus is not None:
            prometheus.stop()
        for job, backend in zip(JOBS, backends, strict=True):
            backend.release()
            if job.exporter is not None:
                job.exporter.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _wait(condition: Callable[[], object], what: str, timeout_s: float = 60.0) -> None:
    end = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def _query(url: str, expr: str) -> float | None:
    body = requests.get(f"{url}/api/v1/query", params={"query": expr}, timeout=5).json()
    result = body["data"]["result"]
    return float(result[0]["value"][1]) if result else None


@pytest.mark.parametrize("job", JOBS, ids=[j.name for j in JOBS])
def test_prometheus_3_scrapes_the_exporter_with_every_scrape_protocol(
    scraped: tuple[str, list[_Job]], job: _Job
) -> None:
    url, _ = scraped
    assert {accept for accept, _ in job.seen} == {_accept_of(job)}
    assert {content_type for _, content_type in job.seen} == {job.expected}
    _wait(lambda: _query(url, f'up{{job="{job.name}"}}') == 1, f"{job.name} up")
    targets = requests.get(f"{url}/api/v1/targets", timeout=5).json()["data"]["activeTargets"]
    (target,) = [t for t in targets if t["labels"]["job"] == job.name]
    assert (target["health"], target["lastError"]) == ("up", "")
    name = "gpu__device__up" if job.name.endswith("-dots") else "gpu_device_up"
    assert _query(url, f'count({name}{{job="{job.name}"}})') == 8
