"""Hostile values of the kinds a spec or ``receivers.yaml`` can carry, each refused at ``check``
naming the file and field, or rendered so that the output still loads (real amtool, YAML):
URLs with a port out of range, credentials, a confusable host, a bidi control, a character a
shell or template reads; Secret keys that leave their folder; label values with invisible
format characters; thresholds and targets beyond what Prometheus, KEDA or an HPA can hold."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import core, urls
from generator.builders.hpa import adapter_values
from generator.cli import main
from generator.errors import ObsgenError
from generator.receivers import parse_receivers
from generator.render import load_plans
from tests import toolchain
from tests.factories import REPO, good_spec, set_path, write_spec

SPEC = "specs/x.yaml"
ADDRESS = "http://prometheus-operated.monitoring.svc:9090"


def _check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: dict[str, Any]) -> str:
    write_spec(tmp_path / "specs", data)
    monkeypatch.chdir(tmp_path)
    return str(main(["check", SPEC]))


def _autoscaled(address: str, autoscaler: str = "keda", **auto: Any) -> dict[str, Any]:
    data = set_path(good_spec(), "spec.deployment.replicas", {"min": 1, "max": 4})
    target = {"queuePerReplica": 8, **auto}
    return set_path(
        data,
        "spec.autoscaling",
        {"autoscaler": autoscaler, "serverAddress": address, **target},
    )


BAD_URLS = [
    ("http://p:99999", "port '99999' is not a number from 1 to 65535"),
    ("http://p:0", "port '0' is not a number from 1 to 65535"),
    ("http://p:9090x", "port '9090x' is not a number from 1 to 65535"),
    ("http://bot:hunter2@p:9090", "carries credentials (user:password@)"),
    ("http://-p:9090", "host '-p': '-p' is not a DNS label"),
    ("http://ex\u0430mple.com", "U+0430 CYRILLIC SMALL LETTER A); write a host in punycode"),
    ("https://x.example/a\u202eb", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("https://x.example/a`id`", "holds '`'"),
    ("https://x.example/a\\b", "holds '\\\\'"),
    ("http://[::1:9090", "lacks its closing ']'"),
]


@pytest.mark.parametrize(("value", "why"), BAD_URLS, ids=[v for v, _ in BAD_URLS])
@pytest.mark.parametrize(
    "field", ["metadata.runbookBaseUrl", "metadata.grafanaUrl", "spec.autoscaling.serverAddress"]
)
def test_a_url_no_consumer_reads_alike_is_refused_at_check_naming_the_field(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    field: str,
    value: str,
    why: str,
) -> None:
    data = _autoscaled(ADDRESS) if field.startswith("spec.autoscaling") else good_spec()
    assert _check(tmp_path, monkeypatch, set_path(data, field, value)) == "2"
    err = capsys.readouterr().err
    assert f"{SPEC}: {field}: {value!r} is not a URL (" in err
    assert why in err
    assert "Traceback" not in err and "internal error" not in err


@pytest.mark.parametrize(("value", "why"), BAD_URLS, ids=[v for v, _ in BAD_URLS])
def test_a_receiver_url_no_consumer_reads_alike_is_refused_naming_the_field(
    value: str, why: str
) -> None:
    data = {
        "apiVersion": "obsgen/v1alpha1",
        "kind": "AlertReceivers",
        "teams": [
            {
                "name": "ml-platform",
                "page": [{"webhook": {"url": value}}],
                "ticket": [{"webhook": {"url": "https://tickets.example.com/ml"}}],
            }
        ],
    }
    with pytest.raises(ObsgenError) as raised:
        parse_receivers(data)
    [problem] = raised.value.diagnostics
    assert problem.path == "teams[0].page[0].webhook.url"
    assert why in problem.message


def test_an_autoscaler_address_with_a_query_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _autoscaled(ADDRESS + "/prom?tenant=a", "hpa")
    assert _check(tmp_path, monkeypatch, data) == "2"
    assert "spec.autoscaling.serverAddress: " in capsys.readouterr().err


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        (ADDRESS, {"url": "http://prometheus-operated.monitoring.svc", "port": 9090, "path": ""}),
        ("http://[fd00::1]:9090/prom", {"url": "http://[fd00::1]", "port": 9090, "path": "/prom"}),
        ("https://[fd00::1]", {"url": "https://[fd00::1]", "port": 443, "path": ""}),
    ],
)
def test_the_adapter_reads_the_address_it_was_given_ipv6_included(
    tmp_path: Path, address: str, expected: dict[str, Any]
) -> None:
    path = write_spec(tmp_path / "specs", _autoscaled(address, "hpa"))
    plans = load_plans([path], tmp_path)
    values = adapter_values(plans)
    assert values is not None and values["prometheus"] == expected


def test_edge_urls_that_pass_render_an_alertmanager_config_amtool_loads(tmp_path: Path) -> None:
    amtool = toolchain.binary("alertmanager", "amtool")
    accepted = [
        "https://[fd00::1]:8443/hook",
        "http://10.0.0.1:65535/a%20b?x=$y",
        "https://x.example./",
    ]
    assert [urls.problem(u) for u in accepted] == [None] * len(accepted)
    receivers = {
        "apiVersion": "obsgen/v1alpha1",
        "kind": "AlertReceivers",
        "teams": [
            {
                "name": "ml-platform",
                "page": [{"webhook": {"url": u}} for u in accepted],
                "ticket": [
                    {"opsgenie": {"apiKey": {"secret": "og", "key": "k"}, "apiURL": u}}
                    for u in accepted
                ],
            }
        ],
    }
    path = write_spec(tmp_path / "specs", good_spec())
    outputs = core.build(load_plans([path], tmp_path), receivers=parse_receivers(receivers))
    config = tmp_path / "alertmanager.yaml"
    config.write_text(outputs["alertmanager/alertmanager.yaml"])
    run = subprocess.run([amtool, "check-config", str(config)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("key", [".", "..", "..data", "..a.b"])
def test_a_secret_key_that_names_its_folder_or_parent_is_refused(key: str) -> None:
    data = {
        "apiVersion": "obsgen/v1alpha1",
        "kind": "AlertReceivers",
        "teams": [
            {
                "name": "ml-platform",
                "page": [{"pagerduty": {"routingKey": {"secret": "pd", "key": key}}}],
                "ticket": [{"webhook": {"url": "https://tickets.example.com/ml"}}],
            }
        ],
    }
    with pytest.raises(ObsgenError) as raised:
        parse_receivers(data)
    [problem] = raised.value.diagnostics
    assert problem.path == "teams[0].page[0].pagerduty.routingKey.key"
    assert "is not a Secret key Kubernetes accepts" in problem.message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("spec.selector.job", "chat\u202e"),
        ("spec.selector.job", "ch\u200bat"),
        ("spec.metrics.queueDepth.selector.job", "q\ufeffueue"),
        ("spec.gpu.selector.pool", "a\u00a0b"),
        ("spec.gpu.selector.pool", "a\u2028b"),
    ],
)
def test_an_invisible_character_in_a_label_value_is_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    field: str,
    value: str,
) -> None:
    assert _check(tmp_path, monkeypatch, set_path(good_spec(), field, value)) == "2"
    err = capsys.readouterr().err
    label = field.rpartition(".")[2]
    assert f"{SPEC}: {field.rpartition('.')[0]}: label {label}: " in err
    assert "U+" in err and "Traceback" not in err


def test_model_names_with_an_invisible_character_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = yaml.safe_load((REPO / "specs" / "llama3-70b-vllm.yaml").read_text())
    data = set_path(data, "spec.models", {"names": ["llama-8b", "qwen\u202e"]})
    assert _check(tmp_path, monkeypatch, data) == "2"
    assert f"{SPEC}: spec.models.names: " in capsys.readouterr().err


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("spec.alerts.queueDepth.max", 2**63),
        ("spec.alerts.queueDepth.max", 1e20),
        ("spec.alerts.preemptions.max", 1e308),
        ("spec.alerts.efficiencyRegression.minTokensPerSecond", 2**53 + 1),
    ],
)
def test_a_threshold_beyond_any_count_is_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    field: str,
    value: float,
) -> None:
    assert _check(tmp_path, monkeypatch, set_path(good_spec(), field, value)) == "2"
    assert f"{SPEC}: {field}: Input should be less than or equal to 1000000000" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("autoscaler", ["keda", "hpa"])
@pytest.mark.parametrize("target", [1e-300, 1e-4])
def test_a_target_below_what_keda_keeps_is_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    autoscaler: str,
    target: float,
) -> None:
    data = _autoscaled(ADDRESS, autoscaler, queuePerReplica=target)
    assert _check(tmp_path, monkeypatch, data) == "2"
    assert f"{SPEC}: spec.autoscaling.queuePerReplica: " in capsys.readouterr().err


TRAILING_NEWLINE = [
    "metadata.name",
    "metadata.team",
    "spec.slos[0].name",
    "spec.slos[0].description",
    "spec.deployment.name",
    "spec.deployment.container",
    "spec.gpu.image",
    "spec.gpu.claim",
    "spec.gpu.valuesPath",
    "spec.metrics.requests.name",
    "spec.prometheus.release",
    "spec.prometheus.version",
]


@pytest.mark.parametrize("field", TRAILING_NEWLINE)
def test_a_value_ending_in_a_newline_is_refused_at_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], field: str
) -> None:
    """Python's ``$`` also matches before a final newline: ``name: |`` in YAML gives
    ``chat\\n``, which reached manifests (refused at render), alert labels and the runbooks'
    shell snippets (``kubectl logs … -c vllm⏎ --since=15m`` runs as two commands)."""
    value = "3\n" if field.endswith("version") else "chat\n"
    assert _check(tmp_path, monkeypatch, set_path(good_spec(), field, value)) == "2"
    err = capsys.readouterr().err
    assert f"{SPEC}: {field}: " in err and "Traceback" not in err


@pytest.mark.parametrize(
    "path",
    [
        "teams[0].name",
        "teams[0].page[0].pagerduty.routingKey.key",
        "teams[0].page[0].pagerduty.routingKey.secret",
        "teams[0].ticket[0].slack.channel",
        "secretsDir",
    ],
)
def test_a_receivers_value_ending_in_a_newline_is_refused(path: str) -> None:
    data = {
        "apiVersion": "obsgen/v1alpha1",
        "kind": "AlertReceivers",
        "teams": [
            {
                "name": "ml-platform",
                "page": [{"pagerduty": {"routingKey": {"secret": "pd", "key": "ml"}}}],
                "ticket": [{"slack": {"apiURL": {"secret": "s", "key": "k"}, "channel": "#ml"}}],
            }
        ],
    }
    data = set_path(data, path, "/etc/x\n" if path == "secretsDir" else "ml-x\n")
    with pytest.raises(ObsgenError) as raised:
        parse_receivers(data)
    assert [d.path for d in raised.value.diagnostics] == [path]


@pytest.mark.parametrize(
    ("config", "path", "why"),
    [
        ("install:\n  commonLabels: {'a b': x}\n", "install.commonLabels.a b", "key"),
        ("install:\n  commonLabels: {team: '$(id)'}\n", "install.commonLabels.team", "value"),
        ('install:\n  commonLabels: {team: "a\\nb"}\n', "install.commonLabels.team", "value"),
    ],
)
def test_chart_labels_in_obsgen_yaml_are_kubernetes_labels(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    config: str,
    path: str,
    why: str,
) -> None:
    (tmp_path / "obsgen.yaml").write_text(config)
    assert _check(tmp_path, monkeypatch, good_spec()) == "2"
    err = capsys.readouterr().err
    assert f"obsgen.yaml: {path}: " in err and f"is not a Kubernetes label {why}" in err


@pytest.mark.parametrize("port", [0, -1, 65536, 2**31, 2**63])
def test_a_port_number_out_of_range_is_said_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], port: int
) -> None:
    data = set_path(good_spec(), "spec.deployment.metricsPort", port)
    assert _check(tmp_path, monkeypatch, data) == "2"
    assert (
        f"{SPEC}: spec.deployment.metricsPort: port {port} is out of range; expected 1 to 65535"
        in capsys.readouterr().err
    )
