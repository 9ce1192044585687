"""One promtool proof stands for the services renamed from one shape (generator/proof_transfer.py)
only when nothing in the files can tell two names apart; the render then tests one copy and
records the proof for every copy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator import proof_transfer
from generator.cli import main
from generator.proof_transfer import carries_over
from tests.helpers_promtool import logging_promtool

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = {"o1-preview", "llama3-70b", "mistral-7b", "triton-trtllm"}

RULES = """\
groups:
- name: g
  rules:
  - alert: A
    expr: {expr}
    labels: {{severity: page}}
    annotations: {{summary: '{summary}'}}
"""
TESTS = """\
rule_files: [r.yaml]
tests:
- input_series:
  - series: 'up{{job="chat-a1", status="500"}}'
    values: 0x5
  alert_rule_test:
  - {{alertname: A, eval_time: 5m, exp_alerts: [{{exp_labels: {{job: chat-a1}}}}]}}
"""


def _files(expr: str, summary: str = "{{ $labels.job }} is down") -> list[str]:
    return [RULES.format(expr=expr, summary=summary), TESTS.format()]


@pytest.mark.parametrize("service", sorted(EXAMPLES))
def test_the_example_services_proofs_carry_over_to_their_copies(service: str) -> None:
    texts = [p.read_text(encoding="utf-8") for p in (REPO / "rules").glob(f"{service}.*")]
    assert len(texts) >= 2
    assert carries_over(texts, service)


@pytest.mark.parametrize(
    ("expr", "summary", "carries"),
    [
        ('up{job="chat-a1"} == 0', "{{ $labels.job }} is down", True),
        ('up{status=~"5.."} == 0', "down", True),  # a regex on a label no name is in
        ('up{job=~"chat-.*"} == 0', "down", False),  # `chat-a1` matches, `aaaa-a0` does not
        ('up{job!~"chat-a.*"} == 0', "down", False),
        ('label_replace(up, "x", "$1", "job", "(.+)") == 0', "down", True),
        ('label_replace(up, "x", "$1", "job", "chat-(.+)") == 0', "down", False),
        ('label_replace(up, "x", "$1", "job", "(.+)") unless up{x=~"c.*"}', "down", False),
        ('sort_by_label(up, "job") == 0', "down", False),
        ('up{job="chat-a1"} == 0', "{{ $labels.job | toUpper }} is down", False),
        ('up{job="chat-a1"} == 0', '{{ reReplaceAll "a" "b" $labels.job }}', False),
        ('up{job="chat-a1"} == 0', "{{ $value | humanizePercentage }} down", True),
    ],
)
def test_only_a_verdict_no_name_can_change_carries_over(
    expr: str, summary: str, carries: bool
) -> None:
    assert carries_over(_files(expr, summary), "chat-a1") is carries


def test_unreadable_files_never_carry_over() -> None:
    assert not carries_over(["groups: [unclosed"], "chat-a1")
    assert not carries_over(_files('label_replace(up, "x", "$1", "job", f("(.+)"))'), "chat-a1")


SPEC = """\
apiVersion: obsgen/v1alpha1
kind: ModelService
metadata: {{name: {name}, team: t}}
spec:
  server: openai-http
  selector: {{namespace: ns, job: {name}}}
  alerts:
    errorRatio: {{maxRatio: 0.05, for: 5m}}
    latencyP99: {{enabled: false}}
    slowRequests: {{enabled: false}}
  deployment: {{name: {name}, container: {name}}}
"""
NAMES = ["small-a1", "small-b2", "small-c3"]


def _tested(log: Path) -> set[str]:
    """The services whose test files promtool tested, by name."""
    found = set()
    for line in log.read_text().splitlines():
        if line.startswith("test rules"):
            found.update(n for n in NAMES if f"{n}." in line)
    return found


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "specs").mkdir(parents=True)
    for name in NAMES:
        (repo / "specs" / f"{name}.yaml").write_text(SPEC.format(name=name), encoding="utf-8")
    return repo


def test_one_copys_proof_stands_for_every_copy_of_a_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = logging_promtool(tmp_path, monkeypatch)
    repo = _repo(tmp_path)
    assert main(["render", "--out", str(repo), str(repo / "specs")]) == 0
    assert _tested(log) == {"small-a1"}
    checked = [line for line in log.read_text().splitlines() if line.startswith("check rules")]
    assert all("small-b2" not in line and "small-c3" not in line for line in checked)

    # Every copy's proof was recorded: with the outputs gone, nothing is tested again.
    shutil.rmtree(repo / "rules")
    log.write_text("")
    assert main(["render", "--out", str(repo), str(repo / "specs")]) == 0
    assert _tested(log) == set()


def test_copies_whose_files_could_tell_names_apart_are_each_proved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = logging_promtool(tmp_path, monkeypatch)
    monkeypatch.setattr(proof_transfer, "carries_over", lambda texts, name: False)
    repo = _repo(tmp_path)
    assert main(["render", "--out", str(repo), str(repo / "specs")]) == 0
    assert _tested(log) == set(NAMES)
