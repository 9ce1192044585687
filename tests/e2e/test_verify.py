"""``obsgen verify`` against the suite's real Prometheus (the healthy service's targets)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.cli import main
from tests.e2e.e2e_env import MODEL_SPEC, Env, spec_data
from tests.e2e.e2e_prometheus import free_port

pytestmark = pytest.mark.e2e


def _write(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / f"{data['metadata']['name']}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def _verify(e2e: Env, spec: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    e2e.warmed_up("healthy")  # every series of the healthy service exists
    code = main(["verify", spec, "--prometheus-url", e2e.prometheus.url, "--timeout", "5"])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_spec_that_matches_the_server_passes(
    e2e: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _verify(e2e, _write(tmp_path, spec_data(MODEL_SPEC, "e2e-healthy")), capsys)
    assert code == 0, out
    assert "0 failed" in out
    # the fake is a client_python server: whole bounds are spelled 1.0, as Prometheus 3 does
    assert "le: 0.05, 0.1, 0.25, 0.5, 1.0, 2.5" in out
    assert "scraped every" not in out  # spec says 1s, as the targets report
    assert "1 pods owned by Deployment/e2e-healthy" in out  # via kube_pod_owner → ReplicaSet


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
    # The spec claims 250ms scrapes, so a 1s short window resolves; the targets say 1s.
    data = spec_data(MODEL_SPEC, "e2e-healthy")
    data["spec"]["slos"][0]["alerting"] = {
        "tiers": [{"budget": 0.02, "longWindow": "1h", "shortWindow": "1s", "severity": "critical"}]
    }
    data["spec"]["prometheus"]["scrapeInterval"] = "250ms"
    code, out = _verify(e2e, _write(tmp_path, data), capsys)
    assert code == 1, out
    assert "slo availability shortWindow 1s shorter than 4 × 1s" in out


def test_an_unreachable_server_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code = main(["verify", _write(tmp_path, spec_data(MODEL_SPEC)), "--prometheus-url", url])
    err = capsys.readouterr().err
    assert code == 2
    assert f"cannot connect to Prometheus at {url}" in err
