"""``obsgen verify`` against the suite's real Prometheus (the healthy service's targets, its
bundle loaded) and Alertmanager, and against two more Prometheus servers scraping the same
targets: one without the bundle (keeping 10 days), one with an old copy of it; and an
Alertmanager whose team receivers are placeholders."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import naming
from generator.builders.alertmanager import config_text
from generator.cli import main
from generator.receivers import EMPTY
from tests.alertmanager_server import AlertmanagerServer, find_alertmanager
from tests.e2e.e2e_clock import EVALUATION_INTERVAL_S, SCRAPE_INTERVAL_S
from tests.e2e.e2e_env import MODEL_SPEC, Env, scrape_jobs, spec_data
from tests.e2e.e2e_prometheus import PrometheusServer, find_prometheus, free_port

pytestmark = pytest.mark.e2e


def _write(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / f"{data['metadata']['name']}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def _verify(
    e2e: Env, spec: str, capsys: pytest.CaptureFixture[str], *more: str, url: str = ""
) -> tuple[int, str]:
    e2e.warmed_up("healthy")  # every series of the healthy service exists
    url = url or e2e.prometheus.url
    code = main(["verify", spec, "--prometheus-url", url, "--timeout", "10", *more])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _rows(out: str, check: str) -> list[str]:
    return [line for line in out.splitlines() if f"  {check}  " in line]


def _old_copy(text: str) -> str:
    """The healthy service's rule file as an older bundle had it: one alert waited longer,
    and the fleet group did not exist yet."""
    doc = yaml.safe_load(text)
    doc["groups"] = [g for g in doc["groups"] if not g["name"].endswith(".fleet")]
    traffic = next(g for g in doc["groups"] if g["name"].endswith(".traffic"))
    alert = next(r for r in traffic["rules"] if "alert" in r)
    alert["for"] = "59m"
    return yaml.safe_dump(doc)


@pytest.fixture(scope="module")
def others(e2e: Env, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """URLs of a Prometheus without the bundle (keeping 10 days), one with an old copy of it,
    and an Alertmanager of placeholder receivers; all stopped after the module."""
    binary, am_binary = find_prometheus(), find_alertmanager()
    assert binary and am_binary
    folder = tmp_path_factory.mktemp("verify-servers")
    jobs = scrape_jobs(e2e.services["healthy"])
    old = folder / "old.rules.yaml"
    old.write_text(_old_copy(e2e.outputs[naming.rules_file("e2e-healthy")]), encoding="utf-8")
    servers = {name: PrometheusServer(binary, folder / name) for name in ("bare", "old")}
    alertmanager = AlertmanagerServer(am_binary, folder / "am")
    with contextlib.ExitStack() as stack:
        for server in servers.values():
            server.workdir.mkdir()
            stack.callback(server.stop)
        alertmanager.workdir.mkdir()
        stack.callback(alertmanager.stop)
        with ThreadPoolExecutor(max_workers=3) as starting:
            started = [
                starting.submit(
                    servers["bare"].start, jobs, [], None, ["--storage.tsdb.retention.time=10d"]
                ),
                starting.submit(
                    servers["old"].start, jobs, [old], None, ["--storage.tsdb.retention.time=30d"]
                ),
                starting.submit(
                    alertmanager.start, config_text([e2e.services["healthy"].plan], EMPTY)
                ),
            ]
            for future in started:
                future.result()
        for server in servers.values():  # scraped once, as the suite's Prometheus is
            server.wait_targets_up()
        yield {"bare": servers["bare"].url, "old": servers["old"].url, "am": alertmanager.url}


def test_a_spec_that_matches_the_server_passes(
    e2e: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _verify(e2e, _write(tmp_path, spec_data(MODEL_SPEC, "e2e-healthy")), capsys)
    assert code == 0, out
    assert "0 failed" in out
    # the fake is a client_python server: whole bounds are spelled 1.0, as Prometheus 3 does
    assert "le: 0.05, 0.1, 0.25, 0.5, 1.0, 2.5" in out
    assert "scraped every" not in out  # the spec's interval is the one the targets report
    assert "1 pods owned by Deployment/e2e-healthy" in out  # via kube_pod_owner → ReplicaSet
    rules = _rows(out, "rules")
    assert len(rules) >= 7 and all(" ok " in line and "identical" in line for line in rules), out
    (retention,) = _rows(out, "retention")
    assert " ok " in retention and "server keeps 30d" in retention, retention


def test_a_prometheus_without_the_bundle_fails_naming_the_missing_groups(
    e2e: Env, others: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _write(tmp_path, spec_data(MODEL_SPEC, "e2e-healthy"))
    code, out = _verify(e2e, spec, capsys, url=others["bare"])
    assert code == 1, out
    (rules,) = _rows(out, "rules")
    assert " missing " in rules and "none of the service's" in rules, rules
    for group in ("traffic", "memory", "slo.availability", "fleet"):
        assert f"obsgen.e2e-healthy.{group}" in rules, rules
    assert "helm/values-e2e-healthy.yaml" in rules  # what to change
    # or the selectors leave it out: render checks those when obsgen.yaml declares them
    assert "ruleSelector" in rules and "install: in obsgen.yaml" in rules, rules


def test_a_prometheus_keeping_less_than_the_slo_window_fails(
    e2e: Env, others: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _write(tmp_path, spec_data(MODEL_SPEC, "e2e-healthy"))
    code, out = _verify(e2e, spec, capsys, url=others["bare"])
    assert code == 1, out
    (retention,) = _rows(out, "retention")
    assert " wrong " in retention and "window 30d" in retention, retention
    assert "keeps 10d" in retention and "--storage.tsdb.retention.time=30d" in retention


def test_a_prometheus_with_an_old_copy_fails_naming_the_differing_group(
    e2e: Env, others: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _write(tmp_path, spec_data(MODEL_SPEC, "e2e-healthy"))
    code, out = _verify(e2e, spec, capsys, url=others["old"])
    assert code == 1, out
    by_group = {line.split()[3]: line for line in _rows(out, "rules")}
    traffic = by_group["obsgen.e2e-healthy.traffic"]
    assert " wrong " in traffic and "differs from the rendered group" in traffic, traffic
    assert "for 59m loaded" in traffic, traffic
    fleet = by_group["obsgen.e2e-healthy.fleet"]
    assert " missing " in fleet and "not loaded" in fleet, fleet
    assert " ok " in by_group["obsgen.e2e-healthy.memory"]
    (retention,) = _rows(out, "retention")
    assert " ok " in retention


def test_alerts_reach_the_teams_receivers_in_the_running_alertmanager(
    e2e: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _write(tmp_path, spec_data(MODEL_SPEC, "e2e-healthy"))
    code, out = _verify(e2e, spec, capsys, "--alertmanager-url", e2e.alertmanager.url)
    assert code == 0, out
    routing = _rows(out, "routing")
    assert routing and all(" ok " in line for line in routing), out
    assert any("reaches e2e-page" in line for line in routing), routing
    assert any("reaches e2e-ticket" in line for line in routing), routing


def test_an_alertmanager_of_placeholder_receivers_fails(
    e2e: Env, others: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _write(tmp_path, spec_data(MODEL_SPEC, "e2e-healthy"))
    code, out = _verify(e2e, spec, capsys, "--alertmanager-url", others["am"])
    assert code == 1, out
    routing = _rows(out, "routing")
    assert routing and all(" wrong " in line for line in routing), routing
    assert "delivers nowhere" in routing[0] and "receivers.yaml" in routing[0], routing[0]


def test_pods_not_attributed_are_reported(
    e2e: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No target and no owner series for this workload: nothing attributes a pod to it.
    data = spec_data(MODEL_SPEC, "e2e-nowhere")
    code, out = _verify(e2e, _write(tmp_path, data), capsys)
    assert code == 1, out
    line = next(line for line in out.splitlines() if " pods " in line)
    assert " missing " in line and "pods not attributed" in line, line
    assert "Deployment/e2e-nowhere" in line, line


def test_pods_owned_by_another_workload_are_reported(
    e2e: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The healthy service's targets, but deployment.name names the latency scenario's workload.
    data = spec_data(MODEL_SPEC, "e2e-healthy")
    data["spec"]["deployment"]["name"] = "e2e-latency"
    code, out = _verify(e2e, _write(tmp_path, data), capsys)
    assert code == 1, out
    line = next(line for line in out.splitlines() if " pods " in line)
    assert " wrong " in line and "not owned by Deployment/e2e-latency" in line, line


def test_a_wrong_bucket_and_a_missing_metric_fail(
    e2e: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = spec_data(MODEL_SPEC, "e2e-healthy")
    metrics = data["spec"]["metrics"]
    metrics["requestDuration"]["buckets"] = [0.05, 0.1, 0.25, 0.3, 1, 2.5, 5, 10, 20, 30, 60, 120]
    data["spec"]["alerts"]["slowRequests"]["threshold"] = "300ms"
    metrics["queueDepth"]["name"] = "inference_queue_length"
    code, out = _verify(e2e, _write(tmp_path, data), capsys)
    assert code == 1, out
    lines = out.splitlines()
    assert any("inference_queue_length{" in line and " missing " in line for line in lines), out
    assert any("spec buckets not on the server: 0.3" in line for line in lines), out
    assert any(
        "spec.alerts.slowRequests.threshold" in line and "0.3s is not a bucket" in line
        for line in lines
    ), out


def test_a_window_shorter_than_four_real_scrape_intervals_fails(
    e2e: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The spec claims scrapes four times as frequent as they are, so a short window of one
    # evaluation passes check; the targets report the real interval.
    window = f"{EVALUATION_INTERVAL_S:g}s"
    data = spec_data(MODEL_SPEC, "e2e-healthy")
    data["spec"]["slos"][0]["alerting"] = {
        "tiers": [
            {"budget": 0.02, "longWindow": "1h", "shortWindow": window, "severity": "critical"}
        ]
    }
    data["spec"]["prometheus"]["scrapeInterval"] = f"{SCRAPE_INTERVAL_S * 1000 / 4:g}ms"
    code, out = _verify(e2e, _write(tmp_path, data), capsys)
    assert code == 1, out
    assert f"slo availability shortWindow {window} shorter than 4 × {SCRAPE_INTERVAL_S:g}s" in out


def test_an_unreachable_server_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code = main(["verify", _write(tmp_path, spec_data(MODEL_SPEC)), "--prometheus-url", url])
    err = capsys.readouterr().err
    assert code == 2
    assert f"cannot connect to Prometheus at {url}" in err
