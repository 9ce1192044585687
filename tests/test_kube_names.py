"""Every spec value that lands in a manifest obeys the rule Kubernetes applies to that field,
and `obsgen check` says which field broke it and what was expected: the namespace (a DNS-1123
label), pod label keys and values, the metrics port name. The manifests repeat the check on
what reaches them, so a plan built past the spec cannot write an object the API refuses."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import core, kube_names
from generator.builders import overlay
from generator.cli import main
from generator.errors import ObsgenError
from generator.render import load_plans

from .factories import good_spec, set_path, write_spec

# Tables of the rules as Kubernetes states them (apimachinery pkg/util/validation), the
# boundaries of each: length, first and last character, the character class.
LABELS_GOOD = ["a", "0", "a-1", "1--a--b--2", "a" * 63]
LABELS_BAD = ["", "A", "aBc", "-a", "a-", "a_b", "a.b", "a b", "é", "a" * 64, "a;b", "a\nb"]
SUBDOMAINS_GOOD = ["a", "a.b.c", "a--1.b", "0.1", "a" * 253, "a." * 126 + "a"]
SUBDOMAINS_BAD = ["", "a..b", ".a", "a.", "A.a", "a.-b", "a-.b", "a_b", "a" * 254, "a/b"]
VALUES_GOOD = ["", "a", "A", "a.b", "a_b", "a-b", "0", "A" * 63]
VALUES_BAD = ["-a", "a-", ".a", "_a", "a b", "a/b", "é", "a" * 64, "a;b", "a$b"]
KEYS_GOOD = ["a", "app.kubernetes.io/name", "a.b/C_d", "x" * 63, "a" * 253 + "/" + "b" * 63]
KEYS_BAD = ["", "/a", "a/", "a/b/c", "A.b/c", "a..b/c", "-a/b", "a/-b", "a" * 64, "a b"]
PORTS_GOOD = ["metrics", "a", "http-metrics", "a1", "1a", "a" * 15, "a-b-c"]
PORTS_BAD = ["", "1234", "A", "a--b", "-a", "a-", "a_b", "a" * 16, "a.b", "a b"]


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        pytest.param(kube_names.dns1123_label, LABELS_GOOD, LABELS_BAD, id="DNS-1123 label"),
        pytest.param(
            kube_names.dns1123_subdomain, SUBDOMAINS_GOOD, SUBDOMAINS_BAD, id="DNS-1123 subdomain"
        ),
        pytest.param(kube_names.label_value, VALUES_GOOD, VALUES_BAD, id="label value"),
        pytest.param(kube_names.label_key, KEYS_GOOD, KEYS_BAD, id="label key"),
        pytest.param(kube_names.port_name, PORTS_GOOD, PORTS_BAD, id="port name"),
    ],
)
def test_each_rule_accepts_and_refuses_what_kubernetes_does(
    check: Callable[[str], str | None], good: list[str], bad: list[str]
) -> None:
    assert {value: check(value) for value in good} == dict.fromkeys(good)
    assert [value for value in bad if check(value) is None] == []


def test_the_reported_namespace_is_refused_at_check_naming_field_and_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = set_path(good_spec(), "spec.selector.namespace", "llm;touch /tmp/x")
    write_spec(tmp_path / "specs", data)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "specs/x.yaml"]) == 2
    err = capsys.readouterr().err
    assert (
        "specs/x.yaml: spec.selector.namespace: 'llm;touch /tmp/x' is not a Kubernetes namespace "
        "(holds ';', ' ', '/'); expected a DNS-1123 label: at most 63 of a-z, 0-9 and '-', "
        "starting and ending with a letter or digit (e.g. llm-serving)"
    ) in err
    assert "Traceback" not in err


FIELDS = [
    *(
        pytest.param(
            "spec.selector.namespace", value, "spec.selector.namespace", id=f"ns {value!r}"
        )
        for value in ["LLM", "-llm", "llm-", "llm_serving", "llm.serving", "ns" * 32, "é", "a:b"]
    ),
    *(
        pytest.param(
            "spec.deployment.podLabels", {key: "x"}, f"spec.deployment.podLabels.{key}", id=key
        )
        for key in ["a..b/x", "A.b/x", "x/y/z", "/x", "a/", "x" * 64, "b@d", "-a/b"]
    ),
    *(
        pytest.param(
            "spec.deployment.podLabels",
            {"app": value},
            "spec.deployment.podLabels.app",
            id=f"label value {value!r}",
        )
        for value in ["v" * 64, "a b", "-a", "a-", "é", "a;b", "$(x)"]
    ),
    *(
        pytest.param("spec.deployment.metricsPort", value, "spec.deployment.metricsPort", id=value)
        for value in ["a--b", "-ab", "ab-", "1234", "METRICS", "m" * 16, "a_b"]
    ),
]


@pytest.mark.parametrize(("field", "value", "path"), FIELDS)
def test_every_manifest_value_is_refused_at_check_with_its_path(
    field: str,
    value: object,
    path: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_spec(tmp_path / "specs", set_path(good_spec(), field, value))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "specs/x.yaml"]) == 2
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith(f"specs/x.yaml: {path}: "), err
    assert "expected" in first
    assert "Traceback" not in err


def test_values_at_the_edge_of_each_rule_render_manifests_the_api_accepts(
    tmp_path: Path,
) -> None:
    """63-character namespace and label values, a 253-character key prefix, a 15-character
    port name: accepted, and every manifest carries them as Kubernetes reads them."""
    namespace = "n" + "-" * 61 + "s"
    key = "a" * 253 + "/" + "b" * 63
    data = good_spec()
    set_path(data, "spec.selector.namespace", namespace)
    set_path(data, "spec.deployment.podLabels", {key: "V" * 63, "tier": ""})
    set_path(data, "spec.deployment.metricsPort", "m-1-2-3-4-5-6-7")
    (plan,) = load_plans([write_spec(tmp_path / "specs", data)], tmp_path)
    outputs = core.build([plan])
    manifests = {p: t for p, t in outputs.items() if p.startswith("manifests/o1-preview/")}
    assert len(manifests) >= 5
    for path, text in manifests.items():
        obj = yaml.safe_load(text)
        assert overlay.name_problems(path, obj) == [], path
        assert obj["metadata"]["namespace"] == namespace, path
    monitor = yaml.safe_load(manifests["manifests/o1-preview/podmonitor-model.yaml"])
    assert monitor["spec"]["selector"]["matchLabels"] == {key: "V" * 63, "tier": ""}
    assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "m-1-2-3-4-5-6-7"


@pytest.mark.parametrize(
    ("change", "where"),
    [
        pytest.param({"namespace": "llm;touch /tmp/x"}, "metadata.namespace", id="namespace"),
        pytest.param({"namespace": "LLM"}, "spec.namespaceSelector.matchNames[0]", id="matchNames"),
        pytest.param({"name": "x" * 64}, "metadata.labels.obsgen/service", id="a long name"),
    ],
)
def test_a_plan_built_past_the_spec_cannot_write_a_refused_manifest(
    tmp_path: Path, change: dict[str, Any], where: str
) -> None:
    (plan,) = load_plans([write_spec(tmp_path / "specs", good_spec())], tmp_path)
    with pytest.raises(ObsgenError) as caught:
        core.build([dataclasses.replace(plan, **change)])
    found = {d.path for d in caught.value.diagnostics}
    assert where in found, found
    assert all("refused by the API server" in d.message for d in caught.value.diagnostics)
