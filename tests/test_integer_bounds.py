"""Every integer that reaches Alertmanager or Prometheus is bounded at `obsgen check` to what
its consumer loads, with the field path: at the bound the real amtool and promtool load the
rendered files, one past it `check` (and `render`) refuse it before anything is written."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import amtool, core, promtool
from generator.builders.alertmanager import CONFIG_FILE
from generator.cli import main
from generator.receivers import MAX_INT32, MAX_PORT, RECEIVERS_FILE, parse_receivers
from generator.render import load_plans

from .factories import good_spec, set_path, write_spec

RECEIVERS: dict[str, Any] = {
    "apiVersion": "obsgen/v1alpha1",
    "kind": "AlertReceivers",
    "teams": [
        {
            "name": "ml-platform",
            "page": [{"webhook": {"url": "https://hooks.example.com/page", "maxAlerts": 5}}],
            "ticket": [
                {
                    "email": {
                        "to": "ml@example.com",
                        "from": "am@example.com",
                        "smarthost": "smtp.example.com:587",
                    }
                }
            ],
        }
    ],
}


def _project(root: Path, receivers: dict[str, Any], spec: dict[str, Any] | None = None) -> None:
    write_spec(root / "specs", spec or good_spec())
    (root / "alertmanager").mkdir(parents=True, exist_ok=True)
    (root / RECEIVERS_FILE).write_text(yaml.safe_dump(receivers, sort_keys=False))


def _receivers(path: str, value: object) -> dict[str, Any]:
    return set_path(copy.deepcopy(RECEIVERS), path, value)


MAX_ALERTS = "teams[0].page[0].webhook.maxAlerts"
SMARTHOST = "teams[0].ticket[0].email.smarthost"


def test_the_reported_max_alerts_is_refused_by_check_and_render_with_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It passed `render --skip-promtool` and wrote an Alertmanager config that does not load;
    a full render failed with amtool's raw text."""
    _project(tmp_path, _receivers(MAX_ALERTS, 99999999999999999999))
    monkeypatch.chdir(tmp_path)
    expected = (
        f"{RECEIVERS_FILE}: {MAX_ALERTS}: 99999999999999999999 is out of range; expected 0 "
        "(every alert in one message) to 2147483647: the AlertmanagerConfig resource keeps "
        "maxAlerts in an int32"
    )
    assert main(["check"]) == 2
    assert expected in capsys.readouterr().err
    assert main(["render", "--skip-promtool", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert "amtool" not in err
    assert not (tmp_path / CONFIG_FILE).exists()


def _amtool_loads(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "alertmanager.yaml"
    path.write_text(text)
    return [d.message for d in amtool.check_config([path], [CONFIG_FILE])]


def _config(tmp_path: Path, receivers: dict[str, Any]) -> dict[str, str]:
    (plan,) = load_plans([write_spec(tmp_path / "specs", good_spec())], tmp_path)
    return core.build([plan], receivers=parse_receivers(receivers))


def test_max_alerts_at_its_bound_loads_and_the_reported_value_does_not(tmp_path: Path) -> None:
    outputs = _config(tmp_path, _receivers(MAX_ALERTS, MAX_INT32))
    config = outputs[CONFIG_FILE]
    assert f"max_alerts: {MAX_INT32}" in config
    assert _amtool_loads(tmp_path, config) == []
    crd = yaml.safe_load(outputs["manifests/o1-preview/alertmanagerconfig.yaml"])
    webhook = crd["spec"]["receivers"][0]["webhookConfigs"][0]
    assert webhook["maxAlerts"] == MAX_INT32  # the CRD's int32, at its maximum
    # What obsgen wrote before the bound: Alertmanager cannot load it.
    broken = config.replace(f"max_alerts: {MAX_INT32}", "max_alerts: 99999999999999999999")
    assert _amtool_loads(tmp_path, broken) != []


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        pytest.param(
            MAX_ALERTS, MAX_INT32 + 1, "2147483648 is out of range", id="maxAlerts int32+1"
        ),
        pytest.param(MAX_ALERTS, -1, "-1 is out of range", id="maxAlerts negative"),
        pytest.param(
            MAX_ALERTS, 10**400, "an integer of 401 characters", id="maxAlerts of 401 digits"
        ),
        pytest.param(SMARTHOST, "smtp.example.com:65536", "port 65536 is out of range", id="port"),
        pytest.param(SMARTHOST, "smtp.example.com:0", "port 0 is out of range", id="port 0"),
        pytest.param("timing.page.repeatInterval", "3651d", "longer than 10y", id="repeatInterval"),
        pytest.param("timing.page.groupInterval", "0s", "is zero", id="groupInterval zero"),
    ],
)
def test_one_past_each_receivers_bound_is_refused_at_check(
    path: str,
    value: object,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _project(tmp_path, _receivers(path, value))
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if line.startswith(f"{RECEIVERS_FILE}: {path}"))
    assert message in line
    assert len(line) < 400  # a huge number is not echoed back whole
    assert "Traceback" not in err


def test_receivers_at_every_bound_load_in_the_real_amtool(tmp_path: Path) -> None:
    receivers = _receivers(MAX_ALERTS, MAX_INT32)
    set_path(receivers, SMARTHOST, f"smtp.example.com:{MAX_PORT}")
    receivers["timing"] = {
        "page": {"groupWait": "1ms", "groupInterval": "1ms", "repeatInterval": "10y"},
        "ticket": {"groupWait": "10y", "groupInterval": "10y", "repeatInterval": "10y"},
    }
    outputs = _config(tmp_path, receivers)
    assert _amtool_loads(tmp_path, outputs[CONFIG_FILE]) == []


# Each spec integer at its largest accepted value (within what the plan accepts together).
SPEC_MAXIMA = {
    "spec.deployment.replicas": 2**31 - 1,
    "spec.deployment.memoryLimit": "1Pi",
    "spec.deployment.metricsPort": 65535,
    "spec.prometheus.retention": "10y",
    "spec.prometheus.evaluationInterval": "5m",
    "spec.slos[0].window": "365d",
    "spec.slos[0].alerting.minEvents": 10**9,
    "spec.alerts.errorRatio.minEvents": 10**9,
    "spec.alerts.slowRequests.minEvents": 10**9,
    "spec.alerts.memoryExhaustion.horizon": "10y",
    "spec.alerts.memoryExhaustion.lookback": "6h",
    "spec.alerts.crashLoop.window": "6h",
    "spec.alerts.crashLoop.minRestarts": 358,
    "spec.alerts.targetDown.window": "6h",
    "spec.alerts.latencyP99.for": "6h",
    "spec.alerts.gpuTemperature.max": 150,
}


def test_spec_integers_at_their_bounds_load_in_the_real_promtool_and_amtool(
    tmp_path: Path,
) -> None:
    data = good_spec()
    for path, value in SPEC_MAXIMA.items():
        set_path(data, path, value)
    (plan,) = load_plans([write_spec(tmp_path / "specs", data)], tmp_path)
    outputs = core.build([plan])
    rules = tmp_path / "o1-preview.rules.yaml"
    rules.write_text(outputs["rules/o1-preview.rules.yaml"])
    result = promtool.check_rules([rules])
    assert result.ok, result.output
    text = rules.read_text()
    # the maxima reached the rules: 10y horizon in seconds, minEvents, 1Pi, int32 replicas, 6h
    for value in ("315360000", "1000000000", "1125899906842624", "2147483647", "[6h]", "358"):
        assert value in text, value
    assert _amtool_loads(tmp_path, outputs[CONFIG_FILE]) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        pytest.param("spec.deployment.replicas", 2**31, id="replicas int32+1"),
        pytest.param("spec.deployment.replicas", -1, id="replicas -1"),
        pytest.param("spec.deployment.memoryLimit", "1025Ti", id="memoryLimit over 1Pi"),
        pytest.param("spec.deployment.metricsPort", 65536, id="metricsPort"),
        pytest.param("spec.deployment.metricsPort", 0, id="metricsPort 0"),
        pytest.param("spec.prometheus.retention", "3651d", id="retention"),
        pytest.param("spec.prometheus.scrapeInterval", "0s", id="scrapeInterval 0"),
        pytest.param("spec.slos[0].window", "366d", id="SLO window"),
        pytest.param("spec.slos[0].alerting.minEvents", 10**9 + 1, id="SLO minEvents"),
        pytest.param("spec.alerts.errorRatio.minEvents", 10**9 + 1, id="alert minEvents"),
        pytest.param("spec.alerts.errorRatio.minEvents", 10**30, id="minEvents beyond int64"),
        pytest.param("spec.alerts.crashLoop.minRestarts", 1001, id="minRestarts"),
        pytest.param("spec.alerts.errorRatio.for", "6h1m", id="for"),
        pytest.param("spec.alerts.memoryExhaustion.horizon", "3651d", id="horizon"),
        pytest.param("spec.alerts.targetDown.window", "7h", id="window"),
        pytest.param("spec.alerts.latencyP99.threshold", "99999999999999999999d", id="threshold"),
    ],
)
def test_one_past_each_spec_bound_is_refused_at_check(
    path: str,
    value: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_spec(tmp_path / "specs", set_path(good_spec(), path, value))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "specs/x.yaml"]) == 2
    err = capsys.readouterr().err
    assert f"specs/x.yaml: {path}: " in err, err
    assert "Traceback" not in err
