"""Fuzzing specs (issue 15): no input gives a traceback, and whatever ``obsgen check`` accepts
``obsgen render`` renders (check ≡ render).

* raw: any bytes, and the committed spec's text mutated (characters inserted, lines cut,
  nesting and aliases added): ``obsgen check`` exits 0 or 2, never 70 (internal error);
* structured: the committed spec with 1–3 fields set to hostile values (edge numbers,
  durations, escapes, reserved labels, RE2/Python-only regexes …): when ``check`` accepts it,
  every output builds and every rule file passes ``promtool check rules``; a few accepted
  one (forty under ``make fuzz``) also passes its generated ``promtool test rules``.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import assume, event, given
from hypothesis import strategies as st

from generator import core, promtool
from generator.cli import main
from generator.core.prove import promtool_problems
from generator.errors import EXIT_INTERNAL_ERROR, ObsgenError
from generator.render import load_plans
from tests import fuzzing
from tests.factories import good_spec, set_path

BASE_TEXT = (Path(__file__).resolve().parent.parent / "specs" / "o1-preview.yaml").read_text()


def _check_exit(text: bytes, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.yaml"
        path.write_bytes(text)
        capsys.readouterr()
        code = main(["check", str(path)])
    return code, capsys.readouterr().err


def _no_crash(code: int, err: str) -> None:
    assert code in (0, 2), err
    assert code != EXIT_INTERNAL_ERROR and "Traceback" not in err, err


# --- raw ---------------------------------------------------------------------------------------


@fuzzing.budget(60)
@given(data=st.binary(max_size=2000))
def test_any_bytes_are_a_clean_check(data: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    _no_crash(*_check_exit(data, capsys))


def _mutate(text: str, data: st.DataObject) -> str:
    lines = text.splitlines(keepends=True)
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["insert", "delete", "duplicate", "nest", "alias", "int"]))
        at = data.draw(st.integers(0, len(lines) - 1))
        if kind == "insert":
            line = lines[at]
            col = data.draw(st.integers(0, len(line)))
            junk = data.draw(
                st.sampled_from(
                    [
                        "[",
                        "{",
                        "&a ",
                        "*a",
                        ":",
                        "- ",
                        "'",
                        '"',
                        "!!python/object ",
                        "\t",
                        "\x1b",
                        "<<: *a\n",
                        "? ",
                    ]
                )
            )
            lines[at] = line[:col] + junk + line[col:]
        elif kind == "delete":
            del lines[at]
        elif kind == "duplicate":
            lines.insert(at, lines[at])
        elif kind == "nest":
            depth = data.draw(st.sampled_from([1, 10, 31, 33, 100, 600]))
            lines.append("extra: " + "[" * depth + "]" * depth + "\n")
        elif kind == "alias":
            fan = data.draw(st.integers(1, 12))
            levels = data.draw(st.integers(1, 5))
            lines.append("x0: &x0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n")
            for i in range(1, levels + 1):
                lines.append(f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * fan) + "]\n")
        else:
            digits = data.draw(st.sampled_from([19, 20, 21, 400, 5000]))
            lines.insert(at, f"big{at}: {'9' * digits}\n")
        if not lines:
            lines = ["\n"]
    return "".join(lines)


@fuzzing.budget(60)
@given(data=st.data())
def test_a_mutated_spec_is_a_clean_check(
    data: st.DataObject, capsys: pytest.CaptureFixture[str]
) -> None:
    _no_crash(*_check_exit(_mutate(BASE_TEXT, data).encode(), capsys))


# --- structured --------------------------------------------------------------------------------

SLO_FIELDS = {
    "name": fuzzing.texts(),
    "objective": fuzzing.numbers(),
    "window": fuzzing.durations(),
    "indicator": st.sampled_from(["requestDuration", "e2e", "ttft", "itl", "x"]),
    "threshold": fuzzing.durations(),
    "alerting": st.fixed_dictionaries(
        {},
        optional={
            "minEvents": fuzzing.numbers(),
            "tiers": st.lists(
                st.fixed_dictionaries(
                    {
                        "budget": fuzzing.numbers(),
                        "longWindow": fuzzing.durations(),
                        "shortWindow": fuzzing.durations(),
                        "severity": st.sampled_from(["critical", "warning", "page"]),
                    }
                ),
                max_size=3,
            ),
        },
    ),
}

FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "metadata.name": fuzzing.texts(),
    "metadata.team": fuzzing.texts(),
    "metadata.runbookBaseUrl": st.one_of(fuzzing.texts(), st.just("https://x/{{a}}")),
    "spec.server": st.sampled_from(
        ["vllm", "sglang", "trtllm", "tgi", "triton", "openai-http", "x"]
    ),
    "spec.serverVersion": st.sampled_from(["0.11", "0.6.0", "99", "1.2.3.4", "x"]),
    "spec.selector": fuzzing.label_maps(fuzzing.texts()),
    "spec.selector.job": fuzzing.texts(),
    "spec.groupBy": st.lists(fuzzing.label_names(), max_size=10),
    "spec.prometheus.version": st.sampled_from(["2", "3", "compat", 2, 3]),
    "spec.prometheus.scrapeInterval": fuzzing.durations(),
    "spec.prometheus.evaluationInterval": fuzzing.durations(),
    "spec.prometheus.clusterLabel": fuzzing.label_names(),
    "spec.prometheus.retention": fuzzing.durations(),
    "spec.metrics.requestDuration.buckets": st.lists(fuzzing.numbers(), max_size=8).map(
        lambda b: [*sorted(x for x in b if isinstance(x, int | float)), 30]
    ),
    "spec.metrics.requestDuration.name": fuzzing.texts(),
    "spec.metrics.requests.errorMatchers": fuzzing.label_maps(fuzzing.regexes()),
    "spec.metrics.requests.errorMatchers.status": fuzzing.regexes(),
    "spec.metrics.queueDepth.selector": fuzzing.label_maps(fuzzing.texts()),
    "spec.slos[0].objective": fuzzing.numbers(),
    "spec.slos[0].window": fuzzing.durations(),
    "spec.slos[1].threshold": fuzzing.durations(),
    "spec.slos[0].alerting": SLO_FIELDS["alerting"],
    "spec.slos[2]": st.fixed_dictionaries(
        {"name": st.just("extra")}, optional={k: v for k, v in SLO_FIELDS.items() if k != "name"}
    ),
    "spec.alerts.latencyP99.threshold": fuzzing.durations(),
    "spec.alerts.latencyP99.for": fuzzing.durations(),
    "spec.alerts.slowRequests.maxRatio": fuzzing.numbers(),
    "spec.alerts.slowRequests.minEvents": fuzzing.numbers(),
    "spec.alerts.errorRatio.maxRatio": fuzzing.numbers(),
    "spec.alerts.errorRatio.minEvents": fuzzing.numbers(),
    "spec.alerts.queueDepth.max": fuzzing.numbers(),
    "spec.alerts.memoryHeadroom.minFree": fuzzing.numbers(),
    "spec.alerts.memoryExhaustion": st.fixed_dictionaries(
        {}, optional={"horizon": fuzzing.durations(), "lookback": fuzzing.durations()}
    ),
    "spec.alerts.gpuTemperature.max": fuzzing.numbers(),
    "spec.alerts.gpuMemoryHeadroom.minFree": fuzzing.numbers(),
    "spec.alerts.targetDown.for": fuzzing.durations(),
    "spec.alerts.gpuDeviceLost.for": fuzzing.durations(),
    "spec.alerts.gpuExporterDown.for": fuzzing.durations(),
    "spec.alerts.replicasUnavailable.for": fuzzing.durations(),
    "spec.alerts.signalMissing.for": fuzzing.durations(),
    "spec.gpu.selector": fuzzing.label_maps(fuzzing.texts()),
    "spec.deployment.replicas": fuzzing.numbers(),
    "spec.deployment.memoryLimit": st.one_of(fuzzing.numbers(), fuzzing.texts(), st.just("1000Pi")),
    "spec.deployment.name": fuzzing.texts(),
    "spec.deployment.container": fuzzing.texts(),
}


@st.composite
def hostile_specs(draw: st.DrawFn) -> dict[str, Any]:
    """The committed o1-preview spec with 1–3 fields set to hostile values."""
    data = good_spec()
    for path in draw(st.lists(st.sampled_from(sorted(FIELDS)), min_size=1, max_size=3)):
        value = draw(
            st.one_of(FIELDS[path], fuzzing.anything())
            if draw(st.integers(0, 9)) == 0
            else FIELDS[path]
        )
        if path.startswith("spec.slos[2]"):
            data["spec"]["slos"].append(value)
            continue
        set_path(data, path, copy.deepcopy(value))
    return data


def _accepted(data: dict[str, Any], root: Path) -> list[Any] | None:
    spec = root / "specs" / "x.yaml"
    spec.parent.mkdir(parents=True, exist_ok=True)
    spec.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    try:
        return load_plans([spec], root)
    except ObsgenError:
        return None


@fuzzing.budget(30)
@given(hostile_specs())
def test_what_check_accepts_builds_and_passes_promtool_check(data: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plans = _accepted(data, root)
        event("accepted by check" if plans else "refused by check")
        if plans is None:
            return
        outputs = core.build(plans)  # raises (a failing test) where check should have refused
        rules = sorted(p for p in outputs if p.endswith(".rules.yaml"))
        for rel in rules:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(outputs[rel], encoding="utf-8")
        result = promtool.check_rules([root / r for r in rules], rules)
        assert result.ok, result.output


@fuzzing.budget(1)
@given(hostile_specs())
def test_what_check_accepts_passes_its_generated_promtool_tests(data: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        plans = _accepted(data, Path(tmp))
        assume(plans is not None)  # refusals are cheap: draw until check accepts one
        assert plans is not None
        problems = promtool_problems(core.build(plans))
        assert not problems, "\n".join(str(p) for p in problems)
