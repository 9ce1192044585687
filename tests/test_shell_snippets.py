"""Every value a runbook's shell snippet interpolates is one shell word: no value can end it,
start a second command or expand, even one that bypassed the spec's validation (a plan built
directly). The snippets run in the real bash with kubectl, curl and amtool stubbed."""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from generator.builders import overlay
from generator.builders.runbooks import ALERTS, runbook_outputs, service_runbook_outputs
from generator.plan import ServicePlan
from generator.render import load_plans
from generator.text import TEMPLATES_DIR, shell_word

from .factories import good_spec, set_path, write_spec

SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.S)
INTERPOLATION = re.compile(r"\[\[(.*?)\]\]", re.S)
SET_BLOCK = re.compile(r"\[% set (\w+) %\](.*?)\[% endset %\]", re.S)
STUBBED = ("kubectl", "curl", "amtool")
# What the on-call fills in before running a snippet: <pod>, <node>, <silence-id>, <ticket>…
PLACEHOLDER = re.compile(r"<([a-z][a-z-]*)>")


def _sh_blocks(text: str) -> list[str]:
    return SH_BLOCK.findall(text)


@pytest.mark.parametrize(
    "template", sorted(p.name for p in (TEMPLATES_DIR / "runbooks").glob("*.md.j2"))
)
def test_every_value_in_a_shell_block_of_a_template_is_quoted(template: str) -> None:
    """Structural: inside ```sh, every ``[[ … ]]`` ends in ``| sh``; a ``[% set %]`` block
    may assemble a word from raw values only when it is then written ``[[ name | sh ]]``."""
    text = (TEMPLATES_DIR / "runbooks" / template).read_text()
    for block in _sh_blocks(text):
        assembled = {name for name, _ in SET_BLOCK.findall(block)}
        outside = SET_BLOCK.sub("", block)
        for expression in INTERPOLATION.findall(outside):
            assert re.search(r"\|\s*sh\s*$", expression), (template, expression)
            used = expression.split("|")[0].strip()
            assembled.discard(used)
        assert not assembled, f"{template}: {assembled} assembled but never quoted"


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> ServicePlan:
    """A valid plan with every family the templates know (GPU sidecar, a cluster label)."""
    root = tmp_path_factory.mktemp("spec")
    data = set_path(good_spec(), "spec.prometheus", {"clusterLabel": "cluster"})
    (found,) = load_plans([write_spec(root / "specs", data)], root)
    return found


def _hostile(plan: ServicePlan, payload: str) -> ServicePlan:
    """``plan`` with ``payload`` in every value a snippet interpolates."""
    assert plan.install is not None
    install = dataclasses.replace(
        plan.install,
        pod_labels=((f"app{payload}", f"v{payload}"),),
        metrics_port=f"p{payload}",
        metrics_path=f"/m{payload}",
    )
    return dataclasses.replace(
        plan,
        name=f"svc{payload}",
        namespace=f"ns{payload}",
        deployment_name=f"dep{payload}",
        container=f"c{payload}",
        cluster_label=f"cl{payload}",
        install=install,
    )


def _stubs(folder: Path, log: Path) -> dict[str, str]:
    """An environment whose kubectl, curl and amtool only record their arguments, each call
    in a file of its own under ``log`` (commands of one pipeline run at once: appends to one
    file could interleave)."""
    folder.mkdir()
    log.mkdir()
    for name in STUBBED:
        stub = folder / name
        stub.write_text(
            f'#!/bin/sh\nprintf "%s\\0" {name} "$@" > "$(mktemp "{log}/call.XXXXXX")"\n'
        )
        stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{folder}:{os.environ['PATH']}", "USER": "tester", "HOME": str(folder)}


PAYLOADS = [
    pytest.param(";touch {mark}", id="semicolon"),
    pytest.param("$(touch {mark})", id="command substitution"),
    pytest.param("`touch {mark}`", id="backquotes"),
    pytest.param("';touch {mark};'", id="single quotes"),
    pytest.param('";touch {mark};"', id="double quotes"),
    pytest.param("\ntouch {mark}\n", id="newlines"),
    pytest.param("|touch {mark}", id="a pipe"),
    pytest.param("&&touch {mark}", id="and"),
    pytest.param("&touch {mark}&", id="background"),
    pytest.param(">{mark}", id="a redirection"),
    pytest.param(" <(touch {mark})", id="process substitution"),
    pytest.param("\\';touch {mark};#", id="an escaped quote and a comment"),
    pytest.param("${{IFS}}touch${{IFS}}{mark}", id="IFS"),
    pytest.param("'\"'\"';touch {mark};'", id="quote closing quote"),
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_no_snippet_runs_a_second_command_whatever_the_plan_holds(
    plan: ServicePlan, payload: str, tmp_path: Path
) -> None:
    mark = tmp_path / "pwned"
    value = payload.format(mark=mark)
    hostile = _hostile(plan, value)
    pages = {**service_runbook_outputs(hostile), **runbook_outputs([hostile])}
    assert len(pages) > len(ALERTS)  # the service's own pages, and every alert's
    log = tmp_path / "calls"
    env = _stubs(tmp_path / "bin", log)
    work = tmp_path / "work"
    work.mkdir()
    ran = 0
    for path, page in sorted(pages.items()):
        for block in _sh_blocks(page):
            done = subprocess.run(
                ["bash", "-c", PLACEHOLDER.sub(r"filled-\1", block)],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            assert "syntax error" not in done.stderr, (path, block, done.stderr)
            ran += 1
    assert ran > 40
    assert not mark.exists(), "a snippet ran the payload as a command"
    assert not list(work.iterdir()), "a snippet redirected into a file"
    calls = [f.read_text().split("\0")[:-1] for f in sorted(log.iterdir())]
    namespaces = [args[args.index("-n") + 1] for args in calls if "-n" in args]
    assert namespaces and set(namespaces) == {f"ns{value}"}
    selectors = [args[args.index("-l") + 1] for args in calls if "-l" in args]
    assert selectors and set(selectors) == {f"app{value}=v{value}"}
    containers = [args[args.index("-c") + 1] for args in calls if "-c" in args]
    assert f"c{value}" in containers
    assert ["amtool", "silence", "add", "alertname=ModelTargetDown", f"service=svc{value}"] in [
        c[:5] for c in calls
    ]


@pytest.mark.parametrize(
    ("value", "word"),
    [
        pytest.param("llm-serving", "llm-serving", id="a namespace stays as it is"),
        pytest.param("app.kubernetes.io/name=x,b=c", "app.kubernetes.io/name=x,b=c", id="selector"),
        pytest.param("a b", "'a b'", id="a space"),
        pytest.param("it's", "'it'\"'\"'s'", id="a single quote"),
        pytest.param("", "''", id="empty"),
        pytest.param(8000, "8000", id="a number"),
        pytest.param("é", "'é'", id="non-ASCII"),
    ],
)
def test_shell_words_are_deterministic_and_minimal(value: object, word: str) -> None:
    assert shell_word(value) == word


def test_the_apply_command_in_a_manifest_header_takes_its_path_as_one_word() -> None:
    """The headers' `kubectl apply -f <file>` too (a path is a repository path, but quoted all
    the same)."""
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}}
    text, _ = overlay._manifest("manifests/a b;c/x.yaml", obj, ["specs/x.yaml"], lambda _: None)
    assert "Use: kubectl apply -n <grafana namespace> -f 'manifests/a b;c/x.yaml'" in text
