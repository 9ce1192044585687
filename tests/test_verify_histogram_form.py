"""``obsgen verify`` reports the form each latency histogram is stored in (issue 43, "guards
say which form is missing"), against a real Prometheus 3 (tests/toolchain.py) on 127.0.0.1
scraping one real classic text exposition (prometheus_client, as vLLM and SGLang serve it) as
three jobs: ``classic`` as is, ``conv`` with ``convert_classic_histograms_to_nhcb: true``
(NHCB: native samples, no ``_bucket`` series) and ``mig`` converted while
``always_scrape_classic_histograms: true`` keeps the classic series too (a migration).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator import verify
from generator.prometheus_api import PrometheusAPI
from generator.render import load_plans
from generator.verify import Status
from tests.factories import write_spec
from tests.prometheus_process import PrometheusProcess
from tests.test_histogram_forms import SPEC
from tests.test_histogram_forms_nhcb import HIST, _query, _Server

WAIT_S = 60.0
JOBS = {
    "classic": {},
    "conv": {"convert_classic_histograms_to_nhcb": True},
    "mig": {"convert_classic_histograms_to_nhcb": True, "always_scrape_classic_histograms": True},
}


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusProcess]:
    exposition = _Server()
    exposition.feeder.start()
    target = {"targets": [f"127.0.0.1:{exposition.port}"], "labels": {"namespace": "llm"}}
    config = {
        "global": {"scrape_interval": "1s"},
        "scrape_configs": [
            {"job_name": job, **extra, "static_configs": [target]} for job, extra in JOBS.items()
        ],
    }
    server = PrometheusProcess(tmp_path_factory.mktemp("prom"), config).start()
    try:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and not (
            _query(server, f'{HIST}{{job="conv"}}')
            and _query(server, f'{HIST}{{job="mig"}}')
            and _query(server, f'{HIST}_bucket{{job="classic"}}')
        ):
            time.sleep(0.5)
        yield server
    finally:
        server.stop()
        exposition.stop()


def _row(server: PrometheusProcess, tmp_path: Path, job: str, form: str) -> verify.Row:
    data = copy.deepcopy(SPEC)
    data["spec"]["selector"]["job"] = job
    data["spec"]["metrics"]["requestDuration"]["histogram"] = form
    (plan,) = load_plans([write_spec(tmp_path, data, "lat.yaml")], tmp_path)
    report = verify._Report(plan, PrometheusAPI(server.url, timeout_s=5))
    verify._forms(report)
    (row,) = report.rows
    assert row.check == "histogram form" and row.subject.startswith(HIST)
    return row


@pytest.mark.parametrize(
    ("job", "form", "status", "says"),
    [
        ("classic", "classic", Status.OK, "server holds classic"),
        ("conv", "nhcb", Status.OK, "server holds native"),
        ("mig", "both", Status.OK, "server holds both"),
        ("mig", "classic", Status.OK, "server holds both"),
        ("classic", "both", Status.OK, "native missing"),
        ("conv", "both", Status.OK, "classic missing"),
        ("conv", "classic", Status.WRONG, "the classic _bucket series are missing"),
        ("classic", "nhcb", Status.WRONG, "the native samples are missing"),
        ("classic", "native", Status.WRONG, "the native samples are missing"),
    ],
)
def test_verify_names_the_form_it_sees_and_what_is_missing(
    prometheus: PrometheusProcess, tmp_path: Path, job: str, form: str, status: Status, says: str
) -> None:
    row = _row(prometheus, tmp_path, job, form)
    assert row.status is status, row.detail
    assert f"spec says {form}" in row.detail and says in row.detail, row.detail


def test_a_histogram_in_neither_form_is_wrong(
    prometheus: PrometheusProcess, tmp_path: Path
) -> None:
    row = _row(prometheus, tmp_path, "absent", "classic")
    assert row.status is Status.WRONG and "holds neither form" in row.detail, row.detail
